//! Measures what compressing a large file in parts costs in bytes and saves in
//! time: `cargo run --release --example split_cost -- FILE [PARTS...]`.
use std::time::Instant;

use precompressor::encode::brotli_split::{compress_part, concat_parts};
use precompressor::encode::{BrotliEncoder, ContentKind};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("FILE");
    let input = std::fs::read(&path).unwrap();
    let parts: Vec<usize> = args.map(|a| a.parse().unwrap()).collect();
    let enc = BrotliEncoder::new(11);
    let kind = if path.ends_with(".wasm") {
        ContentKind::Binary
    } else {
        ContentKind::Text
    };
    let params = enc.params(input.len(), kind);
    let mut base = 0usize;
    for n in if parts.is_empty() {
        vec![1, 2, 3]
    } else {
        parts
    } {
        let t = Instant::now();
        let mut outs = vec![Vec::new(); n];
        let mut part_secs = Vec::new();
        for (i, o) in outs.iter_mut().enumerate() {
            let tp = Instant::now();
            compress_part(&input, i, n, &params, o).unwrap();
            part_secs.push(tp.elapsed().as_secs_f64());
        }
        let mut out = Vec::new();
        concat_parts(outs, &mut out).unwrap();
        let mut back = Vec::new();
        brotli::BrotliDecompress(&mut &out[..], &mut back).unwrap();
        assert!(back == input);
        if n == 1 {
            base = out.len();
        }
        let longest = part_secs.iter().cloned().fold(0.0, f64::max);
        println!(
            "{path}: {n} parts: {} bytes ({:+.2}% vs 1 part), cpu {:.1}s, longest part {:.1}s",
            out.len(),
            if base > 0 {
                100.0 * (out.len() as f64 / base as f64 - 1.0)
            } else {
                0.0
            },
            t.elapsed().as_secs_f64(),
            longest
        );
    }
}
