#!/usr/bin/env node
// `precompress` from npm: runs the binary from this platform's package
// (precompressor-<os>-<cpu>) with the same arguments, stdio inherited, and
// exits as it did. A signal sent to this process (Ctrl-C, a CI timeout's
// SIGTERM) goes on to the binary, which finishes writing and exits; this
// process then ends the same way.

import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { BinaryNotFoundError, findBinary } from '../lib/binary.js';

let bin;
try {
  bin = findBinary().path;
} catch (e) {
  if (!(e instanceof BinaryNotFoundError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}

// Handlers before the spawn: a signal that came between the spawn and them
// would end this process and leave the binary running. (They run from the
// event loop, so never before `child` is set.)
let child;
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGBREAK'];
const forward = (signal) => {
  // A terminal's Ctrl-C already reached the binary (same process group);
  // sending it again is harmless, and needed when only this process was signalled.
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const s of SIGNALS) {
  try {
    process.on(s, forward);
  } catch {
    // Not a signal on this OS (SIGBREAK off Windows, SIGQUIT on it).
  }
}

child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

child.on('error', (e) => {
  process.stderr.write(`precompress: could not run ${bin}: ${e.message}\n`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  if (signal) {
    // End the way the binary did, so a shell sees 128+N.
    for (const s of SIGNALS) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    // Not every signal ends a node process (node ignores SIGPIPE): then exit as a shell would report it.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
    return;
  }
  process.exit(code ?? 1);
});
