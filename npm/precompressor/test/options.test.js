// The Vite plugin's options: each valid value becomes the flag `precompress
// --help` lists, each invalid one an error naming the option and the value.
// Run: node --test npm/precompressor/test/

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OPTION_NAMES, OWN, OptionError, checkArgs, runArgs, validateOptions } from '../lib/options.js';

const root = path.resolve('/app');
const outDir = path.join(root, 'dist');
const where = { dir: 'dist', root, outDir };
const args = (options) => runArgs(validateOptions(options), where);

test('no options: just the folder', () => {
  assert.deepEqual(args(undefined), ['dist']);
  assert.deepEqual(args({}), ['dist']);
  assert.deepEqual(checkArgs(validateOptions({}), where), ['check', 'dist']);
});

// [options, the flags after DIR]
const MAPPING = [
  [{ formats: ['br', 'gzip'] }, ['--formats', 'br,gzip']],
  [{ formats: ['zstd', 'zstd'] }, ['--formats', 'zstd']],
  [{ formats: 'br' }, ['--formats', 'br']],
  [{ brotliQuality: 0 }, ['--brotli-quality', '0']],
  [{ brotliQuality: 11 }, ['--brotli-quality', '11']],
  [{ zstdLevel: 22 }, ['--zstd-level', '22']],
  [{ gzipLevel: 1 }, ['--gzip-level', '1']],
  [{ minRatio: 0.8 }, ['--min-ratio', '0.8']],
  [{ include: ['*.js', 'assets/**'] }, ['--include=*.js', '--include=assets/**']],
  [{ exclude: '*.map' }, ['--exclude=*.map']],
  [{ exclude: ['-odd'] }, ['--exclude=-odd']],
  [{ include: [] }, []],
  [{ minSize: 2048 }, ['--min-size', '2048']],
  [{ minSize: 0 }, ['--min-size', '0']],
  [{ minSize: '1KiB' }, ['--min-size', '1KiB']],
  [{ minSize: ' 1.5 MB ' }, ['--min-size', '1.5 MB']],
  [{ manifest: true }, []],
  [{ manifest: 'm.json' }, ['--manifest', path.join(outDir, 'm.json')]],
  [{ manifest: '../meta/m.json' }, ['--manifest', path.join(root, 'meta', 'm.json')]],
  [{ cacheDir: 'node_modules/.cache/p' }, ['--cache-dir', path.join(root, 'node_modules', '.cache', 'p')]],
  [{ cacheDir: path.resolve('/tmp/c') }, ['--cache-dir', path.resolve('/tmp/c')]],
  [{ dictionaryFrom: '../prev' }, ['--dictionary-from', path.resolve(root, '../prev')]],
  [{ dictionaryFrom: 'https://example.com/app/' }, ['--dictionary-from', 'https://example.com/app/']],
  [{ dictionaryFrom: ['http://127.0.0.1:8080/', 'prev'] }, ['--dictionary-from', 'http://127.0.0.1:8080/', '--dictionary-from', path.join(root, 'prev')]],
  [{ sharedDictionary: false }, ['--shared-dictionary', 'off']],
  [{ pageDictionary: false }, ['--no-page-dictionary']],
  [{ pageDictionary: true }, []],
  // true was once no flag at all, so docs/deltas.md's "turn it on" could not be followed (#37).
  [{ sharedDictionary: true }, ['--shared-dictionary', 'auto']],
  [{ sharedDictionary: 'on' }, ['--shared-dictionary', 'on']],
  [{ cacheDir: false }, ['--no-cache']],
  [
    { dictionaryFrom: ['a', 'b'] },
    ['--dictionary-from', path.join(root, 'a'), '--dictionary-from', path.join(root, 'b')],
  ],
  [{ budgets: { 'assets/**/*.js': '150KB', '*.css': 3000 } }, ['--budget=assets/**/*.js=150KB', '--budget=*.css=3000']],
  [{ budgets: { 'a=b.js': '1KiB' } }, ['--budget=a=b.js=1KiB']],
  [{ budgets: {} }, []],
  [{ verbose: true }, ['--verbose']],
  [{ verbose: false }, []],
  // Options that are not flags of the run.
  [{ check: true, disable: false, binary: '/bin/precompress' }, []],
];

for (const [options, flags] of MAPPING) {
  test(`maps ${JSON.stringify(options)} to ${JSON.stringify(flags)}`, () => {
    assert.deepEqual(args(options), ['dist', ...flags]);
  });
}

test('check gets the same manifest and dictionaries as the run, and nothing else', () => {
  const o = validateOptions({
    manifest: 'm.json',
    dictionaryFrom: ['../prev'],
    formats: ['br'],
    budgets: { '*.js': 1 },
    check: true,
  });
  assert.deepEqual(checkArgs(o, where), [
    'check',
    'dist',
    '--manifest',
    path.join(outDir, 'm.json'),
    '--dictionary-from',
    path.resolve(root, '../prev'),
  ]);
});

test('every option together, in a stable order', () => {
  assert.deepEqual(
    args({
      verbose: true,
      budgets: { '*.js': '1MB' },
      dictionaryFrom: 'p',
      cacheDir: 'c',
      manifest: 'm.json',
      minSize: 10,
      exclude: ['x'],
      include: ['i'],
      minRatio: 1,
      gzipLevel: 9,
      zstdLevel: 3,
      brotliQuality: 5,
      formats: ['gzip'],
    }),
    [
      'dist',
      '--formats',
      'gzip',
      '--brotli-quality',
      '5',
      '--zstd-level',
      '3',
      '--gzip-level',
      '9',
      '--min-ratio',
      '1',
      '--include=i',
      '--exclude=x',
      '--min-size',
      '10',
      '--manifest',
      path.join(outDir, 'm.json'),
      '--cache-dir',
      path.join(root, 'c'),
      '--dictionary-from',
      path.join(root, 'p'),
      '--verbose',
      '--budget=*.js=1MB',
    ],
  );
});

// [options, a regex the message must match]: the option's name and the bad value.
const INVALID = [
  ['not an object', /the options must be an object, got "not an object"/],
  [[], /the options must be an object, got \[\]/],
  [{ brotliLevel: 5 }, /unknown option `brotliLevel` \(did you mean `brotliQuality`\?\)/],
  [{ budget: {} }, /unknown option `budget` \(did you mean `budgets`\?\)/],
  [{ colour: true }, /unknown option `colour`; the options are formats, /],
  [{ formats: ['brotli'] }, /option `formats` must be a non-empty array of 'br', 'zstd', 'gzip', got \["brotli"\]/],
  [{ formats: [] }, /option `formats` must be a non-empty array .*, got \[\]/],
  [{ formats: 'br,gzip' }, /option `formats` must be .*, got "br,gzip"/],
  [{ brotliQuality: 12 }, /option `brotliQuality` must be an integer from 0 to 11, got 12/],
  [{ brotliQuality: -1 }, /option `brotliQuality` must be an integer from 0 to 11, got -1/],
  [{ brotliQuality: '9' }, /option `brotliQuality` must be an integer from 0 to 11, got "9"/],
  [{ zstdLevel: 0 }, /option `zstdLevel` must be an integer from 1 to 22, got 0/],
  [{ zstdLevel: 23 }, /option `zstdLevel` must be an integer from 1 to 22, got 23/],
  [{ zstdLevel: 3.5 }, /option `zstdLevel` must be an integer from 1 to 22, got 3.5/],
  [{ gzipLevel: 13 }, /option `gzipLevel` must be an integer from 1 to 12, got 13/],
  [{ gzipLevel: 0 }, /option `gzipLevel` must be an integer from 1 to 12, got 0/],
  [{ minRatio: 0 }, /option `minRatio` must be a number in \(0, 1\], e.g. 0.8, got 0/],
  [{ minRatio: 1.5 }, /option `minRatio` must be a number in \(0, 1\].*, got 1.5/],
  [{ include: ['ok', ''] }, /option `include` must be a glob string, a RegExp, or an array of them, got \["ok",""\]/],
  [{ exclude: [1] }, /option `exclude` must be a glob string, a RegExp, or an array of them, got \[1\]/],
  [{ exclude: { a: 1 } }, /option `exclude` must be .*, got \{"a":1\}/],
  [{ minSize: -1 }, /option `minSize` must be a size: a whole number of bytes, or a string like "1KiB", got -1/],
  [{ minSize: 1.5 }, /option `minSize` must be a size.*, got 1.5/],
  [{ minSize: '1 KiBs' }, /option `minSize` must be a size.*units B, KB, MB, GB, KiB, MiB, GiB\), got "1 KiBs"/],
  [{ minSize: 'big' }, /option `minSize` must be a size.*, got "big"/],
  [{ manifest: false }, /option `manifest` cannot be false: precompress always writes a manifest/],
  [{ manifest: '' }, /option `manifest` must be a non-empty string, got ""/],
  [{ manifest: 3 }, /option `manifest` must be a non-empty string, got 3/],
  [{ cacheDir: true }, /option `cacheDir` must be a non-empty string, got true/],
  [{ dictionaryFrom: [null] }, /option `dictionaryFrom` must be a string or an array of non-empty strings, got \[null\]/],
  [{ budgets: ['*.js=1KB'] }, /option `budgets` must be an object of glob: size, e.g. .*, got \["\*.js=1KB"\]/],
  [{ budgets: { '*.js': '150 kilobytes' } }, /option `budgets\["\*.js"\]` must be a size.*, got "150 kilobytes"/],
  [{ budgets: { '': 1 } }, /option `budgets` has an empty glob/],
  [{ check: 'yes' }, /option `check` must be true or false, got "yes"/],
  [{ verbose: 1 }, /option `verbose` must be true or false, got 1/],
  [{ disable: 'false' }, /option `disable` must be true or false, got "false"/],
  [{ binary: '' }, /option `binary` must be a non-empty string, got ""/],
  [{ sharedDictionary: 'yes' }, /option `sharedDictionary` must be 'auto', 'on', 'off', true \('auto'\) or false \('off'\), got "yes"/],
  [{ deltaFormats: ['br'] }, /option `deltaFormats` must be a non-empty array of 'dcb', 'dcz', got \["br"\]/],
  [{ threads: 0 }, /option `threads` must be an integer from 1 to 65535, got 0/],
  [{ maxFiles: 0 }, /option `maxFiles` must be an integer from 1 to /],
  [{ cacheMaxSize: 'lots' }, /option `cacheMaxSize` must be a size/],
];

for (const [options, message] of INVALID) {
  test(`rejects ${JSON.stringify(options)}`, () => {
    assert.throws(
      () => validateOptions(options),
      (e) => e instanceof OptionError && e.message.startsWith('precompressor/vite: ') && message.test(e.message),
    );
  });
}

test('vite.d.ts declares exactly the options the plugin accepts', () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dts = readFileSync(path.join(here, '..', 'vite.d.ts'), 'utf8');
  const body = dts.slice(dts.indexOf('interface PrecompressOptions'));
  const declared = [...body.slice(0, body.indexOf('\n}')).matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]);
  assert.deepEqual(declared.sort(), [...OPTION_NAMES].sort());
});

// fixtures/options.json, made from src/cli/options.rs (the binary's one table of
// its options): each plugin option's samples and the flags each must become,
// which the Rust tests parse with the binary's own parser.
const OPTIONS = JSON.parse(readFileSync(new URL('../../../fixtures/options.json', import.meta.url), 'utf8'));

test("the plugin takes exactly the table's plugin options, plus its own", () => {
  const fromTable = OPTIONS.options.map((o) => o.plugin).filter((p) => p !== null);
  assert.deepEqual([...OPTION_NAMES].sort(), [...fromTable, ...Object.keys(OWN)].sort());
  for (const o of OPTIONS.options) {
    if (o.plugin === null) assert.ok(o.why, `${o.flag}: no plugin option and no why`);
  }
});

test('each sample of each plugin option becomes the flags the table says', () => {
  const expand = (a) => a.replace('{root}', root).replace('{outDir}', outDir).replaceAll('/', path.sep);
  let samples = 0;
  for (const o of OPTIONS.options.filter((x) => x.plugin !== null)) {
    assert.ok(o.samples.length > 0, `${o.plugin}: no sample`);
    for (const { value, args: flags } of o.samples) {
      const want = flags.map((a) => (a.includes('{') ? expand(a) : a));
      assert.deepEqual(args({ [o.plugin]: value }).slice(1), want, `${o.plugin}: ${JSON.stringify(value)}`);
      samples += 1;
    }
  }
  assert.ok(samples >= 25, `${samples} samples`);
});

test("a size is valid for the plugin exactly when the binary reads it (the table's samples)", () => {
  assert.ok(OPTIONS.sizes.length >= 10);
  for (const { text, valid } of OPTIONS.sizes) {
    let ok = true;
    try {
      validateOptions({ minSize: text });
    } catch (e) {
      assert.ok(e instanceof OptionError, text);
      ok = false;
    }
    assert.equal(ok, valid, JSON.stringify(text));
  }
});
