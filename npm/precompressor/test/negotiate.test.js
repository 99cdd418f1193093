// negotiate.js against the Rust crate's own tables in fixtures/, which the
// Rust unit tests read too: Accept-Encoding and Available-Dictionary rows
// (accept-encoding.json), request paths (request-paths.json), hostile
// manifests (hostile-manifests.json), variant and delta names
// (sibling-names.json). The whole answers are held to `precompress serve` by
// fixtures/serve-cases.json (npm/serve-cases.mjs).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  indexManifest,
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
import { accept, availableDictionary, dictionary, fixture } from './tables.js';

test('Accept-Encoding and Available-Dictionary (fixtures/accept-encoding.json), as serve::Index picks', () => {
  const t = fixture('accept-encoding.json');
  const files = {};
  for (const [name, offer] of Object.entries(t.offers)) {
    const key = `app-3f2a9c1b.${name}.js`;
    files[key] = {
      size: offer.identity, blake3: '00', sha256: 'x', content_type: 'text/javascript; charset=utf-8', etag: '"identity"', skipped: {},
      encodings: offer.variants.map(([coding, size]) => ({ coding, size, blake3: '00', etag: `"${coding}"`, path: siblingPath(key, coding) })),
      deltas: (offer.deltas ?? []).map(([coding, name, size]) => {
        const value = dictionary(t, name);
        return { coding, size, dictionary: value, dictionary_path: 'old.js', blake3: '00', etag: `"${coding}-${name}"`, path: siblingPath(key, coding, parseAvailableDictionary(value)) };
      }),
    };
  }
  const index = indexManifest('m.json', { version: 1, files });
  assert.ok(t.cases.length >= 62, `${t.cases.length} rows`);
  for (const row of t.cases) {
    const s = select(index.assets.get(`app-3f2a9c1b.${row.offer}.js`), accept(row), availableDictionary(t, row));
    const got = s.notAcceptable ? '406' : s.representation.coding ?? 'identity';
    assert.equal(got, row.want, JSON.stringify(row));
    if (!s.notAcceptable) {
      const size = s.headers.find(([n]) => n === 'Content-Length')[1];
      assert.equal(size, String(s.representation.size), JSON.stringify(row));
    }
  }
});

test('request paths (fixtures/request-paths.json) are parsed as serve::path parses them', () => {
  const { cases } = fixture('request-paths.json');
  assert.ok(cases.length >= 30, `${cases.length} rows`);
  for (const c of cases) {
    const want = c.error === undefined ? { key: c.key, trailingSlash: c.trailing_slash } : { error: c.error };
    assert.deepEqual(parseRequestPath(c.path), want, JSON.stringify(c));
  }
});

test('dictionaries are parsed as the Rust crate parses them', () => {
  assert.equal(parseAvailableDictionary(':AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=:'), 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=');
  for (const bad of [':AQEB:', 'AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=', ':not base64!:', `:${'A'.repeat(50)}:`, ':AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQF=:'])
    assert.equal(parseAvailableDictionary(bad), undefined, bad);
});

test('a hostile manifest (fixtures/hostile-manifests.json) is refused, naming it and why, as serve::Index refuses it', () => {
  const t = fixture('hostile-manifests.json');
  assert.ok(t.cases.length >= 15, `${t.cases.length} rows`);
  for (const c of t.cases) {
    const files = {};
    for (const [key, set] of Object.entries(c.files ?? {})) files[key] = { ...t.asset, ...set };
    const m = c.manifest ?? { version: 1, generator: 't', settings: {}, files };
    assert.throws(
      () => indexManifest('m.json', m),
      (e) => {
        assert.equal(e.name, 'ManifestError');
        const prefix = 'm.json: invalid manifest: ';
        assert.ok(e.message.startsWith(prefix), e.message);
        const detail = e.message.slice(prefix.length);
        if (c.error !== undefined) assert.equal(detail, c.error, JSON.stringify(c));
        else assert.ok(detail.startsWith(c.error_starts), JSON.stringify(c));
        return true;
      },
      JSON.stringify(c),
    );
  }
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
