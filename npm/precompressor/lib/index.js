// `import { binaryPath } from 'precompressor'`: the binary this install runs,
// for scripts and other bundler plugins that call it themselves.

import { findBinary } from './binary.js';

export { BINARY_ENV, BinaryNotFoundError, VERSION } from './binary.js';

/** The path of the precompress binary (PRECOMPRESS_BINARY, or this platform's package); throws BinaryNotFoundError. */
export function binaryPath() {
  return findBinary().path;
}
