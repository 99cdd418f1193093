//! One listed asset and its variants checked: each read (never through a
//! link), its hash, size and ETag compared with the manifest's, and decoded
//! (one decoder per codec per thread) and compared with the source.

use std::path::{Path, PathBuf};

use crate::encode::{frame_window_size, new_encoder, Codec, Encoder, Levels};
use crate::fsutil::read_regular;
use crate::model::manifest::Asset;

use super::problem::{problem, Problem, ProblemKind};

/// One decoder per codec, per thread.
#[derive(Default)]
pub(super) struct Decoders([Option<Box<dyn Encoder>>; 3]);

impl Decoders {
    fn get(&mut self, codec: Codec) -> &mut dyn Encoder {
        self.0[codec.index()]
            .get_or_insert_with(|| new_encoder(codec, Levels::default()).expect("encoder starts"))
            .as_mut()
    }
}

pub(super) fn decodes_to(
    dec: &mut Decoders,
    codec: Codec,
    variant: &Path,
    source: &Path,
) -> Result<(), String> {
    let src =
        read_regular(source, u64::MAX).map_err(|e| format!("its source cannot be read ({e})"))?;
    let bytes = read_regular(variant, u64::MAX).map_err(|e| format!("it cannot be read ({e})"))?;
    dec.get(codec)
        .verify(&bytes, &src)
        .map_err(|why| format!("it {why}"))
}

/// Reads a variant or delta the manifest lists: a regular file in DIR,
/// never a symlink (precompress writes files, not links; a link could send a
/// server out of DIR).
pub(super) fn read_written(root: &Path, rel: &str) -> std::io::Result<Vec<u8>> {
    let path = root.join(rel);
    if std::fs::symlink_metadata(&path)?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symlink, not a file precompress wrote",
        ));
    }
    read_regular(&path, u64::MAX)
}

/// A problem when `etag` is not the one precompress derives from `blake3`
/// (each representation's own content, so no two bodies share one).
pub(super) fn etag_problem(path: &str, etag: &str, blake3: &str, out: &mut Vec<Problem>) {
    let want = crate::model::manifest::etag(blake3);
    if etag != want {
        out.push(problem(
            path,
            ProblemKind::EtagMismatch,
            format!("etag {etag} is not {want}, the one its blake3 gives: a server would send it for another body"),
        ));
    }
}

pub(super) fn check_asset(
    root: &Path,
    rel: &str,
    asset: &Asset,
    dec: &mut Decoders,
) -> (Vec<Problem>, u64) {
    let mut out = Vec::new();
    let src_path: PathBuf = root.join(rel);
    let src = match read_regular(&src_path, u64::MAX) {
        Ok(b) => b,
        Err(e) => {
            out.push(problem(
                rel,
                ProblemKind::SourceMissing,
                format!("listed in the manifest but cannot be read: {e}"),
            ));
            return (out, 0);
        }
    };
    if src.len() as u64 != asset.size || blake3::hash(&src).to_hex().as_str() != asset.blake3 {
        out.push(problem(
            rel,
            ProblemKind::SourceChanged,
            "size or blake3 differs from the manifest: rerun precompress",
        ));
    }
    etag_problem(rel, &asset.etag, &asset.blake3, &mut out);
    let mut checked = 0;
    for v in &asset.encodings {
        let Some(codec) = Codec::parse(&v.coding).filter(|c| c.token() == v.coding) else {
            out.push(problem(
                &v.path,
                ProblemKind::BadCoding,
                format!("unknown coding {:?}", v.coding),
            ));
            continue;
        };
        let bytes = match read_written(root, &v.path) {
            Ok(b) => b,
            Err(e) => {
                out.push(problem(
                    &v.path,
                    ProblemKind::VariantMissing,
                    format!("listed in the manifest but cannot be read: {e}"),
                ));
                continue;
            }
        };
        checked += 1;
        if bytes.len() as u64 != v.size || blake3::hash(&bytes).to_hex().as_str() != v.blake3 {
            out.push(problem(
                &v.path,
                ProblemKind::VariantChanged,
                "size or blake3 differs from the manifest",
            ));
        }
        etag_problem(&v.path, &v.etag, &v.blake3, &mut out);
        if codec == Codec::Zstd {
            match frame_window_size(&bytes) {
                Some(w) if w > 8 << 20 => out.push(problem(
                    &v.path,
                    ProblemKind::ZstdWindow,
                    format!("declares a {w}-byte window; browsers accept at most 8 MiB"),
                )),
                None => out.push(problem(
                    &v.path,
                    ProblemKind::VariantCorrupt,
                    "not a zstd frame",
                )),
                _ => {}
            }
        }
        let mut decoded = Vec::new();
        match dec.get(codec).decode(&bytes, src.len(), &mut decoded) {
            Err(e) => out.push(problem(
                &v.path,
                ProblemKind::VariantCorrupt,
                format!("does not decode: {e}"),
            )),
            Ok(()) if decoded != src => out.push(problem(
                &v.path,
                ProblemKind::VariantStale,
                "decodes to something other than its source",
            )),
            Ok(()) => {}
        }
    }
    (out, checked)
}
