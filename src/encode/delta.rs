//! The two dictionary-compressed content codings of RFC 9842: `dcb` (brotli)
//! and `dcz` (Zstandard), each the new file compressed with an earlier
//! version of it as a raw dictionary, after a header that names the
//! dictionary by its SHA-256 so a client can check it holds the right one.
//!
//! - `dcb`: `FF 44 43 42`, the 32-byte SHA-256, then a brotli stream whose
//!   custom dictionary is the old file (RFC 9842 §4), with a standard window
//!   (at most 16 MiB).
//! - `dcz`: the skippable frame header `5E 2A 4D 18 20 00 00 00`, the 32-byte
//!   SHA-256, then a zstd frame with the old file as a raw-content dictionary
//!   (a prefix; RFC 9842 §5), its window within the larger of 8 MiB and 1.25
//!   times the dictionary, at most 128 MiB.
//!
//! `dcb` is made by Google's C encoder with the old file attached as a raw
//! (compound) dictionary, through brotlic-sys (whose vendored libbrotli has
//! raw dictionaries), so its streams are the ones the C decoder browsers use
//! reads; rust-brotli's custom dictionary is not the same format (see
//! `brotli::compress_with_dictionary`). Every output is decoded with the
//! dictionary and compared with the source before it is kept.

use std::io;

use zstd::zstd_safe::{CCtx, CParameter, DCtx, DParameter};

use super::brotli::window_for;
use crate::model::coding::ContentKind;
pub use crate::model::coding::{DeltaCoding, DCB_MAGIC, DCZ_MAGIC};

/// The largest `dcz` window RFC 9842 lets a client demand: 128 MiB.
const DCZ_WINDOW_CAP: u64 = 128 << 20;

/// The largest window a client must accept for a `dcz` frame with a
/// dictionary of `dict_len` bytes (RFC 9842 §5).
pub fn dcz_window_limit(dict_len: usize) -> u64 {
    (8u64 << 20)
        .max(dict_len as u64 * 5 / 4)
        .min(DCZ_WINDOW_CAP)
}

/// The window log a `dcz` frame is written with: one that covers `span`
/// bytes (dictionary and file: a prefix stays reachable while it is within
/// the window), within [`dcz_window_limit`].
fn dcz_window_log(span: usize, dict_len: usize) -> u32 {
    let limit = dcz_window_limit(dict_len);
    let max_log = 63 - limit.leading_zeros(); // floor(log2(limit))
    let needed = (span as u64).max(1).next_power_of_two().trailing_zeros();
    needed.clamp(10, max_log)
}

/// From this much dictionary plus file on, `dcz` uses zstd's long-distance
/// matcher, as `zstd --patch-from --long` does: the regular one at level 19
/// misses most matches megabytes back. Measured (`bench/dcz_long.sh`'s
/// 14.7 MB bundle against its predecessor, level 19): 337,442 B without,
/// 122,743 B with, in about the same time; on echarts' 3.4 MB minor release
/// (46,167 B) and smaller pairs it changed nothing, so below this it stays off.
const LDM_MIN: usize = 8 << 20;

/// A `dcz` dictionary past this many bytes, and past four times the file,
/// is indexed by a cheaper matcher: zstd's binary-tree matchers (levels 13
/// and up) index the whole dictionary, about 2.5 s of CPU per MiB at level
/// 19 whatever the file's size, so one 6 MiB dictionary in a release cost
/// each 16 KB chunk paired with it 15 s. A file about as large as its
/// dictionary pays that in proportion to its own size, and keeps the level.
pub const DCZ_BOUNDED_FROM: usize = 1 << 20;

/// The level a bounded `dcz` is made at: the strongest hash-chain one
/// (lazy2), whose work grows with the file, not the dictionary. Measured
/// (`bench/dcz_bound.sh`): a 16 KB chunk against a 6 MiB dictionary is
/// about as small as at level 19 (the matches are long) at a fraction of
/// the time.
pub const DCZ_BOUNDED_LEVEL: i32 = 12;

/// Whether a `dcz` of `input_len` bytes against `dict_len` bytes of
/// dictionary is made at [`DCZ_BOUNDED_LEVEL`]: the dictionary is past
/// [`DCZ_BOUNDED_FROM`] and past four times the file.
pub fn dcz_bounded(dict_len: usize, input_len: usize) -> bool {
    dict_len > DCZ_BOUNDED_FROM.max(input_len.saturating_mul(4))
}

/// The level a `dcz` is made at: `configured`, or at most
/// [`DCZ_BOUNDED_LEVEL`] when the dictionary would cost more than the file
/// ([`dcz_bounded`]).
pub fn dcz_level(configured: i32, dict_len: usize, input_len: usize) -> i32 {
    if dcz_bounded(dict_len, input_len) {
        configured.min(DCZ_BOUNDED_LEVEL)
    } else {
        configured
    }
}

/// Levels of the two delta encoders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaLevels {
    /// Brotli quality for `dcb`, 0..=11.
    pub brotli_quality: u32,
    /// Zstandard level for `dcz`, 1..=22.
    pub zstd_level: i32,
}

/// Writes and checks deltas. Holds no state between files: each delta has its
/// own dictionary, which zstd and brotli both take per stream.
#[derive(Debug, Clone, Copy)]
pub struct DeltaEncoder {
    levels: DeltaLevels,
}

impl DeltaEncoder {
    /// An encoder at these levels.
    pub fn new(levels: DeltaLevels) -> Self {
        DeltaEncoder { levels }
    }

    /// The settings string recorded in the manifest for `coding`: a change
    /// redoes that coding's deltas.
    pub fn settings(&self, coding: DeltaCoding) -> String {
        match coding {
            DeltaCoding::Dcb => format!(
                "dcb (RFC 9842) by libbrotli (C); quality {}; window fitted to dictionary and file, at most 2^24",
                self.levels.brotli_quality
            ),
            DeltaCoding::Dcz => format!(
                "dcz (RFC 9842) by zstd {}; level {}, at most {DCZ_BOUNDED_LEVEL} against a dictionary past {} MiB and 4 x the file; window fitted to dictionary and file, within max(8 MiB, 1.25 x dictionary); long-distance matching from 8 MiB",
                zstd::zstd_safe::version_string(),
                self.levels.zstd_level,
                DCZ_BOUNDED_FROM >> 20
            ),
        }
    }

    /// Compresses `input` against `dict` (whose SHA-256 is `dict_sha256`) into
    /// `out`, header included.
    pub fn encode(
        &self,
        coding: DeltaCoding,
        dict: &[u8],
        dict_sha256: &[u8; 32],
        input: &[u8],
        kind: ContentKind,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        out.clear();
        out.extend_from_slice(&coding.header(dict_sha256));
        match coding {
            DeltaCoding::Dcb => self.encode_dcb(dict, input, kind, out),
            DeltaCoding::Dcz => self.encode_dcz(dict, input, out),
        }
    }

    fn encode_dcb(
        &self,
        dict: &[u8],
        input: &[u8],
        kind: ContentKind,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        // Matches reach back into the dictionary only within the window.
        let lgwin = window_for(dict.len() + input.len());
        super::brotli::compress_with_dictionary(
            input,
            dict,
            self.levels.brotli_quality,
            lgwin,
            kind,
            out,
        )
    }

    fn encode_dcz(&self, dict: &[u8], input: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        let err = |code| io::Error::other(zstd::zstd_safe::get_error_name(code));
        let mut cctx = CCtx::create();
        let level = dcz_level(self.levels.zstd_level, dict.len(), input.len());
        cctx.set_parameter(CParameter::CompressionLevel(level))
            .map_err(err)?;
        // The window covers dictionary and file, so every byte of the
        // dictionary stays reachable from anywhere in the file.
        cctx.set_parameter(CParameter::WindowLog(dcz_window_log(
            input.len() + dict.len(),
            dict.len(),
        )))
        .map_err(err)?;
        if input.len() + dict.len() >= LDM_MIN {
            cctx.set_parameter(CParameter::EnableLongDistanceMatching(true))
                .map_err(err)?;
        }
        cctx.set_parameter(CParameter::ContentSizeFlag(true))
            .map_err(err)?;
        cctx.set_parameter(CParameter::ChecksumFlag(false))
            .map_err(err)?;
        // A prefix is always raw content, whatever its first bytes (a
        // dictionary loaded by content type would be parsed as a trained one
        // if it started with zstd's dictionary magic).
        cctx.ref_prefix(dict).map_err(err)?;
        let start = out.len();
        out.reserve(zstd::zstd_safe::compress_bound(input.len()));
        // After the header: a Vec on its own would be written from its start.
        let mut after_header = io::Cursor::new(out);
        after_header.set_position(start as u64);
        cctx.compress2(&mut after_header, input).map_err(err)?;
        Ok(())
    }

    /// Whether `delta` (header included) decodes with `dict` to exactly
    /// `original`, under the limits a browser applies; `Err` says why not.
    pub fn verify(
        &self,
        coding: DeltaCoding,
        delta: &[u8],
        dict: &[u8],
        dict_sha256: &[u8; 32],
        original: &[u8],
    ) -> Result<(), String> {
        match coding.header_hash(delta) {
            Some(h) if h == *dict_sha256 => {}
            Some(_) => return Err("its header names another dictionary".into()),
            None => return Err(format!("no {} header", coding.token())),
        }
        let body = &delta[coding.header_len()..];
        match coding {
            DeltaCoding::Dcb => super::brotli::verify_with_dictionary(body, original, dict),
            DeltaCoding::Dcz => verify_dcz(body, original, dict),
        }
    }
}

/// What is wrong with a `dcz` body (the zstd frame after the header), if
/// anything, without decoding it: a window over `limit` (RFC 9842's for the
/// dictionary, or its 128 MiB cap when the dictionary is not at hand), or
/// bytes after the frame, which a browser's decoder would not take.
pub fn dcz_frame_problem(frame: &[u8], limit: Option<u64>) -> Option<String> {
    let limit = limit.unwrap_or(DCZ_WINDOW_CAP);
    match super::zstd::frame_window_size(frame) {
        Some(w) if w <= limit => {}
        Some(w) => {
            return Some(format!(
                "the frame needs a {w}-byte window, over the {limit} RFC 9842 allows"
            ))
        }
        None => return Some("not a zstd frame".into()),
    }
    match zstd::zstd_safe::find_frame_compressed_size(frame) {
        Ok(n) if n == frame.len() => None,
        Ok(n) => Some(format!("{} bytes follow the zstd frame", frame.len() - n)),
        Err(code) => Some(format!(
            "not a whole zstd frame: {}",
            zstd::zstd_safe::get_error_name(code)
        )),
    }
}

fn verify_dcz(frame: &[u8], original: &[u8], dict: &[u8]) -> Result<(), String> {
    let limit = dcz_window_limit(dict.len());
    if let Some(why) = dcz_frame_problem(frame, Some(limit)) {
        return Err(why);
    }
    let err = |code| format!("does not decode: {}", zstd::zstd_safe::get_error_name(code));
    let mut dctx = DCtx::create();
    let max_log = 63 - limit.leading_zeros();
    dctx.set_parameter(DParameter::WindowLogMax(max_log))
        .map_err(err)?;
    dctx.ref_prefix(dict).map_err(err)?;
    // One spare byte: output longer than the source fails the comparison.
    let mut out: Vec<u8> = Vec::with_capacity(original.len() + 1);
    dctx.decompress(&mut out, frame).map_err(err)?;
    super::codec::bulk_equals(&out, original)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(n: usize, changed: &str) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..n {
            v.extend_from_slice(
                format!("export function f{i}(a, b) {{ return a * {i} + b; }}\n").as_bytes(),
            );
            if i == n / 2 {
                v.extend_from_slice(changed.as_bytes());
            }
        }
        v
    }

    fn sha(b: &[u8]) -> [u8; 32] {
        sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(b)).into()
    }

    const FAST: DeltaLevels = DeltaLevels {
        brotli_quality: 5,
        zstd_level: 3,
    };

    /// `new` as a `dcz` against `old` at `levels`, checked to decode back.
    fn dcz_round_trip(levels: DeltaLevels, old: &[u8], new: &[u8]) -> Vec<u8> {
        let enc = DeltaEncoder::new(levels);
        let mut out = Vec::new();
        enc.encode(
            DeltaCoding::Dcz,
            old,
            &sha(old),
            new,
            ContentKind::Text,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            enc.verify(DeltaCoding::Dcz, &out, old, &sha(old), new),
            Ok(())
        );
        out
    }

    #[test]
    fn deltas_are_small_round_trip_and_carry_the_header() {
        let old = release(3000, "const version = '1.0.0';\n");
        let new = release(3000, "const version = '1.0.1'; console.log(version);\n");
        let h = sha(&old);
        let enc = DeltaEncoder::new(FAST);
        for coding in DeltaCoding::ALL {
            let mut out = Vec::new();
            enc.encode(coding, &old, &h, &new, ContentKind::Text, &mut out)
                .unwrap();
            assert_eq!(out[..coding.header_len()], coding.header(&h)[..]);
            assert_eq!(coding.header_hash(&out), Some(h));
            assert!(
                out.len() < new.len() / 200,
                "{coding:?}: {} bytes for a one-line change in {}",
                out.len(),
                new.len()
            );
            assert_eq!(
                enc.verify(coding, &out, &old, &h, &new),
                Ok(()),
                "{coding:?}"
            );
            // Another dictionary, another source, a corrupt or cut stream: refused.
            let mut other_dict = old.clone();
            other_dict[10] ^= 1;
            assert!(enc
                .verify(coding, &out, &other_dict, &sha(&other_dict), &new)
                .is_err());
            assert!(enc.verify(coding, &out, &old, &h, &old).is_err());
            let cut = &out[..out.len() - 2];
            assert!(enc.verify(coding, cut, &old, &h, &new).is_err());
            let mut extra = out.clone();
            extra.push(0);
            assert!(enc.verify(coding, &extra, &old, &h, &new).is_err());
        }
    }

    #[test]
    fn dcz_uses_a_dictionary_that_starts_like_a_trained_one_as_raw_content() {
        let mut old = vec![0x37, 0xA4, 0x30, 0xEC];
        old.extend(release(500, "x\n"));
        let new = release(500, "y\n");
        dcz_round_trip(FAST, &old, &new);
    }

    #[test]
    fn dcz_windows_stay_within_the_rfc() {
        assert_eq!(dcz_window_limit(1 << 20), 8 << 20);
        assert_eq!(dcz_window_limit(16 << 20), 20 << 20);
        assert_eq!(dcz_window_limit(1 << 30), 128 << 20);
        assert_eq!(dcz_window_log(1000, 1000), 10);
        assert_eq!(dcz_window_log(300_000, 300_000), 19);
        // A 20 MiB file with a 1 MiB dictionary: 8 MiB is all a client must accept.
        assert_eq!(dcz_window_log(20 << 20, 1 << 20), 23);
        assert_eq!(dcz_window_log(20 << 20, 20 << 20), 24);
    }

    #[test]
    fn a_dictionary_far_larger_than_the_file_is_indexed_by_the_cheaper_matcher() {
        const MIB: usize = 1 << 20;
        // A chunk against a 6 MiB dictionary: the dictionary's cost, not the file's.
        assert!(dcz_bounded(6 * MIB, 16_000));
        assert_eq!(dcz_level(19, 6 * MIB, 16_000), DCZ_BOUNDED_LEVEL);
        // A lower level asked for stays.
        assert_eq!(dcz_level(3, 6 * MIB, 16_000), 3);
        // A bundle against its predecessor pays in proportion to itself.
        assert!(!dcz_bounded(6 * MIB, 3 * MIB / 2));
        assert_eq!(dcz_level(19, 6 * MIB, 2 * MIB), 19);
        // Small dictionaries are cheap whatever the file.
        assert!(!dcz_bounded(MIB, 100));
        assert!(dcz_bounded(MIB + 1, 100));
        assert_eq!(dcz_level(19, 200_000, 1_000), 19);
    }

    #[test]
    fn a_bounded_dcz_still_finds_the_dictionary_s_long_matches() {
        // 1.5 MiB of dictionary; the file is 40 KB of it with one change.
        let old = release(30_000, "const version = '1.0.0';\n");
        assert!(dcz_bounded(old.len(), 40_000));
        let start = old.len() / 2;
        let mut new = old[start..start + 40_000].to_vec();
        new.extend_from_slice(b"console.log('1.0.1');\n");
        let levels = DeltaLevels {
            brotli_quality: 5,
            zstd_level: 19,
        };
        let out = dcz_round_trip(levels, &old, &new);
        assert!(out.len() < 200, "{} B", out.len());
    }
}
