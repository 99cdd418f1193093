// precompressor/rum-collector: receives what `precompressor/rum` posts and
// adds it up. One handler for the Fetch API (a Worker, Deno, Bun, Node 18+)
// and one for node:http; `GET` on the same path answers the totals as JSON.
//
// It keeps sums only: per asset kind and coding, responses and bytes, and
// the views they came from. A POST, like any request, reaches it with the
// visitor's IP address, User-Agent and Origin; the collector reads none of
// them and stores nothing per request (keep them out of your access log too).
// A body that is not a report (too large, not JSON, a kind or coding it does
// not know, a count that is no byte count) is refused whole, 400 or 413, and
// counted apart, so a forged report cannot skew the totals by more than the
// bounds below allow.

/** The kinds and codings precompressor/rum reports. */
const KINDS = ['document', 'script', 'style', 'other'];
const CODINGS = ['dcb', 'dcz', 'br', 'zstd', 'gzip', 'identity', 'cache', 'unknown'];
const FIELDS = ['n', 'transfer', 'body', 'file'];

/** A report's bounds: a page view posts a few hundred bytes. */
const MAX_BODY = 16 * 1024;
/** The most responses one view may report per kind and coding. */
const MAX_N = 100_000;
/** The most bytes one view may report per field. */
const MAX_BYTES = 2 ** 40;

/** The report `text` holds, or undefined when it is not one. */
export function parseReport(text) {
  let r;
  try {
    r = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!r || typeof r !== 'object' || Array.isArray(r) || r.v !== 1) return undefined;
  if (typeof r.sample !== 'number' || !(r.sample > 0 && r.sample <= 1)) return undefined;
  if (!r.kinds || typeof r.kinds !== 'object' || Array.isArray(r.kinds)) return undefined;
  const kinds = {};
  for (const [kind, codings] of Object.entries(r.kinds)) {
    if (!KINDS.includes(kind) || !codings || typeof codings !== 'object' || Array.isArray(codings)) return undefined;
    kinds[kind] = {};
    for (const [coding, sum] of Object.entries(codings)) {
      if (!CODINGS.includes(coding) || !sum || typeof sum !== 'object') return undefined;
      const out = {};
      for (const f of FIELDS) {
        const v = sum[f];
        const max = f === 'n' ? MAX_N : MAX_BYTES;
        if (!Number.isSafeInteger(v) || v < 0 || v > max) return undefined;
        out[f] = v;
      }
      kinds[kind][coding] = out;
    }
  }
  return { sample: r.sample, kinds };
}

/**
 * A collector. Options: `path` (default '/rum': what it answers; any other
 * path is a 404), `onReport(report)` (called with each accepted report, to
 * forward it to storage that outlives the process: a Worker's memory is
 * its isolate's, and isolates come and go). Returns `{ fetch, node,
 * totals }`: `fetch(request)` answers a Fetch API Request, `node(req, res)`
 * a node:http request, `totals()` the sums so far.
 */
export function createCollector({ path = '/rum', onReport } = {}) {
  const sums = {};
  let views = 0;
  // Views weighted by 1 / sample: an estimate of the views in all.
  let estimated = 0;
  let refused = 0;

  const add = (report) => {
    views += 1;
    estimated += 1 / report.sample;
    for (const [kind, codings] of Object.entries(report.kinds)) {
      for (const [coding, sum] of Object.entries(codings)) {
        const to = ((sums[kind] ??= {})[coding] ??= { n: 0, transfer: 0, body: 0, file: 0 });
        for (const f of FIELDS) to[f] += sum[f];
      }
    }
    onReport?.(report);
  };

  const totals = () => {
    // Of the bytes that crossed the network for scripts and styles, the
    // share that came as deltas: what deltas do for returning visitors.
    let delta = 0;
    let all = 0;
    for (const kind of ['script', 'style']) {
      for (const [coding, s] of Object.entries(sums[kind] ?? {})) {
        if (coding === 'cache') continue;
        all += s.file;
        if (coding === 'dcb' || coding === 'dcz') delta += s.file;
      }
    }
    return {
      v: 1,
      views,
      estimatedViews: Math.round(estimated),
      refused,
      kinds: structuredClone(sums),
      codeFileBytesAsDeltas: all ? delta / all : 0,
    };
  };

  /** What to answer `method` on `url` with the body `read()` gives (undefined past MAX_BODY). */
  const answer = async (method, url, read) => {
    if (new URL(url, 'http://collector').pathname !== path) return { status: 404 };
    if (method === 'GET' || method === 'HEAD') return { status: 200, json: totals() };
    if (method !== 'POST') return { status: 405, headers: { Allow: 'GET, HEAD, POST' } };
    const text = await read();
    if (text === undefined) {
      refused += 1;
      return { status: 413 };
    }
    const report = parseReport(text);
    if (!report) {
      refused += 1;
      return { status: 400 };
    }
    add(report);
    return { status: 204 };
  };

  const headersOf = (a) => ({
    'Cache-Control': 'no-store',
    ...(a.json ? { 'Content-Type': 'application/json' } : {}),
    ...(a.headers ?? {}),
  });

  async function fetch(request) {
    const a = await answer(request.method, request.url, async () => {
      const declared = Number(request.headers.get('content-length'));
      if (declared > MAX_BODY) return undefined;
      const reader = request.body?.getReader();
      if (!reader) return '';
      const chunks = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_BODY) {
          await reader.cancel();
          return undefined;
        }
        chunks.push(value);
      }
      const all = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.byteLength;
      }
      return new TextDecoder().decode(all);
    });
    const body = a.json && request.method === 'GET' ? JSON.stringify(a.json) : null;
    return new Response(body, { status: a.status, headers: headersOf(a) });
  }

  function node(req, res) {
    const read = () =>
      new Promise((resolve) => {
        const chunks = [];
        let size = 0;
        let over = false;
        req.on('data', (c) => {
          size += c.length;
          if (size > MAX_BODY) over = true;
          else chunks.push(c);
        });
        req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
        req.on('error', () => resolve(undefined));
      });
    answer(req.method, req.url, read).then((a) => {
      res.writeHead(a.status, headersOf(a));
      res.end(a.json && req.method === 'GET' ? JSON.stringify(a.json) : undefined);
    });
  }

  return { fetch, node, totals };
}
