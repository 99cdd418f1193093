// bin/precompress.js against a stand-in binary (a shell script named by
// PRECOMPRESS_BINARY): arguments and stdio pass through, the exit code and a
// fatal signal come back, a signal to the launcher reaches the binary.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const launcher = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'precompress.js');
const tmp = mkdtempSync(path.join(tmpdir(), 'precompress-launcher-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const skip = process.platform === 'win32' ? 'the stand-in binaries are shell scripts' : false;

function script(name, body) {
  const file = path.join(tmp, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const env = (bin) => ({ ...process.env, PRECOMPRESS_BINARY: bin });

test('arguments, stdin and stdout pass through; the exit code comes back', { skip }, () => {
  const bin = script('echo', 'printf "%s|" "$@"; read -r line; printf "stdin=%s" "$line"; echo oops >&2; exit 3');
  const r = spawnSync(process.execPath, [launcher, 'dist/', '--formats', 'br,gzip', 'a b'], {
    env: env(bin),
    input: 'hello\n',
    encoding: 'utf8',
  });
  assert.equal(r.stdout, 'dist/|--formats|br,gzip|a b|stdin=hello');
  assert.equal(r.stderr, 'oops\n');
  assert.equal(r.status, 3);
});

test('exit 0 is 0', { skip }, () => {
  const r = spawnSync(process.execPath, [launcher], { env: env(script('ok', 'exit 0')) });
  assert.equal(r.status, 0);
});

test('a binary killed by a signal: the launcher ends by the same signal', { skip }, () => {
  const r = spawnSync(process.execPath, [launcher], { env: env(script('die', 'kill -TERM $$')) });
  assert.equal(r.status, null);
  assert.equal(r.signal, 'SIGTERM');
});

test('SIGTERM to the launcher reaches the binary, whose exit code comes back', { skip }, async () => {
  const bin = script('wait', 'trap \'echo "got TERM"; exit 143\' TERM; echo "ready $$"; while :; do sleep 0.05; done');
  const child = spawn(process.execPath, [launcher], { env: env(bin), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let pid;
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise((resolve) =>
    child.stdout.on('data', (d) => {
      out += d;
      pid = Number(out.match(/ready (\d+)/)?.[1]) || undefined;
      if (pid) resolve();
    }),
  );
  try {
    child.kill('SIGTERM');
    const { code, signal } = await exited;
    assert.match(out, /got TERM/);
    assert.deepEqual({ code, signal }, { code: 143, signal: null });
  } finally {
    // When forwarding is broken the stand-in outlives the launcher: end it, or this test hangs.
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone, as it should be.
    }
    child.stdout.destroy();
  }
});

test('a binary that cannot be run is an error naming it, exit 1', { skip }, () => {
  const notExecutable = path.join(tmp, 'plain');
  writeFileSync(notExecutable, 'not a program');
  const r = spawnSync(process.execPath, [launcher], { env: env(notExecutable), encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /precompress: could not run .*plain: .*EACCES/);
});

test('no binary: the message, exit 1', () => {
  // In the source tree no platform package is installed (and this version is a placeholder).
  const { PRECOMPRESS_BINARY: _, ...rest } = process.env;
  const r = spawnSync(process.execPath, [launcher, '--version'], { env: rest, encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^precompress: /);
  assert.match(r.stderr, /precompressor-|no prebuilt binary/);
  assert.match(r.stderr, /cargo install precompressor/);
});
