// The platforms precompressor publishes a binary for: one optional npm package
// each, named precompressor-<os>-<cpu> (esbuild's and Biome's layout). This
// table is the one place they are listed: the launcher resolves from it and
// npm/stage.mjs writes the platform packages and the main package's
// optionalDependencies from it.

/**
 * @typedef {object} Platform
 * @property {string} os     process.platform, and the package's `os`
 * @property {string} cpu    process.arch, and the package's `cpu`
 * @property {string} [libc] the package's `libc` (linux only: the binaries are glibc builds)
 * @property {string} exe    the binary's file name in the package's bin/
 */

/** @type {Record<string, Platform>} keyed by `${os}-${cpu}` */
export const PLATFORMS = {
  'linux-x64': { os: 'linux', cpu: 'x64', libc: 'glibc', exe: 'precompress' },
  'linux-arm64': { os: 'linux', cpu: 'arm64', libc: 'glibc', exe: 'precompress' },
  'darwin-x64': { os: 'darwin', cpu: 'x64', exe: 'precompress' },
  'darwin-arm64': { os: 'darwin', cpu: 'arm64', exe: 'precompress' },
  'win32-x64': { os: 'win32', cpu: 'x64', exe: 'precompress.exe' },
};

/** The npm package that holds the binary for `key` (`linux-x64`, ...). */
export function packageName(key) {
  return `precompressor-${key}`;
}

/** The oldest glibc the linux binaries run on (cargo-zigbuild target suffix in the release workflow). */
export const GLIBC_BASELINE = '2.17';
