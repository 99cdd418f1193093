// What a server of precompress's output decides, with no I/O: the manifest
// checked and indexed, the representation a request gets (RFC 9110 §12.5.3
// negotiation, RFC 9842 deltas), its headers, conditionals, ranges, request
// paths, and the router (route, answer) that puts them together over a lookup
// of the files. A port of the Rust crate's `serve` module (src/serve/mod.rs,
// negotiate.rs, path.rs, route.rs, answer.rs), held to it by the rule tables
// of fixtures/ and the shared table fixtures/serve-cases.json; no Node API, so
// the Node handler (serve.js, a lookup over the disk) and the Cloudflare
// Worker (worker.js, a lookup over the manifest and the ASSETS binding) both
// route through it and share no routing code of their own.

export const CACHE_IMMUTABLE = 'public, max-age=31536000, immutable';
export const CACHE_REVALIDATE = 'no-cache';
/** A page's Cache-Control for a navigation that keeps it as a dictionary (model::manifest::CACHE_PAGE_KEPT). */
export const CACHE_PAGE_KEPT = 'private, max-age=0, stale-while-revalidate=2592000';
const CACHING = new Map([['immutable', CACHE_IMMUTABLE], ['revalidate', CACHE_REVALIDATE], ['page', CACHE_REVALIDATE]]);
/** The most comma-separated parts of Accept-Encoding that are read. */
const MAX_PARTS = 64;
const VARIANT_TOKENS = new Set(['br', 'zstd', 'gzip']);
const DELTA_TOKENS = new Set(['dcb', 'dcz']);
/** model::dictionary::shared_kind's code dictionary: `precompress-dictionary-` and 16 hex digits. */
const SHARED_CODE = /(^|\/)precompress-dictionary-[0-9a-f]{16}\.(js|txt)$/;
/** model::dictionary::DEFERRED_CACHE_CONTROL. */
export const CACHE_DEFERRED = 'no-store';

// ---------------------------------------------------------------- the manifest

/** Why a manifest cannot be served; names the manifest. */
export class ManifestError extends Error {
  constructor(origin, detail) {
    super(`${origin}: invalid manifest: ${detail}`);
    this.name = 'ManifestError';
  }
}

/**
 * Checks and indexes a parsed manifest, as the Rust `Index::from_manifest`:
 * every key stays under the folder, every variant or delta has the one name
 * precompress gives it (siblingPath), every coding is one precompress writes,
 * every header value is printable ASCII, ETags are strong and distinct.
 * `origin` names the manifest in errors.
 */
export function indexManifest(origin, m) {
  const bad = (detail) => new ManifestError(origin, detail);
  if (!m || typeof m !== 'object' || m.version !== 1 || typeof m.files !== 'object' || m.files === null) {
    throw bad('not a version 1 precompress manifest');
  }
  let base = '/';
  if (m.base != null) {
    if (typeof m.base !== 'string' || normalizeBase(m.base) !== m.base) throw bad(`base ${JSON.stringify(m.base)} is not a path like /app/`);
    base = m.base;
  }
  const dictionaries = [];
  for (const field of ['shared_dictionary', 'documents_dictionary']) {
    const k = m[field];
    if (k == null) continue;
    if (!Object.hasOwn(m.files, k)) throw bad(`${field} ${JSON.stringify(k)} is not one of its files`);
    dictionaries.push(k);
  }
  const assets = new Map();
  for (const [key, asset] of Object.entries(m.files)) assets.set(key, entryOf(key, asset, bad));
  // model::dictionary::deferred_without_dictionary: the code dictionary,
  // asked by Chromium holding no dictionary, is a 204 (see select).
  const shared = m.shared_dictionary == null ? undefined : assets.get(m.shared_dictionary);
  if (shared && shared.deltas.length && SHARED_CODE.test(m.shared_dictionary)) shared.deferred = true;
  const index = { assets, base, dictionaries };
  setBase(index, base);
  return index;
}

/** Serves `index` under `base` (normalized) instead of the manifest's: the Link on pages follows. */
export function setBase(index, base) {
  index.base = base;
  const urls = index.dictionaries.map((k) => urlOf(base, k));
  const link = urls.length ? urls.map((u) => `<${u}>; rel="compression-dictionary"`).join(', ') : undefined;
  for (const e of index.assets.values()) e.link = e.contentType.startsWith('text/html') ? link : undefined;
}

function entryOf(key, a, bad) {
  const what = `file ${JSON.stringify(key)}`;
  const pathErr = checkRelative(key);
  if (pathErr) throw bad(`${what}: ${pathErr}`);
  if (!a || typeof a !== 'object') throw bad(`${what}: not an object`);
  if (!isHeaderValue(a.content_type)) throw bad(`${what}: content_type is not a header value`);
  if (!isStrongEtag(a.etag)) throw bad(`${what}: etag is not a strong entity-tag`);
  if (!Number.isSafeInteger(a.size) || a.size < 0) throw bad(`${what}: size is not a byte count`);
  const variants = [];
  for (const v of a.encodings ?? []) {
    if (!VARIANT_TOKENS.has(v.coding)) throw bad(`${what}: unknown coding ${JSON.stringify(v.coding)}`);
    if (variants.some((r) => r.coding === v.coding)) throw bad(`${what}: coding ${v.coding} listed twice`);
    // The path is data from disk: only the variant's own name may be sent.
    const own = siblingPath(key, v.coding);
    if (v.path !== own) throw bad(`${what}: ${v.coding} variant path ${JSON.stringify(v.path)} is not ${JSON.stringify(own)}, the only name of its ${v.coding} variant`);
    if (!isStrongEtag(v.etag)) throw bad(`${what}: ${v.coding} etag is not a strong entity-tag`);
    variants.push({ coding: v.coding, delta: false, path: v.path, size: v.size, etag: v.etag, blake3: v.blake3 });
  }
  const deltas = [];
  for (const d of a.deltas ?? []) {
    const dw = `${what}: ${d.coding} delta ${JSON.stringify(d.path)}`;
    if (!DELTA_TOKENS.has(d.coding)) throw bad(`${what}: unknown delta coding ${JSON.stringify(d.coding)}`);
    const dict = parseAvailableDictionary(d.dictionary);
    if (dict === undefined) throw bad(`${dw}: dictionary is not a base64 SHA-256 between colons`);
    const own = siblingPath(key, d.coding, dict);
    if (d.path !== own) throw bad(`${dw}: is not ${JSON.stringify(own)}, the only name of its ${d.coding} delta against that dictionary`);
    if (!isStrongEtag(d.etag)) throw bad(`${dw}: etag is not a strong entity-tag`);
    if (deltas.some((x) => x.dictionary === dict && x.coding === d.coding)) throw bad(`${dw}: listed twice`);
    deltas.push({ coding: d.coding, delta: true, dictionary: dict, path: d.path, size: d.size, etag: d.etag, blake3: d.blake3 });
  }
  if (a.use_as_dictionary != null && !isHeaderValue(a.use_as_dictionary)) throw bad(`${what}: use_as_dictionary is not a header value`);
  // Decided by the run (model::manifest::Caching); absent in a manifest older than the field.
  const cacheControl = CACHING.get(a.cache === undefined ? 'revalidate' : a.cache);
  // serde's words, so both servers refuse it alike (fixtures/hostile-manifests.json).
  if (cacheControl === undefined) throw bad(`unknown variant \`${a.cache}\`, expected one of \`immutable\`, \`revalidate\`, \`page\` (file ${JSON.stringify(key)})`);
  const etags = [a.etag, ...variants.map((r) => r.etag), ...deltas.map((r) => r.etag)].sort();
  for (let i = 1; i < etags.length; i++) {
    if (etags[i] === etags[i - 1]) throw bad(`${what}: two of its representations have the etag ${etags[i]}`);
  }
  // Stable sorts, as Rust's sort_by_key: equal sizes keep the manifest's order.
  variants.sort((x, y) => x.size - y.size);
  deltas.sort((x, y) => x.size - y.size);
  return {
    contentType: a.content_type,
    identity: { coding: undefined, delta: false, path: key, size: a.size, etag: a.etag, blake3: a.blake3 },
    blake3: a.blake3,
    variants,
    deltas,
    useAsDictionary: a.use_as_dictionary ?? undefined,
    cacheControl,
    page: a.cache === 'page',
    link: undefined,
    deferred: false,
  };
}

const SUFFIXES = new Map([['br', 'br'], ['zstd', 'zst'], ['gzip', 'gz']]);

/**
 * The one path a manifest may list for the variant in `coding` of the asset
 * at `key` (`KEY.br`, `KEY.zst`, `KEY.gz`), or for its delta in `coding`
 * against `dictionary` (the base64 SHA-256, as parseAvailableDictionary
 * gives it: `KEY.HEX.dcb`, `KEY.HEX.dcz`): model::names::sibling_path,
 * held to it by fixtures/sibling-names.json.
 */
export function siblingPath(key, coding, dictionary) {
  if (dictionary === undefined) return `${key}.${SUFFIXES.get(coding)}`;
  const hex = Array.from(atob(dictionary), (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  return `${key}.${hex}.${coding}`;
}

function isHeaderValue(s) {
  return typeof s === 'string' && s.length > 0 && /^[\t\x20-\x7e]+$/.test(s);
}

function isStrongEtag(s) {
  return typeof s === 'string' && /^"[\x21\x23-\x7e]*"$/.test(s);
}

/** `:base64:` of 32 bytes, as the canonical base64 string; undefined when it is not one. */
export function parseAvailableDictionary(value) {
  if (typeof value !== 'string') return undefined;
  const v = value.replace(/^[ \t]+|[ \t]+$/g, '');
  if (v.length > 46) return undefined;
  const m = /^:([A-Za-z0-9+/]{43}=):$/.exec(v);
  if (!m) return undefined;
  // The last character's low bits must be zero, as a strict decoder requires.
  const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.indexOf(m[1][42]);
  return last % 4 === 0 ? m[1] : undefined;
}

// --------------------------------------------------------------- negotiation

/** Accept-Encoding as [token, weight in thousandths] in header order, first listing of each. */
export function parseAcceptEncoding(header) {
  const entries = [];
  for (const part of header.split(',').slice(0, MAX_PARTS)) {
    const p = parsePart(part);
    if (p && !entries.some(([t]) => t === p[0])) entries.push(p);
  }
  return entries;
}

function parsePart(part) {
  const pieces = part.split(';');
  const token0 = pieces[0].replace(/^[ \t]+|[ \t]+$/g, '');
  if (!token0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(token0)) return undefined;
  let token = token0.toLowerCase();
  if (token === 'x-gzip') token = 'gzip';
  let weight = 1000;
  if (pieces.length > 1) {
    const param = pieces[1].replace(/^[ \t]+|[ \t]+$/g, '');
    const eq = param.indexOf('=');
    if (eq < 0) return undefined;
    const name = param.slice(0, eq).replace(/[ \t]+$/, '');
    if (name.toLowerCase() !== 'q') return undefined;
    weight = parseQvalue(param.slice(eq + 1).replace(/^[ \t]+/, ''));
    if (weight === undefined) return undefined;
  }
  if (pieces.length > 2) return undefined;
  return [token, weight];
}

function parseQvalue(s) {
  const m = /^([01])(?:\.([0-9]{0,3}))?$/.exec(s);
  if (!m) return undefined;
  const frac = Number((m[2] ?? '').padEnd(3, '0'));
  if (m[1] === '0') return frac;
  return frac === 0 ? 1000 : undefined;
}

const named = (ae, token) => ae.find(([t]) => t === token)?.[1];

/** A coding's weight: its own entry, else `*`'s (variants only: a delta must be named). */
function weightOf(ae, token, delta) {
  const own = named(ae, token);
  if (own !== undefined) return own;
  return delta ? 0 : named(ae, '*') ?? 0;
}

/**
 * The representation of `entry` for `acceptEncoding` (undefined: no header)
 * and `availableDictionary` (the raw header value, undefined when absent):
 * `{ representation, headers }`, `{ notAcceptable: true, headers }` (406),
 * or `{ deferred: true, headers }` (204: the code dictionary asked by
 * Chromium, `chromium`, holding no dictionary; it asks again once it holds
 * the chunk it is a delta against, model::dictionary::DEFERRED_CACHE_CONTROL).
 * Headers are [name, value] pairs in the order they are best sent.
 */
export function select(entry, acceptEncoding, availableDictionary, lastModified, keepsPage = false, chromium = false) {
  const dict = availableDictionary === undefined ? undefined : parseAvailableDictionary(availableDictionary);
  const candidates = [...entry.variants];
  if (dict !== undefined) candidates.push(...entry.deltas.filter((d) => d.dictionary === dict));
  const vary = varyOf(entry.deltas.length > 0, entry.variants.length > 0, entry.page);
  if (entry.deferred && dict === undefined && chromium) return { deferred: true, headers: [['Cache-Control', CACHE_DEFERRED]] };
  const chosen = choose(acceptEncoding === undefined ? undefined : parseAcceptEncoding(acceptEncoding), entry.identity, candidates);
  if (!chosen) {
    const headers = [['Cache-Control', CACHE_REVALIDATE]];
    if (vary) headers.push(['Vary', vary]);
    return { notAcceptable: true, headers };
  }
  const headers = [
    ['Content-Type', entry.contentType],
    ['Content-Length', String(chosen.size)],
  ];
  if (chosen.coding) headers.push(['Content-Encoding', chosen.coding]);
  headers.push(['ETag', chosen.etag]);
  if (lastModified !== undefined) headers.push(['Last-Modified', httpDate(lastModified)]);
  headers.push(['Cache-Control', entry.page && keepsPage ? CACHE_PAGE_KEPT : entry.cacheControl]);
  if (vary) headers.push(['Vary', vary]);
  if (entry.useAsDictionary) headers.push(['Use-As-Dictionary', entry.useAsDictionary]);
  if (entry.link) headers.push(['Link', entry.link]);
  return { representation: chosen, headers };
}

/** serve::vary: the Vary of an asset with deltas, variants, and a page's cache policy. */
export function varyOf(deltas, variants, page) {
  const v = [];
  if (deltas || variants) v.push('Accept-Encoding');
  if (deltas) v.push('Available-Dictionary');
  if (page) v.push('Sec-Fetch-Dest');
  return v.length ? v.join(', ') : undefined;
}

/**
 * serve::keeps_page: a top-level navigation (Sec-Fetch-Dest: document) of a
 * Chromium-based browser (it alone sends Sec-CH-UA, and alone ships RFC 9842);
 * its first navigation offers no dcb yet, so the coding cannot tell.
 */
export function keepsPage(fetchDest, chUa) {
  return fetchDest !== undefined && fetchDest.trim().toLowerCase() === 'document' && chUa !== undefined;
}

/** Highest rank, then smallest, then earliest; identity ranks implicitly below any listed coding. */
function choose(ae, identity, candidates) {
  if (ae === undefined) return identity;
  const idw = named(ae, 'identity') ?? named(ae, '*');
  // Ranks: implicit identity is 0.5, below every weight of 1 or more.
  let best = idw === 0 ? undefined : { rank: idw === undefined ? 0.5 : idw, size: identity.size, r: identity };
  for (const c of candidates) {
    const w = weightOf(ae, c.coding, c.delta);
    if (w === 0) continue;
    if (!best || w > best.rank || (w === best.rank && c.size < best.size)) best = { rank: w, size: c.size, r: c };
  }
  return best?.r;
}

// ------------------------------------------------------ conditionals, ranges

/** RFC 9110 §13.1.1 and §13.1.4: If-Match (strong), else If-Unmodified-Since. `h(name)` reads a request header. */
export function preconditionFailed(h, etag, lastModified) {
  const im = h('if-match');
  if (im !== undefined) {
    return !im
      .split(',')
      .map((t) => t.trim())
      .some((t) => t === '*' || (!etag.startsWith('W/') && !t.startsWith('W/') && t === etag));
  }
  const since = parseHttpDate(h('if-unmodified-since'));
  return since !== undefined && lastModified !== undefined && lastModified > since + 999;
}

/** RFC 9110 §13.1.2 and §13.1.3: If-None-Match (weak comparison) wins over If-Modified-Since. */
export function notModified(h, etag, lastModified) {
  const inm = h('if-none-match');
  if (inm !== undefined) {
    const weak = (t) => t.trim().replace(/^W\//, '');
    const ours = weak(etag);
    return inm.split(',').some((t) => t.trim() === '*' || (ours !== '' && weak(t) === ours));
  }
  const since = parseHttpDate(h('if-modified-since'));
  return since !== undefined && lastModified !== undefined && lastModified <= since + 999;
}

/** Whether a Range applies: no If-Range, or one naming this strong ETag or exact date. */
export function rangeApplies(h, etag, lastModified) {
  const ir = h('if-range');
  if (ir === undefined) return true;
  const v = ir.trim();
  if (v.startsWith('"')) return !etag.startsWith('W/') && v === etag;
  const d = parseHttpDate(v);
  return d !== undefined && lastModified !== undefined && Math.floor(lastModified / 1000) === Math.floor(d / 1000);
}

/**
 * One `bytes=` range of a body of `len` bytes: [first, last], 'unsatisfiable',
 * or undefined (ignored). Positions are any number of digits (RFC 9110
 * §14.1.2), compared exactly as BigInts: past 2^53, Number() would make two
 * positions equal that are not, where the Rust side orders them by their digits.
 */
export function parseRange(v, len) {
  const spec = /^bytes=([^]*)$/.exec(v.trim())?.[1];
  if (spec === undefined || spec.includes(',')) return undefined;
  const m = /^([0-9]*)-([0-9]*)$/.exec(spec.trim());
  if (!m) return undefined;
  const [, a, b] = m;
  const size = BigInt(len);
  if (a === '') {
    if (b === '') return undefined;
    const n = BigInt(b);
    return n > 0n && len > 0 ? [n >= size ? 0 : len - Number(n), len - 1] : 'unsatisfiable';
  }
  const first = BigInt(a);
  const last = b === '' ? undefined : BigInt(b);
  if (last !== undefined && last < first) return undefined;
  if (first >= size) return 'unsatisfiable';
  return [Number(first), last === undefined || last >= size ? len - 1 : Number(last)];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MON = MONTHS.join('|');
const IMF_FIXDATE = new RegExp(`^(${DAYS.join('|')}), ([0-9]{2}) (${MON}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$`);
// httpdate does not look at the character between the year and the hour.
const RFC_850 = new RegExp(`^(${WEEKDAYS.join('|')}), ([0-9]{2})-(${MON})-([0-9]{2})[\\x00-\\x7f]([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$`);
const ASCTIME = new RegExp(`^(${DAYS.join('|')}) (${MON}) ( [0-9]|[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$`);

/**
 * Milliseconds since the epoch of an HTTP-date (RFC 9110 §5.6.7): an
 * IMF-fixdate or one of the two obsolete forms, RFC 850 (a two-digit year
 * below 70 is 20xx) and asctime, as the Rust side's `httpdate` reads them:
 * ASCII, trimmed, a real date from 1970 to 9999 on the weekday it names.
 * Anything else (`1`, `3000`, what Date.parse would guess at) is undefined,
 * and RFC 9110 has a recipient ignore a field whose date is invalid.
 */
export function parseHttpDate(v) {
  if (typeof v !== 'string' || !/^[\x00-\x7f]*$/.test(v)) return undefined;
  const s = v.trim();
  let wday, day, mon, year, hour, min, sec, m;
  if ((m = IMF_FIXDATE.exec(s))) {
    [wday, day, mon, year, hour, min, sec] = [DAYS.indexOf(m[1]), m[2], m[3], m[4], m[5], m[6], m[7]];
  } else if ((m = RFC_850.exec(s))) {
    [wday, day, mon, year, hour, min, sec] = [WEEKDAYS.indexOf(m[1]), m[2], m[3], m[4], m[5], m[6], m[7]];
    year = Number(year) + (Number(year) < 70 ? 2000 : 1900);
  } else if ((m = ASCTIME.exec(s))) {
    [wday, mon, day, hour, min, sec, year] = [DAYS.indexOf(m[1]), m[2], m[3].trim(), m[4], m[5], m[6], m[7]];
  } else {
    return undefined;
  }
  [day, year, hour, min, sec] = [day, year, hour, min, sec].map(Number);
  const month = MONTHS.indexOf(mon);
  if (sec >= 60 || min >= 60 || hour >= 24 || year < 1970 || year > 9999) return undefined;
  const t = Date.UTC(year, month, day, hour, min, sec);
  const d = new Date(t);
  // The day exists in that month, and falls on the weekday named (Monday 0).
  if (d.getUTCDate() !== day || d.getUTCMonth() !== month || (d.getUTCDay() + 6) % 7 !== wday) return undefined;
  return t;
}

/** An IMF-fixdate (seconds; `ms` since the epoch). */
export function httpDate(ms) {
  return new Date(Math.floor(ms / 1000) * 1000).toUTCString();
}

// ------------------------------------------------------------- request paths

/**
 * The path and query (with its `?`, or '') of a request-target, as
 * `precompress serve` (hyper) reads it: an absolute-form target, which a
 * server must accept (RFC 9112 §3.2.2), by its path (`/` when it has none);
 * a `#` and all after it dropped (a fragment is never sent, and hyper drops
 * one), so neither reaches the path rules as part of a name.
 */
export function splitTarget(target) {
  let t = target;
  const hash = t.indexOf('#');
  if (hash >= 0) t = t.slice(0, hash);
  const origin = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/.exec(t);
  if (origin) {
    t = t.slice(origin[0].length);
    if (!t.startsWith('/')) t = `/${t}`;
  }
  const q = t.indexOf('?');
  return q < 0 ? { path: t, query: '' } : { path: t.slice(0, q), query: t.slice(q) };
}

/** The URL path DIR is served at, with one leading and one trailing slash; undefined if not a path. */
export function normalizeBase(b) {
  const segs = b.split('/').filter((s) => s !== '');
  if (segs.some((s) => s === '.' || s === '..' || /[\\?#%\0\s]/.test(s))) return undefined;
  return segs.length ? `/${segs.join('/')}/` : '/';
}

/** `/app/x` is the folder's `/x` under base `/app/`; `/app` is its root; undefined outside it. */
export function stripBase(base, path) {
  if (base === '/') return path;
  const b = base.slice(0, -1);
  if (!path.startsWith(b)) return undefined;
  const rest = path.slice(b.length);
  if (rest === '') return '/';
  return rest.startsWith('/') ? rest : undefined;
}

export function urlOf(base, key) {
  return base + key.split('/').map(encodeSegment).join('/');
}

function encodeSegment(s) {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The decoded request path (no query) as `{ key, trailingSlash }`, or
 * `{ error }`: 'hidden' (a dot-file: the 404 page) or why it is refused (a
 * 400: 'not-absolute', 'bad-percent-encoding', 'not-utf8', 'dot-segment',
 * 'encoded-separator', 'nul'), as serve::path's PathError. Each segment is
 * decoded alone and checked before the next (the first refused one decides).
 */
export function parseRequestPath(raw) {
  if (!raw.startsWith('/')) return { error: 'not-absolute' };
  const segments = [];
  for (const seg of raw.slice(1).split('/')) {
    const bytes = percentDecode(seg);
    if (!bytes) return { error: 'bad-percent-encoding' };
    let s;
    try {
      s = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return { error: 'not-utf8' };
    }
    const error = checkSegment(s);
    if (error) return { error };
    if (s !== '') segments.push(s);
  }
  return { key: segments.join('/'), trailingSlash: raw.endsWith('/') };
}

/** One decoded segment, as model::path::check_segment: `.` or `..`, NUL, `/` or `\`, a dot-file (but .well-known). */
function checkSegment(s) {
  if (s === '.' || s === '..') return 'dot-segment';
  if (s.includes('\0')) return 'nul';
  if (/[/\\]/.test(s)) return 'encoded-separator';
  if (s.startsWith('.') && s !== '.well-known') return 'hidden';
  return undefined;
}

function percentDecode(s) {
  const out = [];
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const h = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(h)) return undefined;
      out.push(parseInt(h, 16));
      i += 3;
    } else if (c < 0x80) {
      out.push(c);
      i += 1;
    } else {
      // A raw non-ASCII character: its UTF-8 bytes.
      const cp = s.codePointAt(i);
      out.push(...new TextEncoder().encode(String.fromCodePoint(cp)));
      i += cp > 0xffff ? 2 : 1;
    }
  }
  return Uint8Array.from(out);
}

/** The PathError messages of model::path, for a manifest's keys and paths. */
const PATH_ERRORS = {
  'not-absolute': 'path does not start with /',
  'dot-segment': 'dot segment',
  'encoded-separator': 'slash or backslash inside a segment',
  nul: 'NUL byte',
};

/**
 * A manifest path (`assets/app.js.br`): why it may not be served, or
 * undefined; model::path::check_relative (dot-files allowed, empty
 * segments not).
 */
export function checkRelative(rel) {
  if (typeof rel !== 'string' || rel === '' || rel.startsWith('/')) return PATH_ERRORS['not-absolute'];
  for (const seg of rel.split('/')) {
    if (seg === '') return PATH_ERRORS['dot-segment'];
    const e = checkSegment(seg);
    if (e && e !== 'hidden') return PATH_ERRORS[e];
  }
  return undefined;
}

/** `x.js.br`, `x.js.gz`, `x.js.zst` → `x.js`; `x.js.HEX.dcb` → `x.js`: the asset a variant or delta belongs to. */
export function siblingSource(key) {
  // `s`: a name may hold a newline, CR or U+2028, which `.` alone does not match.
  const d = /^(.+)\.[0-9a-f]{64}\.dc[bz]$/s.exec(key);
  if (d) return d[1];
  const v = /^(.+)\.(br|gz|zst)$/s.exec(key);
  return v ? v[1] : undefined;
}

// ----------------------------------------------------------------- the router

/** The page static hosts (and `precompress serve`) send with a 404. */
export const NOT_FOUND_PAGE = '404.html';
const NOSNIFF = ['X-Content-Type-Options', 'nosniff'];

/**
 * Which file a request names, as serve::route decides it: 405 for a method
 * other than GET and HEAD, 400 for a path parseRequestPath refuses, the 301
 * that adds a folder's (or the base's) slash, the file itself or a folder's
 * index.html, else what a static host serves where nothing is: `about` is
 * about.html, with `spa` a client-side route is index.html, else 404.html
 * with 404. Never a variant or delta by its own name, the manifest or a
 * dot-file (`refused`: a server falling through to the next handler must
 * not pass these on).
 *
 * request  { method, path (raw, no query), query ('' or '?…') }
 * lookup   node(key): 'folder', what the lookup hands on for a file (any
 *          other truthy value), or undefined; isManifest(key, file)
 * options  spa; notFoundPage (default true): 404.html where nothing is;
 *          partial: the lookup knows the manifest's files only, so a path
 *          it does not know is worth asking the store for, after about.html
 *          and the single-page route and before 404.html:
 *          `{ status: 200, key, probe: true, otherwise }`, `otherwise` the
 *          answer when the store has nothing there either.
 *
 * Returns `{ status, headers, refused }` (no file) or `{ status, key, file }`
 * (`file`: what the lookup found for `key`).
 */
export function route(index, request, lookup, options = {}) {
  if (request.method !== 'GET' && request.method !== 'HEAD') return status(405, [['Allow', 'GET, HEAD']]);
  const t = target(index, request, lookup);
  const found = t.status !== 404 || t.key !== undefined ? t : fallback(index, request.path, lookup, options, t.missing) ?? t;
  // serve::answer::decide's mark_shell: with spa, the shell answers every route.
  if (options.spa && found.key === 'index.html') found.shell = true;
  return found;
}

const status = (code, headers = [], refused = false) => ({ status: code, headers, refused });

function target(index, { path: fullPath, query }, lookup) {
  const raw = stripBase(index.base, fullPath);
  if (raw === undefined) return status(404);
  if (raw === '/' && !fullPath.endsWith('/')) return status(301, [['Location', `${fullPath}/${query}`]]);
  const rp = parseRequestPath(raw);
  if (rp.error === 'hidden') return status(404, [], true);
  if (rp.error) return status(400);
  const node = lookup.node(rp.key);
  if (node === 'folder') {
    if (!rp.trailingSlash && rp.key !== '') {
      // One leading slash: `//docs/` would be another host.
      return status(301, [['Location', `${index.base.slice(0, -1)}/${raw.replace(/^\/+/, '')}/${query}`]]);
    }
    const key = rp.key === '' ? 'index.html' : `${rp.key}/index.html`;
    const idx = lookup.node(key);
    return idx && idx !== 'folder' ? { status: 200, key, file: idx } : status(404);
  }
  if (node && internal(rp.key, node, lookup)) return status(404, [], true);
  if (node && !rp.trailingSlash) return { status: 200, key: rp.key, file: node };
  const missing = !node && !rp.trailingSlash && rp.key !== '' && !internal(rp.key, undefined, lookup) ? rp.key : undefined;
  return { ...status(404), missing };
}

function fallback(index, fullPath, lookup, options, missing) {
  const raw = stripBase(index.base, fullPath);
  if (raw === undefined) return undefined;
  const file = (key, code) => {
    const node = lookup.node(key);
    return node && node !== 'folder' && !internal(key, node, lookup) ? { status: code, key, file: node } : undefined;
  };
  const rp = parseRequestPath(raw);
  if (!rp.error) {
    const last = rp.key.slice(rp.key.lastIndexOf('/') + 1);
    const routed = rp.key !== '' && !last.includes('.');
    const page = routed && !rp.trailingSlash ? file(`${rp.key}.html`, 200) : undefined;
    if (page) return page;
    const app = options.spa && (routed || rp.key === '') ? file('index.html', 200) : undefined;
    if (app) return app;
  }
  const notFound = options.notFoundPage === false ? undefined : file(NOT_FOUND_PAGE, 404);
  if (options.partial && missing !== undefined) return { status: 200, key: missing, probe: true, otherwise: notFound ?? status(404) };
  return notFound;
}

/** Variants and deltas beside their asset, and the manifest: never served by their own names. */
function internal(key, file, lookup) {
  const src = siblingSource(key);
  if (src !== undefined) {
    const node = lookup.node(src);
    if (node && node !== 'folder') return true;
  }
  return lookup.isManifest(key, file);
}

/**
 * What is sent for `target` (route's `{ status, key, file }`), as
 * serve::answer decides it: the representation select picks (406 when the
 * client accepts none), opened through the lookup, or the file as it is when
 * the manifest does not list it or what it picks cannot be sent; then the
 * preconditions (412, 304) and the range (206, 416).
 *
 * request  { method, header(name): the field, repeated ones joined with `,`,
 *          or undefined; single(name): the field's value when there is
 *          exactly one }
 * lookup   open(key, rep, file): { file } or { why } (sent as it is then);
 *          sourceUnchanged(key, file) (optional): the source is as the index
 *          saw it, so a 304 or 412 is answered without opening anything;
 *          plain(key, file): { file, contentType, size, etag, lastModified }
 *          or undefined (404); lastModified(entry) (default entry.lastModified)
 *
 * Returns `{ status, headers, warnings, file, span }`: `file` what the lookup
 * opened (for the server to release when no bytes go out), `span` the
 * [start, count] of its bytes to send (none: a short text, or nothing for
 * a 304 and for HEAD), `warnings` what to log.
 */
export function answer(index, request, target, lookup) {
  const warnings = [];
  const entry = index.assets.get(target.key);
  let chosen;
  if (entry) {
    const lastModified = lookup.lastModified ? lookup.lastModified(entry) : entry.lastModified;
    const chromium = request.header('sec-ch-ua') !== undefined;
    const keeps = keepsPage(request.single('sec-fetch-dest'), request.header('sec-ch-ua'));
    const sel = select(entry, request.header('accept-encoding'), request.single('available-dictionary'), lastModified, keeps, chromium);
    if (target.shell && entry.page) {
      for (const h of sel.headers) if (h[0] === 'Use-As-Dictionary') h[1] = `match="${index.base}*", match-dest=("document")`;
    }
    if (sel.notAcceptable) return { status: 406, headers: [...sel.headers, NOSNIFF], warnings };
    if (sel.deferred) return { status: 204, headers: [...sel.headers, NOSNIFF], warnings };
    const r = sel.representation;
    // A 304 or 412 sends no bytes: the client's copy is the one the manifest
    // names, and the source it decodes to is unchanged.
    if (target.status === 200 && lookup.sourceUnchanged?.(target.key, target.file)) {
      const early = preconditions(request, sel.headers);
      if (early) return { ...early, warnings };
    }
    const opened = lookup.open(target.key, r, target.file);
    if (opened.why === undefined) chosen = { file: opened.file, headers: sel.headers, identity: !r.coding };
    else warnings.push(`${r.path}: ${opened.why}; sending ${target.key} uncompressed`);
  }
  if (!chosen) {
    const p = lookup.plain(target.key, target.file);
    if (!p) return { status: 404, headers: [], warnings };
    chosen = { file: p.file, headers: plainHeaders(p), identity: true };
  }
  return { ...send(request, chosen, target.status), file: chosen.file, warnings };
}

/** Headers for a file the manifest does not describe (or describes wrongly): uncompressed, its own weak ETag, revalidated. */
export function plainHeaders({ contentType, size, etag, lastModified }) {
  const headers = [
    ['Content-Type', contentType],
    ['Content-Length', String(size)],
  ];
  if (etag !== undefined) headers.push(['ETag', etag]);
  if (lastModified !== undefined) headers.push(['Last-Modified', httpDate(lastModified)]);
  headers.push(['Cache-Control', CACHE_REVALIDATE]);
  return headers;
}

/** `conditional` for the representation with `headers`, its validators read from them. */
function preconditions(request, headers) {
  const get = (n) => headers.find(([k]) => k === n)?.[1];
  const lm = get('Last-Modified') === undefined ? undefined : Date.parse(get('Last-Modified'));
  return conditional(request.header, headers, get('ETag') ?? '', lm);
}

/** 412 when a precondition fails, else 304 when the client's copy of the representation with `headers` is current, else undefined. */
function conditional(h, headers, etag, lm) {
  if (preconditionFailed(h, etag, lm)) return { status: 412, headers: [['ETag', etag], NOSNIFF] };
  if (notModified(h, etag, lm)) {
    const keep = ['ETag', 'Last-Modified', 'Cache-Control', 'Vary'];
    return { status: 304, headers: [...headers.filter(([n]) => keep.includes(n)), NOSNIFF] };
  }
  return undefined;
}

/** The reply for a file with `headers` (`status` 200, or 404 for the 404 page): 412, 304, 416, or its bytes. */
function send(request, { headers, identity }, code) {
  const get = (n) => headers.find(([k]) => k === n)?.[1];
  const etag = get('ETag') ?? '';
  const lm = get('Last-Modified') === undefined ? undefined : Date.parse(get('Last-Modified'));
  const len = Number(get('Content-Length') ?? 0);
  const h = request.header;
  // The 404 page is never a 304, a 412 or a range of itself.
  const found = code === 200;
  const early = found && conditional(h, headers, etag, lm);
  if (early) return early;
  const out = [...headers, NOSNIFF];
  if (identity) out.push(['Accept-Ranges', 'bytes']);
  const range = h('range');
  // Ranges only on identity, and never for HEAD.
  if (found && identity && request.method !== 'HEAD' && range !== undefined && rangeApplies(h, etag, lm)) {
    const r = parseRange(range, len);
    if (r === 'unsatisfiable') return { status: 416, headers: [['Content-Range', `bytes */${len}`]] };
    if (r) {
      const count = r[1] - r[0] + 1;
      out.push(['Content-Range', `bytes ${r[0]}-${r[1]}/${len}`]);
      out.splice(out.findIndex(([n]) => n === 'Content-Length'), 1, ['Content-Length', String(count)]);
      return { status: 206, headers: out, span: [r[0], count] };
    }
  }
  return { status: code, headers: out, span: [0, len] };
}
