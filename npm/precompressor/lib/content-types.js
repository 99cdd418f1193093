// Generated from src/model/content.rs, the one table of Content-Types: do not
// edit. `PRECOMPRESS_BLESS=1 cargo test --lib content` writes it anew; a unit
// test there fails while it differs.
// A Map, not an object: the extension comes from the request, and `x.constructor`
// or `x.__proto__` must not find Object.prototype's members.
export const CONTENT_TYPES = new Map([
  ["js", "text/javascript; charset=utf-8"],
  ["mjs", "text/javascript; charset=utf-8"],
  ["cjs", "text/javascript; charset=utf-8"],
  ["jsx", "text/javascript; charset=utf-8"],
  ["ts", "text/plain; charset=utf-8"],
  ["tsx", "text/plain; charset=utf-8"],
  ["css", "text/css; charset=utf-8"],
  ["html", "text/html; charset=utf-8"],
  ["htm", "text/html; charset=utf-8"],
  ["xhtml", "application/xhtml+xml; charset=utf-8"],
  ["svg", "image/svg+xml"],
  ["json", "application/json"],
  ["jsonld", "application/ld+json"],
  ["map", "application/json"],
  ["webmanifest", "application/manifest+json"],
  ["xml", "application/xml"],
  ["rss", "application/rss+xml"],
  ["atom", "application/atom+xml"],
  ["txt", "text/plain; charset=utf-8"],
  ["md", "text/markdown; charset=utf-8"],
  ["csv", "text/csv; charset=utf-8"],
  ["tsv", "text/tab-separated-values; charset=utf-8"],
  ["yaml", "application/yaml"],
  ["yml", "application/yaml"],
  ["vtt", "text/vtt; charset=utf-8"],
  ["wgsl", "text/plain; charset=utf-8"],
  ["glsl", "text/plain; charset=utf-8"],
  ["gltf", "model/gltf+json"],
  ["wasm", "application/wasm"],
  ["ico", "image/vnd.microsoft.icon"],
  ["bmp", "image/bmp"],
  ["ttf", "font/ttf"],
  ["otf", "font/otf"],
  ["eot", "application/vnd.ms-fontobject"],
  ["png", "image/png"],
  ["apng", "image/apng"],
  ["jpg", "image/jpeg"],
  ["jpeg", "image/jpeg"],
  ["gif", "image/gif"],
  ["webp", "image/webp"],
  ["avif", "image/avif"],
  ["heic", "image/heic"],
  ["heif", "image/heif"],
  ["jxl", "image/jxl"],
  ["tif", "image/tiff"],
  ["tiff", "image/tiff"],
  ["woff", "font/woff"],
  ["woff2", "font/woff2"],
  ["glb", "model/gltf-binary"],
  ["pdf", "application/pdf"],
  ["zip", "application/zip"],
  ["gz", "application/gzip"],
  ["mp4", "video/mp4"],
  ["m4v", "video/mp4"],
  ["webm", "video/webm"],
  ["ogv", "video/ogg"],
  ["mov", "video/quicktime"],
  ["mp3", "audio/mpeg"],
  ["m4a", "audio/mp4"],
  ["aac", "audio/aac"],
  ["ogg", "audio/ogg"],
  ["oga", "audio/ogg"],
  ["opus", "audio/ogg"],
  ["flac", "audio/flac"],
  ["wav", "audio/wav"],
]);

/** The Content-Type of `key` by its extension, as `precompress serve` sends it
 * (model::content::extension: the last segment's, after a non-empty stem,
 * ASCII letters lowered). */
export function contentTypeOf(key) {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return 'application/octet-stream';
  const ext = name.slice(dot + 1).replace(/[A-Z]/g, (c) => c.toLowerCase());
  return CONTENT_TYPES.get(ext) ?? 'application/octet-stream';
}
