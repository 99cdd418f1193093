// Made from src/cli/options.rs (the one definition of every option of
// `precompress DIR`) by `PRECOMPRESS_BLESS=1 cargo test --bin precompress options`;
// do not edit. options.js validates each option and turns it into its flag from these rows.

// A size's units, lower case (src/cli/budget.rs).
export const SIZE_UNITS = ["b","k","kb","m","mb","g","gb","kib","mib","gib"];

export const OPTIONS = [
  {"flag":"formats","kind":"list","plugin":"formats","values":["br","zstd","gzip"]},
  {"flag":"brotli-quality","kind":"int","max":11,"min":0,"plugin":"brotliQuality"},
  {"flag":"zstd-level","kind":"int","max":22,"min":1,"plugin":"zstdLevel"},
  {"flag":"gzip-level","kind":"int","max":12,"min":1,"plugin":"gzipLevel"},
  {"flag":"min-ratio","kind":"ratio","plugin":"minRatio"},
  {"flag":"include","kind":"globs","plugin":"include"},
  {"flag":"exclude","kind":"globs","plugin":"exclude"},
  {"flag":"min-size","kind":"size","plugin":"minSize"},
  {"flag":"follow-links","kind":"switch","plugin":"followLinks"},
  {"flag":"manifest","from":"outDir","kind":"path","plugin":"manifest"},
  {"flag":"threads","kind":"int","max":65535,"min":1,"plugin":"threads"},
  {"flag":"cache-dir","from":"root","kind":"path","onFalse":"--no-cache","plugin":"cacheDir"},
  {"flag":"cache-max-size","kind":"size","plugin":"cacheMaxSize"},
  {"flag":"dictionary-from","kind":"releases","plugin":"dictionaryFrom"},
  {"flag":"delta-formats","kind":"list","plugin":"deltaFormats","values":["dcb","dcz"]},
  {"flag":"max-files","kind":"int","min":1,"plugin":"maxFiles"},
  {"flag":"delta-releases","kind":"int","max":4,"min":1,"plugin":"deltaReleases"},
  {"flag":"no-use-as-dictionary","kind":"negation","plugin":"useAsDictionary"},
  {"flag":"no-page-dictionary","kind":"negation","plugin":"pageDictionary"},
  {"bools":["auto","off"],"flag":"shared-dictionary","kind":"choice","plugin":"sharedDictionary","values":["auto","on","off"]},
  {"flag":"verbose","kind":"switch","plugin":"verbose"},
  {"flag":"budget","kind":"budgets","plugin":"budgets"},
];
