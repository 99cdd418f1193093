// negotiate.js against the Rust crate's own tables: the real bundler names
// (fixtures/bundler-names.tsv, also read by model::dictionary's test) and
// rows of serve::negotiate's Accept-Encoding table. The whole answers are
// held to `precompress serve` by fixtures/serve-cases.json (npm/serve-cases.mjs).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  indexManifest,
  isFingerprinted,
  isHashOnly,
  logicalName,
  notModified,
  parseAvailableDictionary,
  parseHttpDate,
  parseRange,
  parseRequestPath,
  preconditionFailed,
  select,
  siblingPath,
  siblingSource,
  splitTarget,
} from '../lib/negotiate.js';

// Rows of a names table (tool, path, expected), checked; returns their count.
function readAsTheTableSays(file) {
  const tsv = readFileSync(new URL(`../../../fixtures/${file}`, import.meta.url), 'utf8');
  let rows = 0;
  for (const line of tsv.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [tool, path, want] = line.split('\t');
    const l = logicalName(path);
    const got = l !== undefined ? l : !isFingerprinted(path) ? 'no' : isHashOnly(path) ? 'hash-only' : 'folder';
    assert.equal(got, want, `${tool}: ${path}`);
    rows++;
  }
  return rows;
}

test('the rules\' edges (fixtures/fingerprint-rules.tsv) are read as the Rust crate reads them', () => {
  const rows = readAsTheTableSays('fingerprint-rules.tsv');
  assert.ok(rows >= 10, `${rows} rows`);
});

test('real bundler names are read as the Rust crate reads them', () => {
  const rows = readAsTheTableSays('bundler-names.tsv');
  assert.ok(rows >= 90, `${rows} rows`);
  for (const yes of ['assets/index-D8fKq1nN.js', 'main.3f2a9c1b.js', 'static/js/main.8e4c2f1a9b7d3e6c5a40.chunk.js', 'assets/vendor-a_b-12cd.js'])
    assert.ok(isFingerprinted(yes), yes);
  for (const no of ['index.html', 'assets/product-catalogue.js', 'assets/settings-abcdefgh.js', 'deadbeef.js', 'lib.abcdefab.js', 'jquery.min.js'])
    assert.ok(!isFingerprinted(no), no);
});

const entry = indexManifest('m.json', {
  version: 1,
  files: {
    'a.js': {
      size: 1000, blake3: '00', sha256: 'x', content_type: 'text/javascript; charset=utf-8', etag: '"id"', skipped: {},
      encodings: [
        { coding: 'br', path: 'a.js.br', size: 300, etag: '"br"' },
        { coding: 'zstd', path: 'a.js.zst', size: 320, etag: '"zstd"' },
        { coding: 'gzip', path: 'a.js.gz', size: 400, etag: '"gzip"' },
      ],
    },
  },
}).assets.get('a.js');

test('Accept-Encoding rows of the Rust negotiation table', () => {
  const rows = [
    ['gzip, deflate, br, zstd', 'br'], ['gzip, deflate', 'gzip'], [undefined, 'identity'], ['', 'identity'],
    ['br;q=0, gzip', 'gzip'], ['br;q=0.5, gzip;q=0.4', 'br'], ['gzip;q=0.001', 'gzip'], ['br;q=0, zstd;q=0, gzip;q=0', 'identity'],
    ['*', 'br'], ['*, br;q=0', 'zstd'], ['*;q=0', '406'], ['*;q=0, identity', 'identity'], ['identity;q=0', '406'],
    ['identity;q=1, gzip;q=0.5', 'identity'], ['identity, gzip', 'gzip'], ['BR', 'br'], ['x-gzip', 'gzip'],
    ['br;q=2, gzip', 'gzip'], ['br;q=0.0001, gzip', 'gzip'], ['br;foo=bar, gzip', 'gzip'], ['br;q=1;x=y, gzip', 'gzip'],
    ['b r, gzip', 'gzip'], [',,, ;, gzip ,', 'gzip'], ['br;q=0, br, gzip', 'gzip'], [' br ;\tq=0.8 ,\tgzip ; q=0.7 ', 'br'],
    ['\u00e9, gzip', 'gzip'],
  ];
  for (const [ae, want] of rows) {
    const s = select(entry, ae, undefined);
    const got = s.notAcceptable ? '406' : s.representation.coding ?? 'identity';
    assert.equal(got, want, `Accept-Encoding: ${JSON.stringify(ae)}`);
  }
});

test('dictionaries and paths are parsed as the Rust crate parses them', () => {
  assert.equal(parseAvailableDictionary(':AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=:'), 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=');
  for (const bad of [':AQEB:', 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=', ':not base64!:', `:${'A'.repeat(50)}:`, ':AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQF=:'])
    assert.equal(parseAvailableDictionary(bad), undefined, bad);
  assert.deepEqual(parseRequestPath('/odd%20names/caf%C3%A9.html'), { key: 'odd names/café.html', trailingSlash: false });
  assert.deepEqual(parseRequestPath('//assets//'), { key: 'assets', trailingSlash: true });
  for (const [raw, why] of [['/..', 'dot segment'], ['/%2e%2e/x', 'dot segment'], ['/..%2fetc', 'encoded separator'], ['/a\\b', 'encoded separator'],
    ['/%00', 'NUL'], ['/%c0%ae', 'not UTF-8'], ['/%zz', 'bad percent-encoding'], ['/.env', 'hidden'], ['/.git/config', 'hidden']])
    assert.equal(parseRequestPath(raw).error, why, raw);
  assert.equal(parseRequestPath('/.well-known/x').key, '.well-known/x');
});

test('a hostile manifest is refused, naming it', () => {
  const m = (files) => ({ version: 1, files });
  const a = { size: 1, blake3: '00', sha256: 'x', content_type: 'text/javascript', etag: '"a"', skipped: {}, encodings: [] };
  for (const files of [
    { '../etc/passwd': a },
    { 'a.js': { ...a, encodings: [{ coding: 'br', path: '/etc/passwd', size: 1, etag: '"b"' }] } },
    { 'a.js': { ...a, encodings: [{ coding: 'zst', path: 'a.js.zst', size: 1, etag: '"b"' }] } },
    { 'a.js': { ...a, content_type: 'text/javascript\r\nSet-Cookie: x=1' } },
    { 'a.js': { ...a, etag: 'W/"weak"' } },
    { 'a.js': { ...a, encodings: [{ coding: 'br', path: 'a.js.br', size: 1, etag: '"a"' }] } },
  ])
    assert.throws(() => indexManifest('m.json', m(files)), /^ManifestError: m\.json: invalid manifest/);
});

test('a variant or delta not at its own name is refused, naming the entry (fixtures/sibling-names.json)', () => {
  const { cases } = JSON.parse(readFileSync(new URL('../../../fixtures/sibling-names.json', import.meta.url), 'utf8'));
  assert.ok(cases.length >= 20, `${cases.length} rows`);
  for (const c of cases) {
    const rep = { coding: c.coding, path: c.path, size: 1, blake3: '00', etag: '"rep"', dictionary: c.dictionary, dictionary_path: 'old.js' };
    const a = { size: 9, blake3: '00', sha256: 'x', content_type: 'text/plain', etag: '"id"', skipped: {}, encodings: [] };
    a[c.dictionary === undefined ? 'encodings' : 'deltas'] = [rep];
    const row = JSON.stringify(c);
    const load = () => indexManifest('site/m.json', { version: 1, files: { [c.key]: a } });
    if (c.ok) {
      const e = load().assets.get(c.key);
      assert.deepEqual([...e.variants, ...e.deltas].map((r) => r.path), [c.path], row);
      const dict = c.dictionary === undefined ? undefined : parseAvailableDictionary(c.dictionary);
      assert.equal(siblingPath(c.key, c.coding, dict), c.path, row);
    } else {
      assert.throws(load, (e) => e.message.startsWith(`site/m.json: invalid manifest: file ${JSON.stringify(c.key)}: `) && e.message.includes(JSON.stringify(c.path)), row);
    }
  }
});

test('ranges: positions past 2^53 and 2^64 are positions, ordered exactly (issue #29)', () => {
  for (const [h, want] of [
    ['bytes=0-9', [0, 9]], ['bytes=5-', [5, 99]], ['bytes=-10', [90, 99]], ['bytes=-1000', [0, 99]], ['bytes=90-1000', [90, 99]],
    ['bytes=100-', 'unsatisfiable'], ['bytes=-0', 'unsatisfiable'], ['bytes=9-5', undefined], ['bytes=0-1,5-9', undefined],
    ['items=0-9', undefined], ['bytes=a-b', undefined], ['bytes=-', undefined], ['bytes=+1-2', undefined], ['bytes=007-0009', [7, 9]],
    ['bytes=0-18446744073709551616', [0, 99]], ['bytes=0-99999999999999999999999999', [0, 99]], ['bytes=-99999999999999999999999999', [0, 99]],
    ['bytes=18446744073709551616-', 'unsatisfiable'], ['bytes=18446744073709551616-18446744073709551617', 'unsatisfiable'],
    ['bytes=18446744073709551617-18446744073709551616', undefined], ['bytes=5-18446744073709551616', [5, 99]],
    ['bytes=18446744073709551616-5', undefined], ['bytes=9007199254740993-9007199254740992', undefined],
  ])
    assert.deepEqual(parseRange(h, 100), want, h);
  assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
});

test('HTTP dates: the three forms httpdate reads, nothing Date.parse would guess at (issue #29)', () => {
  const t = Date.UTC(1994, 10, 6, 8, 49, 37);
  for (const [v, want] of [
    ['Sun, 06 Nov 1994 08:49:37 GMT', t], ['Sunday, 06-Nov-94 08:49:37 GMT', t], ['Sun Nov  6 08:49:37 1994', t], ['Sun Nov 06 08:49:37 1994', t],
    [' \tSun, 06 Nov 1994 08:49:37 GMT ', t], ['Thursday, 01-Jan-60 00:00:00 GMT', Date.UTC(2060, 0, 1)], ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Fri, 31 Dec 9999 23:59:59 GMT', Date.UTC(9999, 11, 31, 23, 59, 59)],
    ['1', undefined], ['3000', undefined], ['2024-01-01', undefined], ['Sun, 06 Nov 1994', undefined], ['Mon, 06 Nov 1994 08:49:37 GMT', undefined],
    ['Sun, 06 Nov 1994 08:49:37 UTC', undefined], ['sun, 06 Nov 1994 08:49:37 GMT', undefined], ['Sun, 06 nov 1994 08:49:37 GMT', undefined],
    ['Sun, 6 Nov 1994 08:49:37 GMT', undefined], ['Sun, 31 Feb 1994 08:49:37 GMT', undefined], ['Sun, 06 Nov 1994 24:00:00 GMT', undefined],
    ['Sun, 06 Nov 1994 08:60:37 GMT', undefined], ['Wed, 31 Dec 1969 23:59:59 GMT', undefined], ['Sun, 06 Nov 1994 08:49:37 GMT\u00a0', undefined],
    ['Sun, 06 Nov 1994 08:49:37 GMT, x', undefined], ['Sunday, 06-Nov-1994 08:49:37 GMT', undefined], ['Sun Nov 6 08:49:37 1994', undefined],
    [undefined, undefined],
  ])
    assert.equal(parseHttpDate(v), want, JSON.stringify(v));
  // An invalid date is ignored (RFC 9110 §13.1.3, §13.1.4): no 304, no 412.
  const h = (name, value) => (n) => (n === name ? value : undefined);
  const lm = Date.UTC(2024, 0, 1);
  assert.equal(notModified(h('if-modified-since', '3000'), '"e"', lm), false);
  assert.equal(preconditionFailed(h('if-unmodified-since', '1'), '"e"', lm), false);
  assert.equal(notModified(h('if-modified-since', 'Fri, 01 Jan 2100 00:00:00 GMT'), '"e"', lm), true);
  assert.equal(preconditionFailed(h('if-unmodified-since', 'Thu, 01 Jan 1970 00:00:00 GMT'), '"e"', lm), true);
});

test('a variant or delta is known by its name even when the name holds a newline, CR or U+2028 (issue #29)', () => {
  for (const c of ['\n', '\r', '\u2028', '\u2029']) {
    assert.equal(siblingSource(`odd/a${c}b.txt.gz`), `odd/a${c}b.txt`, JSON.stringify(c));
    assert.equal(siblingSource(`a${c}b.js.${'ab'.repeat(32)}.dcz`), `a${c}b.js`, JSON.stringify(c));
    assert.equal(siblingSource(`a.js.br${c}`), undefined, JSON.stringify(c));
  }
});

test('a request-target: absolute-form by its path, a fragment dropped, as hyper reads it (issue #29)', () => {
  for (const [target, path, query] of [
    ['/a.txt', '/a.txt', ''], ['/a.txt?x=1', '/a.txt', '?x=1'], ['/a.txt#top', '/a.txt', ''], ['/a.txt?x#y', '/a.txt', '?x'],
    ['/a#b?c', '/a', ''], ['http://example.com/a.txt', '/a.txt', ''], ['HTTP://X/a.txt?q', '/a.txt', '?q'], ['https://u:p@h:8/x/', '/x/', ''],
    ['http://x', '/', ''], ['http://x?q', '/', '?q'], ['http://x/a#f?g', '/a', ''], ['ftp://x/a.txt', '/a.txt', ''], ['//a.txt', '//a.txt', ''],
    ['*', '*', ''], ['/%23.txt', '/%23.txt', ''],
  ])
    assert.deepEqual(splitTarget(target), { path, query }, target);
});
