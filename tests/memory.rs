//! The memory model (docs/benchmarks.md) with many large same-named dictionaries. Alone
//! in its own test binary: it reads the peak RSS of this process's children,
//! which another test's child would blur.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::*;

/// A large bundle: the same lines in every release, a few edits by `seed`.
fn bundle(seed: u64, bytes: usize) -> Vec<u8> {
    let mut out = String::with_capacity(bytes + 100);
    let (mut base, mut edits) = (42u64, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let next = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    };
    while out.len() < bytes {
        let (a, b) = (next(&mut base) % 5000, next(&mut base) % 100_000);
        out.push_str(&format!("const x{a} = f(x{}, {b});\n", a / 3));
        if next(&mut edits) % 1000 == 0 {
            out.push_str(&format!("/* edit {} */\n", next(&mut edits) % 1_000_000));
        }
    }
    out.into_bytes()
}

fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// Peak RSS of the children waited for so far, in bytes.
fn children_peak_rss() -> u64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct it is given.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) }, 0);
    u.ru_maxrss as u64 * 1024
}

/// Choosing among eight same-named old bundles read all of them whole and
/// held them at once (eight 100 MB bundles: 1.6 GB at two threads, against
/// about 250 MB from the model). With one worker and 24 MiB files the model
/// is min(file, 64 MiB) x 1.3 + 120 MiB + the largest dictionary, 175 MiB;
/// holding all eight took it past 220 MiB.
#[test]
fn many_large_same_named_dictionaries_stay_within_the_memory_model() {
    let tmp = tempfile::tempdir().unwrap();
    let size = 24 << 20;
    for i in 0..8 {
        let p = tmp
            .path()
            .join(format!("prev/assets/app-{:08x}.js", 0x1a2b_3c40 + i));
        write(&p, &bundle(i, size));
    }
    let dist = tmp.path().join("dist");
    write(&dist.join("assets/app-5e6f7a8b.js"), &bundle(100, size));
    let st = std_bin()
        .arg(&dist)
        .args(["--no-config", "-q", "-j", "1", "--formats", "gzip"])
        .args(["--delta-formats", "dcz", "--zstd-level", "3"])
        .arg("--dictionary-from")
        .arg(tmp.path().join("prev"))
        .status()
        .unwrap();
    assert!(st.success());
    let m = manifest(&dist);
    let deltas = m["files"]["assets/app-5e6f7a8b.js"]["deltas"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(deltas, 1, "{m}");
    let model = (size as f64 * 1.3) as u64 + (120 << 20) + size as u64;
    let peak = children_peak_rss();
    assert!(
        peak <= model,
        "peak RSS {} MiB over the model's {} MiB",
        peak >> 20,
        model >> 20
    );
}
