//! Any file handed to the manifest loader is refused or indexed; every indexed
//! asset selects to a safe path that is the asset itself or one of its own
//! siblings (`KEY.br`, `KEY.HEX.dcb`, ...: never `.env` or another asset's
//! file), and header values without CR, LF or NUL.
#![no_main]
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use precompressor::model::content::variant_source;
use precompressor::model::dictionary::delta_source;
use precompressor::serve::{path::check_relative, Index, Selection};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(index) = Index::from_json(Path::new("fuzz.json"), text) else {
        return;
    };
    for (key, _) in index.iter() {
        for ae in [
            None,
            Some("gzip, deflate, br, zstd"),
            Some("gzip"),
            Some("identity;q=0"),
        ] {
            match index.select(key, ae) {
                Selection::Found(s) => {
                    let path = s.representation.path.as_str();
                    assert!(check_relative(path).is_ok());
                    let source = variant_source(path)
                        .map(|(src, _)| src)
                        .or_else(|| delta_source(path).map(|(src, _)| src));
                    assert!(path == key || source == Some(key), "{key}: {path}");
                    for (_, v) in &s.headers {
                        assert!(!v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0));
                    }
                }
                Selection::NotAcceptable { .. } => assert_eq!(ae, Some("identity;q=0")),
                Selection::NotInManifest => panic!("{key} vanished"),
            }
        }
    }
});
