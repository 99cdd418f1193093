// precompressor/rum: what real visitors got. `check --url` proves a deploy
// with one synthetic browser; this reports, from the visitors' own browsers,
// which coding each of the site's responses came in (dcb, dcz, br, zstd,
// gzip, identity; `cache` when no body crossed the network) and its bytes,
// from PerformanceResourceTiming. Only sums per asset kind leave the page:
// no URL, no user agent, no cookie (credentials: 'omit'), no identifier.
//
// `rum` is self-contained (it reads nothing from this module's scope) so that
// docs/rum.md's copy-paste <script> is its source text; a test holds the two
// equal.

/**
 * Starts reporting for this page: with probability `sample`, once, when the
 * page is hidden or left, POSTs the report as JSON to `endpoint`. Returns the
 * function that sends it (to send earlier), or undefined when not sampled.
 */
export function rum(endpoint, sample = 0.1, w = globalThis) {
  if (!(Math.random() < sample) || typeof w.fetch !== 'function') return undefined;
  const kindOf = (e, path) => {
    if (e.entryType === 'navigation') return 'document';
    if (/\.m?js$/.test(path) || e.initiatorType === 'script') return 'script';
    if (/\.css$/.test(path)) return 'style';
    return 'other';
  };
  // contentEncoding is '' for an uncompressed response and missing where the
  // browser does not report it (then `unknown`, not a guess).
  const codingOf = (e) => {
    // Nothing but headers crossed: from the cache (transferSize 0), or
    // revalidated (a 304, which Chromium reports as the stored 200 with its
    // 300-byte header estimate alone, where a fetched body adds to it).
    const headersOnly = e.encodedBodySize > 0
      && (e.transferSize === 300 || e.transferSize < e.encodedBodySize);
    if (e.transferSize === 0 || e.responseStatus === 304 || headersOnly) return 'cache';
    if (typeof e.contentEncoding !== 'string') return 'unknown';
    return e.contentEncoding || 'identity';
  };
  const report = () => {
    const kinds = {};
    const perf = w.performance;
    const entries = perf.getEntriesByType('navigation').concat(perf.getEntriesByType('resource'));
    for (const e of entries) {
      const url = new URL(e.name, w.location.href);
      // The site's own files only: another origin's sizes are hidden without
      // Timing-Allow-Origin, and they are not this deploy's; nor are errors
      // (the favicon.ico a browser asks for by itself).
      const own = url.origin === w.location.origin && url.href !== new URL(endpoint, w.location.href).href;
      if (!own || e.responseStatus >= 400) continue;
      const kind = (kinds[kindOf(e, url.pathname)] ??= {});
      const sum = (kind[codingOf(e)] ??= { n: 0, transfer: 0, body: 0, file: 0 });
      sum.n += 1;
      sum.transfer += e.transferSize;
      sum.body += e.encodedBodySize;
      sum.file += e.decodedBodySize;
    }
    return { v: 1, sample, kinds };
  };
  let sent = false;
  const send = () => {
    if (sent) return;
    sent = true;
    // keepalive outlives the page; no-cors needs no preflight from the
    // collector; sendBeacon is not used because it always sends cookies.
    w.fetch(endpoint, {
      method: 'POST',
      body: JSON.stringify(report()),
      keepalive: true,
      credentials: 'omit',
      mode: 'no-cors',
    }).catch(() => {});
  };
  w.addEventListener('pagehide', send);
  w.addEventListener('visibilitychange', () => {
    if (w.document.visibilityState === 'hidden') send();
  });
  return send;
}
