//! `precompress serve` and what is generated for the servers precompress
//! does not run: `nginx-map`, `caddy-map`, `apache-map`, `objects`.

use std::io::Write;

use crate::cli::{exit, failed};

/// `precompress nginx-map`, `caddy-map` and `apache-map`: the configuration `render` makes
/// from DIR's manifest on stdout, what it left out on stderr.
pub fn server_map(
    name: &str,
    dir: &std::path::Path,
    manifest: Option<&std::path::Path>,
    base: Option<&str>,
    render: impl Fn(&precompressor::serve::Index) -> (String, Vec<String>),
) -> u8 {
    if !dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", dir.display());
        return exit::USAGE;
    }
    // `load`, as `serve` does: a source rebuilt since the run gets no deltas.
    let mut index = match precompressor::serve::Index::load(dir, manifest) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            return exit::FAILURE;
        }
    };
    if let Some(b) = base {
        if let Some(w) = precompressor::serve::base_mismatch(&index, b) {
            eprintln!("precompress: warning: {name}: {w}");
        }
        index.set_base(b);
    }
    let (config, skipped) = render(&index);
    for s in &skipped {
        eprintln!("precompress: warning: {name}: skipped {s}");
    }
    let _ = std::io::stdout().write_all(config.as_bytes());
    exit::SUCCESS
}

pub fn serve(args: crate::cli::args::ServeArgs) -> u8 {
    use precompressor::serve::http::{run, ServeError, ServeOptions};
    let opts = ServeOptions {
        root: args.site.dir,
        manifest: args.site.manifest,
        addr: args.addr,
        base: args.site.base,
        spa: args.spa,
        threads: args
            .threads
            .and_then(|n| std::num::NonZeroUsize::new(n.into())),
        quiet: args.quiet,
    };
    match run(&opts) {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            match e {
                ServeError::Root { .. } => exit::USAGE,
                _ => exit::FAILURE,
            }
        }
    }
}

/// `precompress objects DIR`: DIR as bucket objects with their headers, or
/// the CloudFront Functions in front of them, on stdout; what is left out on
/// stderr.
pub fn objects(args: crate::cli::args::ObjectsArgs) -> u8 {
    let site = &args.site;
    use crate::cli::args::{EdgeFunction, ObjectsFormat};
    use precompressor::deploy::{cloudfront, objects};
    if !site.dir.is_dir() {
        eprintln!("precompress: error: {}: not a folder", site.dir.display());
        return exit::USAGE;
    }
    if let Some(EdgeFunction::CloudfrontResponse) = args.edge {
        let _ = std::io::stdout().write_all(cloudfront::viewer_response().as_bytes());
        return exit::SUCCESS;
    }
    // `load`, as `serve` does: a source rebuilt since the run is a plain file.
    let mut index = match precompressor::serve::Index::load(&site.dir, site.manifest.as_deref()) {
        Ok(i) => i,
        Err(e) => return failed(&e),
    };
    if let Some(b) = site.base.as_deref() {
        if let Some(w) = precompressor::serve::base_mismatch(&index, b) {
            eprintln!("precompress: warning: objects: {w}");
        }
        index.set_base(b);
    }
    let manifest = site
        .manifest
        .clone()
        .unwrap_or_else(|| precompressor::model::manifest::default_path(&site.dir));
    // The manifest's key, when it lies in DIR: never uploaded, never served.
    let inside = std::fs::canonicalize(&manifest)
        .ok()
        .zip(std::fs::canonicalize(&site.dir).ok())
        .and_then(|(m, d)| {
            m.strip_prefix(d)
                .ok()
                .and_then(|r| r.to_str())
                .map(|r| r.replace('\\', "/"))
        });
    let scan = match objects::scan(&site.dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("precompress: error: {e}");
            return exit::FAILURE;
        }
    };
    let listing = objects::plan(&index, &scan, inside.as_deref());
    for s in &listing.skipped {
        eprintln!("precompress: warning: objects: skipped {s}");
    }
    let out = match (args.edge, args.format) {
        (Some(_), _) => match cloudfront::viewer_request(&listing, &site.dir) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("precompress: error: {e}");
                return exit::FAILURE;
            }
        },
        (None, ObjectsFormat::Json) => objects::json_lines(&listing.objects),
        (None, ObjectsFormat::Tsv) => objects::tsv(&listing.objects),
        (None, format) => {
            let Some(dir) = site.dir.to_str() else {
                eprintln!(
                    "precompress: error: {}: not UTF-8, so the upload commands cannot name it",
                    site.dir.display()
                );
                return exit::USAGE;
            };
            if matches!(format, ObjectsFormat::Aws) {
                objects::aws(&listing.objects, dir)
            } else {
                objects::rclone(&listing.objects, dir)
            }
        }
    };
    let _ = std::io::stdout().write_all(out.as_bytes());
    exit::SUCCESS
}
