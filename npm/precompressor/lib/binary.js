// Finding the precompress binary, for the `precompress` launcher and the Vite
// plugin. The binary comes from the optional dependency matching this
// platform (npm installs only the one whose os/cpu/libc fit), unless
// PRECOMPRESS_BINARY (or the plugin's `binary` option) names one. No download,
// no postinstall: a missing package is reported with what to do, never fetched.

import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { GLIBC_BASELINE, PLATFORMS, packageName } from './platforms.js';

const require = createRequire(import.meta.url);

/** This package's version; the platform package must have the same one. */
export const VERSION = require('../package.json').version;

/** The environment variable that names a binary to use instead of the platform package's. */
export const BINARY_ENV = 'PRECOMPRESS_BINARY';

/** A binary could not be found; `message` says why and what to do. */
export class BinaryNotFoundError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BinaryNotFoundError';
  }
}

/**
 * 'glibc' or 'musl' on linux, undefined elsewhere or when it cannot tell.
 * Reads ldd (a script on glibc, a link to the musl loader on Alpine) first
 * because process.report costs tens of milliseconds; the report's
 * glibcVersionRuntime is set only when node runs on glibc.
 */
export function detectLibc() {
  if (process.platform !== 'linux') return undefined;
  try {
    const ldd = readFileSync('/usr/bin/ldd', 'latin1');
    if (ldd.includes('musl')) return 'musl';
    if (ldd.includes('GNU C Library') || ldd.includes('GLIBC')) return 'glibc';
  } catch {
    // No ldd (distroless images): ask node.
  }
  try {
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? 'glibc' : 'musl';
  } catch {
    return undefined;
  }
}

const FIXES = (pkg) => [
  'To fix it, do one of:',
  pkg
    ? `  - install the optional dependencies: run \`npm install\` again without --omit=optional / --no-optional (or \`npm install ${pkg}@${VERSION}\`); a lockfile made on another platform can leave it out too`
    : undefined,
  `  - build it with \`cargo install precompressor\` (Rust toolchain), then set ${BINARY_ENV}=$HOME/.cargo/bin/precompress`,
  `  - set ${BINARY_ENV}=/path/to/precompress to use a binary you already have`,
].filter(Boolean);

function supported() {
  return Object.entries(PLATFORMS)
    .map(([key, p]) => (p.libc ? `${key} (${p.libc})` : key))
    .join(', ');
}

/**
 * Where the binary is: `{ path, source }`, source being 'option', 'env' or the
 * package name. Throws BinaryNotFoundError with a message naming the platform,
 * the package looked for and the fixes. Every input can be injected, for tests.
 *
 * @param {object} [o]
 * @param {string} [o.override] a path that wins over everything (the Vite plugin's `binary` option)
 * @param {Record<string, string | undefined>} [o.env]
 * @param {string} [o.platform]
 * @param {string} [o.arch]
 * @param {() => string | undefined} [o.libc]
 * @param {(id: string) => string} [o.resolve] require.resolve from this package
 * @param {(message: string) => void} [o.warn]
 */
export function findBinary({
  override,
  env = process.env,
  platform = process.platform,
  arch = process.arch,
  libc = detectLibc,
  resolve = (id) => require.resolve(id),
  warn = (m) => console.warn(m),
} = {}) {
  const named = override
    ? { source: 'option', what: 'the `binary` option', file: override }
    : env[BINARY_ENV]
      ? { source: 'env', what: BINARY_ENV, file: env[BINARY_ENV] }
      : undefined;
  // The scripts that build this package read PRECOMPRESS_BIN; the launcher
  // reads only BINARY_ENV, and says so rather than ignore it in silence.
  if (!named && env.PRECOMPRESS_BIN) {
    warn(`precompress: warning: PRECOMPRESS_BIN is set and not read; the variable that names a binary is ${BINARY_ENV}`);
  }
  if (named) {
    const { source, what, file } = named;
    const abs = path.resolve(file);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new BinaryNotFoundError(`precompress: ${what} names ${file}, which does not exist.`);
    }
    if (!st.isFile()) throw new BinaryNotFoundError(`precompress: ${what} names ${file}, which is not a file.`);
    return { path: abs, source };
  }

  const key = `${platform}-${arch}`;
  const p = PLATFORMS[key];
  if (!p) {
    throw new BinaryNotFoundError(
      [
        `precompress: no prebuilt binary for this platform (${key}); precompressor has packages for ${supported()}.`,
        ...FIXES(undefined),
      ].join('\n'),
    );
  }
  const pkg = packageName(key);
  if (p.libc) {
    const found = libc();
    if (found && found !== p.libc) {
      throw new BinaryNotFoundError(
        [
          `precompress: this is ${key} with ${found} libc, and ${pkg} holds a ${p.libc} build (glibc ${GLIBC_BASELINE} or newer); there is no ${found} package.`,
          ...FIXES(undefined),
        ].join('\n'),
      );
    }
  }
  let bin;
  try {
    bin = resolve(`${pkg}/bin/${p.exe}`);
  } catch {
    throw new BinaryNotFoundError(
      [
        `precompress: the package ${pkg}, which holds the binary for this platform (${key}${p.libc ? `, ${p.libc}` : ''}), is not installed.`,
        `It is an optional dependency of precompressor ${VERSION}.`,
        ...FIXES(pkg),
      ].join('\n'),
    );
  }
  let version;
  try {
    version = JSON.parse(readFileSync(resolve(`${pkg}/package.json`), 'utf8')).version;
  } catch {
    version = undefined;
  }
  if (version !== VERSION) {
    throw new BinaryNotFoundError(
      [
        `precompress: ${pkg} is version ${version ?? '(unknown)'}, and precompressor is ${VERSION}; they must be the same.`,
        ...FIXES(pkg),
      ].join('\n'),
    );
  }
  return { path: bin, source: pkg };
}
