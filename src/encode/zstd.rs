//! Zstandard (RFC 8878) with the window capped at 8 MiB: RFC 9659 makes that the
//! limit for the `zstd` content coding and Chromium rejects larger windows.

use std::io;

use zstd::bulk::{Compressor, Decompressor};
use zstd::zstd_safe::{CParameter, DParameter};

use super::codec::Encoder;
use crate::model::coding::{Codec, ContentKind};

/// log2 of the largest window a browser accepts for `Content-Encoding: zstd`.
pub const ZSTD_MAX_WINDOW_LOG: u32 = 23;

/// Zstandard encoder; the context is created once and reused for every file.
pub struct ZstdEncoder {
    level: i32,
    cctx: Compressor<'static>,
    dctx: Decompressor<'static>,
    /// Decoded output of a small source, for verifying.
    scratch: Vec<u8>,
}

impl ZstdEncoder {
    /// `level` is 1..=22.
    pub fn new(level: i32) -> io::Result<Self> {
        let mut cctx = Compressor::new(level)?;
        // An explicit window log still shrinks to fit a smaller source: the
        // one-shot API pledges the source size, and the frame records it.
        cctx.set_parameter(CParameter::WindowLog(ZSTD_MAX_WINDOW_LOG))?;
        cctx.set_parameter(CParameter::ContentSizeFlag(true))?;
        cctx.set_parameter(CParameter::ChecksumFlag(false))?;
        let mut dctx = Decompressor::new()?;
        // Decode as a browser would: refuse any frame that needs more than 8 MiB.
        dctx.set_parameter(DParameter::WindowLogMax(ZSTD_MAX_WINDOW_LOG))?;
        Ok(ZstdEncoder {
            level,
            cctx,
            dctx,
            scratch: Vec::new(),
        })
    }
}

impl Encoder for ZstdEncoder {
    fn codec(&self) -> Codec {
        Codec::Zstd
    }

    fn encode(&mut self, input: &[u8], _kind: ContentKind, out: &mut Vec<u8>) -> io::Result<()> {
        out.clear();
        out.reserve(zstd::zstd_safe::compress_bound(input.len()));
        self.cctx.compress_to_buffer(input, out)?;
        Ok(())
    }

    fn decode(
        &mut self,
        compressed: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        out.clear();
        // One spare byte so that a stream decoding to more than expected fails
        // the comparison instead of fitting exactly.
        out.reserve(expected_len + 1);
        // One-shot decoding ignores WindowLogMax, so the header is checked too.
        check_frame(compressed).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        self.dctx.decompress_to_buffer(compressed, out)?;
        Ok(())
    }

    fn verify(&mut self, compressed: &[u8], original: &[u8]) -> Result<(), String> {
        if original.len() > super::codec::BULK_VERIFY_MAX {
            return verify_stream(compressed, original);
        }
        check_frame(compressed)?;
        self.scratch.clear();
        // One spare byte: output longer than the source fails the comparison.
        self.scratch.reserve_exact(original.len() + 1);
        self.dctx
            .decompress_to_buffer(compressed, &mut self.scratch)
            .map_err(|e| format!("does not decode: {e}"))?;
        super::codec::bulk_equals(&self.scratch, original)
    }

    fn settings(&self) -> String {
        format!(
            "zstd {}; level {}; window at most 2^{ZSTD_MAX_WINDOW_LOG}",
            zstd::zstd_safe::version_string(),
            self.level
        )
    }
}

/// What a browser checks before decoding: a window of at most 8 MiB, and one
/// frame with nothing after it (it would not read further).
fn check_frame(compressed: &[u8]) -> Result<(), String> {
    match frame_window_size(compressed) {
        Some(w) if w <= 1 << ZSTD_MAX_WINDOW_LOG => {}
        Some(w) => {
            return Err(format!(
                "the frame needs a {w}-byte window, over the 8 MiB browsers accept"
            ))
        }
        None => return Err("not a zstd frame".into()),
    }
    match zstd::zstd_safe::find_frame_compressed_size(compressed) {
        Ok(n) if n == compressed.len() => {}
        Ok(n) => {
            return Err(format!(
                "{} bytes follow the zstd frame",
                compressed.len() - n
            ))
        }
        Err(code) => {
            return Err(format!(
                "does not decode: {}",
                zstd::zstd_safe::get_error_name(code)
            ))
        }
    }
    Ok(())
}

/// Decodes in a stream, so a large source is not held twice; the streaming
/// decoder enforces the window limit as a browser does.
pub(super) fn verify_stream(compressed: &[u8], original: &[u8]) -> Result<(), String> {
    check_frame(compressed)?;
    let mut d = zstd::stream::read::Decoder::with_buffer(compressed).map_err(|e| e.to_string())?;
    d.window_log_max(ZSTD_MAX_WINDOW_LOG)
        .map_err(|e| e.to_string())?;
    super::codec::stream_equals(d.single_frame(), original)
}

/// The window size a zstd frame declares, read from its header (RFC 8878
/// §3.1.1.1): what a decoder must allocate, so what a browser checks.
pub fn frame_window_size(frame: &[u8]) -> Option<u64> {
    if frame.len() < 6 || frame[..4] != [0x28, 0xB5, 0x2F, 0xFD] {
        return None;
    }
    let fhd = frame[4];
    let single_segment = fhd & 0x20 != 0;
    let fcs_flag = fhd >> 6;
    let did_flag = fhd & 0x03;
    if !single_segment {
        let wd = frame[5];
        let exponent = (wd >> 3) as u64;
        let mantissa = (wd & 7) as u64;
        let base = 1u64 << (10 + exponent);
        return Some(base + (base / 8) * mantissa);
    }
    // Single segment: the window is the content size.
    let did_len = [0usize, 1, 2, 4][did_flag as usize];
    let fcs_len = [1usize, 2, 4, 8][fcs_flag as usize];
    let start = 5 + did_len;
    let bytes = frame.get(start..start + fcs_len)?;
    let mut v = 0u64;
    for (i, b) in bytes.iter().enumerate() {
        v |= (*b as u64) << (8 * i);
    }
    if fcs_len == 2 {
        v += 256;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_22_on_a_9_mib_input_declares_at_most_an_8_mib_window() {
        // Level 22's own window is 128 MiB: the cap is what keeps it at 8 MiB.
        let mut input = Vec::with_capacity(9 << 20);
        let mut x: u32 = 1;
        while input.len() < 9 << 20 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            input.extend_from_slice(format!("line {} value {}\n", x % 5000, x % 97).as_bytes());
        }
        let mut enc = ZstdEncoder::new(22).unwrap();
        let mut out = Vec::new();
        enc.encode(&input, ContentKind::Text, &mut out).unwrap();
        let w = frame_window_size(&out).unwrap();
        assert!(w <= 8 << 20, "window {w}");
        let mut back = Vec::new();
        enc.decode(&out, input.len(), &mut back).unwrap();
        assert!(back == input);
    }

    #[test]
    fn small_input_gets_a_small_window() {
        let input = b"hello hello hello hello".repeat(100);
        let mut enc = ZstdEncoder::new(19).unwrap();
        let mut out = Vec::new();
        enc.encode(&input, ContentKind::Text, &mut out).unwrap();
        assert_eq!(frame_window_size(&out), Some(input.len() as u64));
    }

    #[test]
    fn decoder_refuses_a_frame_with_a_larger_window() {
        let input = vec![7u8; 20 << 20];
        // The streaming API without a pledged size keeps the 32 MiB window.
        let mut out = Vec::new();
        {
            let mut w = zstd::stream::write::Encoder::new(&mut out, 1).unwrap();
            w.set_parameter(CParameter::WindowLog(25)).unwrap();
            std::io::Write::write_all(&mut w, &input).unwrap();
            w.finish().unwrap();
        }
        assert!(frame_window_size(&out).unwrap() > 8 << 20);
        let mut enc = ZstdEncoder::new(19).unwrap();
        let mut back = Vec::new();
        assert!(enc.decode(&out, input.len(), &mut back).is_err());
    }
}
