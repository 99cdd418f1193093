// The Vite plugin's hooks, driven by hand with a stand-in binary that records
// how it was called; and, when PRECOMPRESS_BINARY names the real binary
// (npm/test.sh sets it), every mapped flag run through the real one.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { OPTION_NAMES, runArgs, validateOptions } from '../lib/options.js';
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
[ -n "$FAKE_STDERR" ] && printf '%s\\n' "$FAKE_STDERR" >&2
exit "\${FAKE_EXIT:-0}"
`,
);
chmodSync(fake, 0o755);

const root = path.join(tmp, 'app');
mkdirSync(root, { recursive: true });
const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

/** Runs the build hooks the way Vite does; `env` is Vite 6+'s this.environment. */
async function build(options, { config = {}, env, error, closeError = error } = {}) {
  rmSync(log, { force: true });
  // No cache unless a test asks: the default one is tested on its own.
  const plugin = precompress({ binary: fake, cacheDir: false, ...options });
  const resolved = { root, logLevel: 'info', ...config, build: { outDir: 'dist', write: true, ...config.build } };
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
  assert.equal(p.apply, 'build');
  assert.equal(p.enforce, 'post');
  assert.equal(typeof p.closeBundle, 'function');
  assert.equal(p.writeBundle, undefined);
});

test('runs precompress on outDir, relative to root, in root', { skip }, async () => {
  assert.deepEqual(await build({ formats: ['br'] }), [`${root}|dist|--formats|br`]);
});

test('the default cache under node_modules/.cache, and Vite\'s base as --base', { skip }, async () => {
  const cache = path.join(root, 'node_modules', '.cache', 'precompress');
  const saved = process.env.PRECOMPRESS_CACHE_DIR;
  delete process.env.PRECOMPRESS_CACHE_DIR;
  try {
    assert.deepEqual(await build({ cacheDir: undefined }), [`${root}|dist|--cache-dir|${cache}`]);
    assert.deepEqual(await build({}, { config: { base: '/sub/' } }), [`${root}|dist|--base|/sub/`]);
    assert.deepEqual(await build({}, { config: { base: '/' } }), [`${root}|dist`], 'the default, not passed');
    assert.deepEqual(await build({}, { config: { base: 'https://cdn.example.com/app/' } }), [`${root}|dist|--base|/app/`]);
    // A relative base is not known at build time: none passed, and a warning.
    const warned = [];
    const logger = { warn: (m) => warned.push(m), info() {}, error() {} };
    assert.deepEqual(await build({}, { config: { base: './', logger } }), [`${root}|dist`]);
    assert.match(warned.join('\n'), /base "\.\/" is relative/);
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

test('logLevel error or silent: --quiet', { skip }, async () => {
  assert.deepEqual(await build({}, { config: { logLevel: 'silent' } }), [`${root}|dist|--quiet`]);
  assert.deepEqual(await build({}, { config: { logLevel: 'warn' } }), [`${root}|dist`]);
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
  plugin.configResolved({ root, build: { outDir: 'dist' } });
  assert.throws(() => plugin.buildStart.call({}), /the `binary` option names .*nope, which does not exist/);
  // Not for a build it will not touch.
  plugin.buildStart.call({ environment: { config: { root, consumer: 'server', build: {} } } });
});

const real = process.env.PRECOMPRESS_BINARY;
test('the real binary accepts every flag the options map to', { skip: real ? false : 'PRECOMPRESS_BINARY is not set' }, () => {
  const site = path.join(tmp, 'real', 'dist');
  const prev = path.join(tmp, 'real', 'prev');
  mkdirSync(path.join(site, 'assets'), { recursive: true });
  mkdirSync(prev, { recursive: true });
  writeFileSync(path.join(site, 'assets', 'app.js'), 'console.log("precompress");\n'.repeat(200));
  writeFileSync(path.join(site, 'index.html'), '<!doctype html><p>hi</p>\n'.repeat(100));
  const all = {
    formats: ['br', 'gzip'],
    brotliQuality: 5,
    zstdLevel: 3,
    gzipLevel: 6,
    minRatio: 0.9,
    include: ['*.js', '*.html'],
    exclude: ['*.map'],
    minSize: '1KiB',
    manifest: 'm.json',
    cacheDir: 'cache',
    dictionaryFrom: ['prev'],
    sharedDictionary: false,
    budgets: { 'assets/**/*.js': '150KB' },
    check: true,
    verbose: true,
    binary: real,
    disable: false,
  };
  assert.deepEqual(Object.keys(all).sort(), [...OPTION_NAMES].sort(), 'every option is exercised');
  const args = runArgs(validateOptions(all), { dir: 'dist', root: path.dirname(site), outDir: site });
  const r = spawnSync(real, args, { cwd: path.dirname(site), encoding: 'utf8' });
  assert.equal(r.status, 0, `precompress ${args.join(' ')}\n${r.stdout}${r.stderr}`);
  assert.ok(existsSync(path.join(site, 'assets', 'app.js.br')));
  assert.ok(existsSync(path.join(site, 'm.json')));
  assert.ok(!existsSync(path.join(site, 'assets', 'app.js.zst')), 'formats was applied');
  assert.ok(existsSync(path.join(path.dirname(site), 'cache')), 'cacheDir was applied');
});
