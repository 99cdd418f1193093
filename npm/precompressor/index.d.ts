/** The version of precompressor (and of the binary it runs). */
export declare const VERSION: string;

/** The environment variable naming a binary to run instead of the platform package's: `PRECOMPRESS_BINARY`. */
export declare const BINARY_ENV: 'PRECOMPRESS_BINARY';

/** No binary for this platform; the message names the platform, the package looked for and what to do. */
export declare class BinaryNotFoundError extends Error {
  name: 'BinaryNotFoundError';
}

/**
 * The path of the precompress binary: `PRECOMPRESS_BINARY` when set, else the one in this
 * platform's package (`precompressor-<os>-<cpu>`). Throws {@link BinaryNotFoundError}.
 */
export declare function binaryPath(): string;
