// The Vite plugin's hooks, driven by hand with a stand-in binary that records
// how it was called; and, when PRECOMPRESS_BINARY names the real binary
// (npm/test.sh sets it), every mapped flag run through the real one.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { OPTION_NAMES, regexpArgs, runArgs, validateOptions } from '../lib/options.js';
import { redactUserinfo } from '../lib/run.js';
import precompress from '../lib/vite.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'precompress-vite-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const skip = process.platform === 'win32' ? 'the stand-in binary is a shell script' : false;

const log = path.join(tmp, 'calls');
// Records "cwd|arg|arg..." per call; exits as $FAKE_EXIT says, printing $FAKE_STDERR.
const fake = path.join(tmp, 'fake-precompress');
writeFileSync(
  fake,
  `#!/bin/sh
{ printf '%s' "$PWD"; printf '|%s' "$@"; echo; } >> "${log}"
[ -n "$FAKE_STDOUT" ] && printf '%s\\n' "$FAKE_STDOUT"
[ -n "$FAKE_STDERR" ] && printf '%s\\n' "$FAKE_STDERR" >&2
exit "\${FAKE_EXIT:-0}"
`,
);
chmodSync(fake, 0o755);

const root = path.join(tmp, 'app');
mkdirSync(root, { recursive: true });
const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

/** What the plugin said through Vite's logger in the last build(): [level, message]. */
let logged = [];
const logger = Object.fromEntries(['info', 'warn', 'error'].map((level) => [level, (m) => logged.push([level, m])]));

/** Runs the build hooks the way Vite does; `env` is Vite 6+'s this.environment. */
async function build(options, { config = {}, env, error, closeError = error } = {}) {
  rmSync(log, { force: true });
  logged = [];
  // No cache flag unless a test asks: the default is the (fake) binary's.
  const plugin = precompress({ binary: fake, ...options });
  const resolved = { root, logLevel: 'info', logger, ...config, build: { outDir: 'dist', write: true, ...config.build } };
  plugin.configResolved?.(resolved);
  plugin.buildStart?.call({});
  plugin.buildEnd?.call({}, error);
  const ctx = env === undefined ? {} : { environment: { config: { ...resolved, ...env } } };
  await plugin.closeBundle?.call(ctx, closeError);
  return calls();
}

test('the plugin object', () => {
  const p = precompress();
  assert.equal(p.name, 'precompressor');
  assert.equal(p.apply({}, { command: 'build', mode: 'production' }), true);
  assert.equal(p.apply({}, { command: 'serve', mode: 'development' }), false, 'not in the dev server');
  assert.equal(p.apply({}, { command: 'serve', mode: 'production', isPreview: true }), true, 'vite preview');
  assert.equal(typeof p.configurePreviewServer, 'function');
  assert.equal(p.enforce, 'post');
  assert.equal(typeof p.closeBundle, 'function');
  assert.equal(p.writeBundle, undefined);
});

test('runs precompress on outDir, relative to root, in root', { skip }, async () => {
  assert.deepEqual(await build({ formats: ['br'] }), [`${root}|dist|--formats|br`]);
});

test('the default cache is the binary\'s, and Vite\'s base as --base', { skip }, async () => {
  const saved = process.env.PRECOMPRESS_CACHE_DIR;
  delete process.env.PRECOMPRESS_CACHE_DIR;
  try {
    // node_modules/.cache/precompress of the project, found by the binary
    // from outDir as `precompress dist` and `precompress check dist` find it.
    assert.deepEqual(await build({ cacheDir: undefined }), [`${root}|dist`]);
    assert.deepEqual(await build({ cacheDir: false }), [`${root}|dist|--no-cache`]);
    assert.deepEqual(await build({ cacheDir: 'c', check: true }), [
      `${root}|dist|--cache-dir|${path.join(root, 'c')}`,
      `${root}|check|dist|--cache-dir|${path.join(root, 'c')}`,
    ]);
    assert.deepEqual(await build({}, { config: { base: '/sub/' } }), [`${root}|dist|--base|/sub/`]);
    assert.deepEqual(await build({}, { config: { base: '/' } }), [`${root}|dist`], 'the default, not passed');
    assert.deepEqual(await build({}, { config: { base: 'https://cdn.example.com/app/' } }), [`${root}|dist|--base|/app/`]);
    // A relative base is not known at build time: none passed, and a warning.
    assert.deepEqual(await build({}, { config: { base: './' } }), [`${root}|dist`]);
    assert.match(logged.map(([, m]) => m).join('\n'), /base "\.\/" is relative/);
    process.env.PRECOMPRESS_CACHE_DIR = '/elsewhere';
    assert.deepEqual(await build({ cacheDir: undefined }), [`${root}|dist`], 'the variable is the binary\'s');
  } finally {
    if (saved === undefined) delete process.env.PRECOMPRESS_CACHE_DIR;
    else process.env.PRECOMPRESS_CACHE_DIR = saved;
  }
});

test('outDir outside root is passed absolute', { skip }, async () => {
  const out = path.join(tmp, 'elsewhere');
  assert.deepEqual(await build({}, { config: { build: { outDir: out } } }), [`${root}|${out}`]);
});

test('check: true runs precompress check with the same manifest', { skip }, async () => {
  assert.deepEqual(await build({ check: true, manifest: 'm.json' }), [
    `${root}|dist|--manifest|${path.join(root, 'dist', 'm.json')}`,
    `${root}|check|dist|--manifest|${path.join(root, 'dist', 'm.json')}`,
  ]);
});

test('what precompress prints goes through Vite\'s logger, so logLevel governs it', { skip }, async () => {
  process.env.FAKE_STDOUT = 'precompress: 3 files (1 KiB), 2 compressed, 0 errors';
  process.env.FAKE_STDERR = 'precompress: warning: assets/x.js: something worth knowing';
  try {
    // verbose never meets --quiet: the logger, not a flag, silences it.
    assert.deepEqual(await build({ verbose: true }, { config: { logLevel: 'silent' } }), [`${root}|dist|--verbose`]);
    assert.deepEqual(logged, [
      ['info', 'precompress: 3 files (1 KiB), 2 compressed, 0 errors'],
      ['warn', 'precompress: warning: assets/x.js: something worth knowing'],
    ]);
  } finally {
    delete process.env.FAKE_STDOUT;
    delete process.env.FAKE_STDERR;
  }
});

test('library mode and frameworks\' intermediate builds are left alone, with a warning saying why', { skip }, async () => {
  const said = () => logged.filter(([l]) => l === 'warn').map(([, m]) => m).join('\n');
  assert.deepEqual(await build({}, { config: { build: { lib: { entry: 'src/index.js' } } } }), []);
  assert.match(said(), /library mode \(build\.lib\) builds a package to publish.*set `library: true`/);
  assert.deepEqual(await build({ library: true }, { config: { build: { lib: { entry: 'x.js' } } } }), [`${root}|dist`]);
  assert.deepEqual(await build({}, { config: { plugins: [{ name: 'astro:build' }] } }), []);
  assert.match(said(), /Astro is still writing dist .*use precompressor\/astro/);
  assert.deepEqual(await build({}, { config: { build: { outDir: '.svelte-kit/output/client' } } }), []);
  assert.match(said(), /SvelteKit is still writing \.svelte-kit\/output\/client/);
  assert.deepEqual(await build({}, { config: { build: { outDir: '.nuxt/dist/client' } } }), []);
  assert.match(said(), /Nuxt is still writing/);
});

test('include and exclude take RegExps, tested against each output path', { skip }, async () => {
  const dist = path.join(root, 'dist');
  mkdirSync(path.join(dist, 'assets'), { recursive: true });
  for (const f of ['index.html', 'assets/app.js', 'assets/app.js.map', 'assets/a[1].css']) writeFileSync(path.join(dist, f), 'x');
  try {
    const [call] = await build({ exclude: [/\.map$/, 'stats.json'], include: [/^assets\//] });
    assert.deepEqual(call.split('|').slice(2).sort(), [
      '--exclude=./assets/app.js.map',
      '--exclude=stats.json',
      '--include=./assets/a\\[1\\].css',
      '--include=./assets/app.js',
      '--include=./assets/app.js.map',
    ]);
    // An include RegExp that matches nothing includes nothing.
    const [none] = await build({ include: /\.wasm$/ });
    assert.deepEqual(none.split('|').slice(2), ['--include=./[.]precompress-matches-nothing']);
  } finally {
    rmSync(dist, { recursive: true, force: true });
  }
});

test('a typo gets the nearest option name', () => {
  assert.throws(() => precompress({ brotliQualty: 5 }), /unknown option `brotliQualty` \(did you mean `brotliQuality`\?\)/);
  assert.throws(() => precompress({ exlude: ['*.map'] }), /did you mean `exclude`/);
  assert.throws(() => precompress({ threshold: 1024 }), /did you mean `minSize`/);
  assert.throws(() => precompress({ zzz: 1 }), (e) => !/did you mean/.test(e.message));
});

test('a dictionaryFrom folder that does not exist fails the build at its start', async () => {
  const plugin = precompress({ binary: fake, dictionaryFrom: ['../release-41/dist'] });
  assert.throws(
    () => plugin.configResolved({ root, logger, build: { outDir: 'dist' } }),
    /option `dictionaryFrom` names \.\.\/release-41\/dist, which does not exist/,
  );
});

test('a dictionaryFrom site is a URL, not a folder that must exist', () => {
  const plugin = precompress({ binary: fake, dictionaryFrom: ['https://example.com/'] });
  plugin.configResolved({ root, logger, build: { outDir: 'dist' } });
});

test('nothing runs after a failed build, for a server environment, an ssr build, build.write false, or disable', { skip }, async () => {
  assert.deepEqual(await build({}, { error: new Error('bundling failed') }), []);
  // A bundler that calls closeBundle without the error (older Rollup): buildEnd saw it.
  assert.deepEqual(await build({}, { error: new Error('bundling failed'), closeError: null }), []);
  assert.deepEqual(await build({}, { closeError: new Error('writing failed') }), []);
  assert.deepEqual(await build({}, { env: { consumer: 'server' } }), []);
  assert.deepEqual(await build({}, { env: { consumer: 'client' } }), [`${root}|dist`]);
  assert.deepEqual(await build({}, { config: { build: { ssr: 'src/entry-server.js' } } }), []);
  assert.deepEqual(await build({}, { config: { build: { write: false } } }), []);
  assert.deepEqual(await build({ disable: true }), []);
  const off = precompress({ disable: true, formats: ['br'] });
  assert.deepEqual(Object.keys(off).sort(), ['apply', 'name']);
});

test('a failing run fails the build with the command and what it printed', { skip }, async () => {
  process.env.FAKE_EXIT = '1';
  process.env.FAKE_STDERR = 'precompress: over budget: assets/app.js: br 571 B is over the budget *.js=100 B';
  try {
    await assert.rejects(build({ budgets: { '*.js': 100 } }), (e) => {
      assert.match(e.message, /^precompressor\/vite: `precompress dist '--budget=\*\.js=100'` exited with code 1\n/);
      assert.match(e.message, /\n {2}precompress: over budget: assets\/app\.js/);
      return true;
    });
    // Said once: in the build's error, not also as a warning.
    assert.deepEqual(logged, []);
  } finally {
    delete process.env.FAKE_EXIT;
    delete process.env.FAKE_STDERR;
  }
});

test('a bad option throws when the plugin is created, before any hook', () => {
  assert.throws(() => precompress({ zstdLevel: 30 }), /precompressor\/vite: option `zstdLevel` must be an integer from 1 to 22, got 30/);
});

test('no binary: the build fails at its start, with the message', async () => {
  const missing = path.join(tmp, 'nope');
  await assert.rejects(build({ binary: missing }), /the `binary` option names .*nope, which does not exist/);
  const plugin = precompress({ binary: missing });
  assert.throws(() => plugin.configResolved({ root, build: { outDir: 'dist' } }), /the `binary` option names .*nope, which does not exist/);
  // Not for a build it will not touch.
  plugin.configResolved({ root, build: { outDir: 'dist', ssr: 'src/entry-server.js' } });
  plugin.configResolved({ root, build: { outDir: 'dist', lib: { entry: 'x.js' } } });
});

const real = process.env.PRECOMPRESS_BINARY;
test('the real binary accepts every flag the options map to', { skip: real ? false : 'PRECOMPRESS_BINARY is not set' }, () => {
  const site = path.join(tmp, 'real', 'dist');
  const prev = path.join(tmp, 'real', 'prev');
  mkdirSync(path.join(site, 'assets'), { recursive: true });
  mkdirSync(prev, { recursive: true });
  writeFileSync(path.join(site, 'assets', 'app.js'), 'console.log("precompress");\n'.repeat(200));
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><p>hi</p>\n'.repeat(100));
  // Every run option, at its first sample in the binary's table (fixtures/options.json),
  // with the values below chosen for what they show; then the plugin's own.
  const table = JSON.parse(readFileSync(new URL('../../../fixtures/options.json', import.meta.url), 'utf8'));
  const samples = Object.fromEntries(table.options.filter((r) => r.plugin !== null).map((r) => [r.plugin, r.samples[0].value]));
  const all = {
    ...samples,
    formats: ['br', 'gzip'],
    include: ['*.js', '*.html'],
    exclude: ['*.map', /\.txt$/],
    minSize: '1KiB',
    manifest: 'm.json',
    threads: 2,
    cacheDir: 'cache',
    cacheMaxSize: '500MB',
    dictionaryFrom: ['prev'],
    sharedDictionary: 'off',
    budgets: { 'assets/**/*.js': '150KB' },
    check: true,
    verbose: true,
    binary: real,
    disable: false,
    library: false,
  };
  assert.deepEqual(Object.keys(all).sort(), [...OPTION_NAMES].sort(), 'every option is exercised');
  const o = validateOptions(all);
  writeFileSync(path.join(site, 'notes[1].txt'), 'a note, not compressed\n'.repeat(100));
  const args = [...runArgs(o, { dir: 'dist', root: path.dirname(site), outDir: site }), ...regexpArgs(o, ['notes[1].txt', 'index.html'])];
  const r = spawnSync(real, args, { cwd: path.dirname(site), encoding: 'utf8' });
  assert.equal(r.status, 0, `precompress ${args.join(' ')}\n${r.stdout}${r.stderr}`);
  assert.ok(existsSync(path.join(site, 'assets', 'app.js.br')));
  assert.ok(existsSync(path.join(site, 'm.json')));
  assert.ok(!existsSync(path.join(site, 'assets', 'app.js.zst')), 'formats was applied');
  assert.ok(!existsSync(path.join(site, 'notes[1].txt.br')), 'the RegExp exclude was applied, brackets and all');
  assert.ok(existsSync(path.join(site, 'index.html.br')));
  assert.ok(existsSync(path.join(path.dirname(site), 'cache')), 'cacheDir was applied');
});

test("a failing run's error never quotes the site's password (#46)", { skip }, async () => {
  process.env.FAKE_EXIT = '1';
  try {
    await assert.rejects(build({ dictionaryFrom: ['https://deploy:ab/cdS3CR3T@example.com/'] }), (e) => {
      assert.doesNotMatch(e.message, /S3CR3T|deploy:/);
      assert.match(e.message, /https:\/\/\*\*\*@example\.com\//);
      return true;
    });
  } finally {
    delete process.env.FAKE_EXIT;
  }
});

test('redactUserinfo hides what probe::redact_userinfo hides', () => {
  for (const [text, want] of [
    ['http://u:p@h:1/a.js: refused', 'http://***@h:1/a.js: refused'],
    ['a http://u:p@h and https://x:y@z/?q@r', 'a http://***@h and https://***@z/?q@r'],
    ['http://h/path@x', 'http://h/path@x'],
    ['https://deploy:ab/cdS3CR3T@host/: not a URL', 'https://***@host/: not a URL'],
    ["'https://u:p?w@h/x' is", "'https://***@h/x' is"],
    ['https://u:p#w@h/', 'https://***@h/'],
    ['http://h:8080/a?mail=x@y', 'http://h:8080/a?mail=x@y'],
    ['http://[::1]:80/p@q', 'http://[::1]:80/p@q'],
  ]) {
    assert.equal(redactUserinfo(text), want, text);
  }
});
