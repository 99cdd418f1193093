//! No request path that parses can name anything but a plain relative path.
#![no_main]
use libfuzzer_sys::fuzz_target;
use precompressor::serve::path::parse_request_path;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = parse_request_path(raw) {
        assert!(!p.key.starts_with('/'), "{raw:?} -> absolute {:?}", p.key);
        assert!(!p.key.contains('\0') && !p.key.contains('\\'), "{raw:?}");
        for seg in p.key.split('/') {
            assert!(seg != ".." && seg != ".", "{raw:?} -> {:?}", p.key);
            assert!(
                p.key.is_empty() || !seg.is_empty(),
                "{raw:?} -> {:?}",
                p.key
            );
        }
    }
});
