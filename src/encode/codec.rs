//! What every codec is behind: the [`Encoder`] trait, and the comparison of
//! decoded output with the source that each codec's `verify` makes (whole,
//! or as it streams), worded alike for all.

use std::io;

use crate::model::coding::{Codec, ContentKind};

/// Compresses whole buffers and checks that the output decodes back.
pub trait Encoder: Send {
    /// Which codec this is.
    fn codec(&self) -> Codec;
    /// Compresses `input` into `out` (cleared first).
    fn encode(&mut self, input: &[u8], kind: ContentKind, out: &mut Vec<u8>) -> io::Result<()>;
    /// Decodes `compressed` into `out` (cleared first), with the limits a
    /// browser applies (for zstd: an 8 MiB window), making at most one byte
    /// more than `expected_len`: a small body may claim gigabytes.
    fn decode(
        &mut self,
        compressed: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<()>;
    /// Whether `compressed` decodes to exactly `original`, decoding in a
    /// stream so no second full copy of the source is held; `Err` says why not.
    fn verify(&mut self, compressed: &[u8], original: &[u8]) -> Result<(), String>;
    /// The settings that determine the output bytes, recorded in the manifest so
    /// a later run knows whether an old variant is still what it would write.
    fn settings(&self) -> String;
}

/// Sources up to this size are verified by decoding the whole output at once
/// into a buffer the encoder keeps (faster, and no decoder state to build per
/// file); larger ones are decoded in a stream so that no second full copy of
/// the source is held.
pub(crate) const BULK_VERIFY_MAX: usize = 4 << 20;

/// Compares a whole decoded output with the source, saying where they differ.
pub(crate) fn bulk_equals(decoded: &[u8], expected: &[u8]) -> Result<(), String> {
    let mut c = Compare::new(expected);
    c.next(decoded)?;
    c.end()
}

/// Compares decoded output with the source as it arrives, in pieces: one
/// wording of what differs for every codec and for streamed or whole outputs.
pub(crate) struct Compare<'a> {
    expected: &'a [u8],
    pos: usize,
}

impl<'a> Compare<'a> {
    pub(crate) fn new(expected: &'a [u8]) -> Self {
        Compare { expected, pos: 0 }
    }

    /// The next piece of decoded output.
    pub(crate) fn next(&mut self, piece: &[u8]) -> Result<(), String> {
        let rest = &self.expected[self.pos..];
        let common = piece.len().min(rest.len());
        if piece[..common] != rest[..common] {
            let at = (0..common).find(|&i| piece[i] != rest[i]).unwrap_or(common);
            return Err(format!(
                "decodes to bytes that differ from the source at byte {}",
                self.pos + at
            ));
        }
        if piece.len() > rest.len() {
            return Err(format!(
                "decodes to more than the source's {} bytes",
                self.expected.len()
            ));
        }
        self.pos += piece.len();
        Ok(())
    }

    /// All output is in: it must have been the whole source.
    pub(crate) fn end(self) -> Result<(), String> {
        if self.pos != self.expected.len() {
            return Err(format!(
                "decodes to {} bytes, the source has {}",
                self.pos,
                self.expected.len()
            ));
        }
        Ok(())
    }
}

/// Reads `decoded` to its end, comparing it with `expected` as it goes.
pub(crate) fn stream_equals(mut decoded: impl io::Read, expected: &[u8]) -> Result<(), String> {
    // On the stack: a heap buffer per call showed up in the per-file overhead.
    let mut buf = [0u8; 16 * 1024];
    let mut c = Compare::new(expected);
    loop {
        match decoded.read(&mut buf) {
            Ok(0) => return c.end(),
            Ok(n) => c.next(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("does not decode: {e}")),
        }
    }
}
