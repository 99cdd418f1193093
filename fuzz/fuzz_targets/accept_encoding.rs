//! Any header parses, and the choice is always one the client accepts.
#![no_main]
use libfuzzer_sys::fuzz_target;
use precompressor::serve::negotiate::{choose, AcceptEncoding, Choice};
use precompressor::Codec;

fuzz_target!(|data: &[u8]| {
    let header = String::from_utf8_lossy(data);
    let ae = AcceptEncoding::parse(&header);
    let variants = [(Codec::Brotli, 300), (Codec::Zstd, 320), (Codec::Gzip, 400)];
    match choose(Some(&ae), 1000, &variants) {
        Choice::Variant(i) => {
            let w = ae.weight(variants[i].0);
            assert!(w > 0 && w <= 1000, "{header:?} chose a refused coding");
            // Nothing acceptable is ever beaten by a strictly lower weight.
            for (c, _) in variants {
                assert!(ae.weight(c) <= w, "{header:?}: {c:?} weighs more");
            }
        }
        Choice::NotAcceptable => {
            assert!(
                variants.iter().all(|(c, _)| ae.weight(*c) == 0),
                "{header:?}"
            );
        }
        Choice::Identity => {}
    }
    // The same header with no variants never picks one.
    assert!(!matches!(choose(Some(&ae), 1000, &[]), Choice::Variant(_)));
});
