// Finding the binary: the override, this platform's package, and the message
// for each way it can be missing (it must name the platform, the package and
// the fixes). Every input is injected: no platform package needs installing.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BINARY_ENV, BinaryNotFoundError, VERSION, detectLibc, findBinary } from '../lib/binary.js';
import { PLATFORMS, packageName } from '../lib/platforms.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'precompress-binary-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const fake = path.join(tmp, 'precompress');
writeFileSync(fake, '');

/** A resolve() that knows one installed package, at `version`. */
function installed(pkg, version = VERSION) {
  const dir = path.join(tmp, 'node_modules', pkg);
  mkdirSync(path.join(dir, 'bin'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: pkg, version }));
  return (id) => {
    if (id.startsWith(`${pkg}/`)) return path.join(dir, id.slice(pkg.length + 1));
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  };
}
const nothing = (id) => {
  throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
};
const glibc = () => 'glibc';

function fails(o, ...patterns) {
  assert.throws(
    () => findBinary({ env: {}, libc: glibc, resolve: nothing, ...o }),
    (e) => {
      assert.ok(e instanceof BinaryNotFoundError, `not a BinaryNotFoundError: ${e}`);
      for (const p of patterns) assert.match(e.message, p);
      return true;
    },
  );
}

test('the package for each platform, at the same version', () => {
  for (const [key, p] of Object.entries(PLATFORMS)) {
    const pkg = packageName(key);
    const found = findBinary({ env: {}, platform: p.os, arch: p.cpu, libc: glibc, resolve: installed(pkg) });
    assert.equal(found.source, pkg);
    assert.equal(found.path, path.join(tmp, 'node_modules', pkg, 'bin', p.exe));
  }
  assert.equal(PLATFORMS['win32-x64'].exe, 'precompress.exe');
});

test('PRECOMPRESS_BINARY wins over the package, and the option over both', () => {
  const other = path.join(tmp, 'other');
  writeFileSync(other, '');
  const resolve = installed('precompressor-linux-x64');
  const env = { [BINARY_ENV]: fake };
  assert.deepEqual(findBinary({ env, platform: 'linux', arch: 'x64', resolve }), { path: fake, source: 'env' });
  assert.deepEqual(findBinary({ override: other, env, platform: 'linux', arch: 'x64', resolve }), {
    path: other,
    source: 'option',
  });
  // On a platform without a package too: that is what it is for.
  assert.equal(findBinary({ env, platform: 'freebsd', arch: 'x64', resolve: nothing }).path, fake);
  // And on musl.
  assert.equal(findBinary({ env, platform: 'linux', arch: 'x64', libc: () => 'musl', resolve: nothing }).path, fake);
});

test('PRECOMPRESS_BINARY naming nothing, or a folder, is an error saying so', () => {
  fails({ env: { [BINARY_ENV]: path.join(tmp, 'missing') } }, /PRECOMPRESS_BINARY names .*missing, which does not exist/);
  fails({ env: { [BINARY_ENV]: tmp } }, /PRECOMPRESS_BINARY names .*, which is not a file/);
  fails({ override: path.join(tmp, 'missing') }, /the `binary` option names .*missing, which does not exist/);
});

test('the optional package not installed (--omit=optional)', () => {
  fails(
    { platform: 'linux', arch: 'x64' },
    /the package precompressor-linux-x64, which holds the binary for this platform \(linux-x64, glibc\), is not installed/,
    /optional dependency of precompressor/,
    /without --omit=optional/,
    /cargo install precompressor/,
    /set PRECOMPRESS_BINARY=/,
  );
  fails({ platform: 'darwin', arch: 'arm64' }, /the package precompressor-darwin-arm64, .*\(darwin-arm64\), is not installed/);
});

test('an unsupported platform', () => {
  fails(
    { platform: 'freebsd', arch: 'x64' },
    /no prebuilt binary for this platform \(freebsd-x64\)/,
    /packages for linux-x64 \(glibc\), linux-arm64 \(glibc\), darwin-x64, darwin-arm64, win32-x64/,
    /cargo install precompressor/,
    /PRECOMPRESS_BINARY/,
  );
  fails({ platform: 'win32', arch: 'arm64' }, /\(win32-arm64\)/);
  fails({ platform: 'linux', arch: 'ia32' }, /\(linux-ia32\)/);
});

test('musl libc, even with the glibc package installed', () => {
  const resolve = installed('precompressor-linux-arm64');
  fails(
    { platform: 'linux', arch: 'arm64', libc: () => 'musl', resolve },
    /this is linux-arm64 with musl libc, and precompressor-linux-arm64 holds a glibc build \(glibc 2.17 or newer\); there is no musl package/,
    /cargo install precompressor/,
  );
  // libc is asked only on linux.
  findBinary({ env: {}, platform: 'darwin', arch: 'x64', libc: () => assert.fail('asked'), resolve: installed('precompressor-darwin-x64') });
});

test('a platform package of another version', () => {
  fails(
    { platform: 'linux', arch: 'x64', resolve: installed('precompressor-linux-x64', '0.0.1') },
    new RegExp(`precompressor-linux-x64 is version 0.0.1, and precompressor is ${VERSION.replaceAll('.', '\\.')}; they must be the same`),
  );
});

test('detectLibc on this machine', () => {
  const libc = detectLibc();
  if (process.platform !== 'linux') return assert.equal(libc, undefined);
  const report = process.report.getReport().header.glibcVersionRuntime;
  assert.equal(libc, report ? 'glibc' : 'musl');
});

test('PRECOMPRESS_BIN (the build scripts\' variable) is not read by the launcher, and it says so', () => {
  const said = [];
  const resolve = installed('precompressor-linux-x64');
  const found = findBinary({ env: { PRECOMPRESS_BIN: '/nope' }, platform: 'linux', arch: 'x64', libc: glibc, resolve, warn: (m) => said.push(m) });
  assert.equal(found.source, 'precompressor-linux-x64');
  assert.equal(said.length, 1);
  assert.match(said[0], /PRECOMPRESS_BIN is set and not read; the variable that names a binary is PRECOMPRESS_BINARY/);
  said.length = 0;
  findBinary({ env: { PRECOMPRESS_BIN: '/nope', [BINARY_ENV]: fake }, platform: 'linux', arch: 'x64', resolve, warn: (m) => said.push(m) });
  assert.deepEqual(said, []);
});
