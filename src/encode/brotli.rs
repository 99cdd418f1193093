//! Brotli (RFC 7932). A whole file goes through the C reference encoder
//! (libbrotli via `brotlic`): byte for byte what `brotli -q 11` writes, at the
//! same speed; the pure-Rust `brotli` crate was 0.05% larger. A file split
//! across cores goes through the Rust crate, the only one that writes parts
//! which join into one stream with matches across the joins. Outputs are
//! checked with the Rust decoder, an implementation apart from the C encoder.

use std::io;

use brotli::concat::{BroCatli, BroCatliResult};
use brotli::enc::backward_references::{BrotliEncoderMode, UnionHasher};
use brotli::enc::encode::{BrotliEncoderOperation, BrotliEncoderStateStruct};
use brotli::enc::{BrotliEncoderParams, StandardAlloc};

use super::codec::Encoder;
use crate::model::coding::{Codec, ContentKind};

/// The largest standard window (16 MiB); "large window" brotli is not a valid
/// HTTP content coding.
const MAX_LGWIN: i32 = 24;
const MIN_LGWIN: i32 = 10;

/// Brotli encoder at a fixed quality.
pub struct BrotliEncoder {
    quality: u32,
}

impl BrotliEncoder {
    /// `quality` is 0..=11.
    pub fn new(quality: u32) -> Self {
        BrotliEncoder { quality }
    }
}

/// The smallest window that still covers the whole input (brotli's window is
/// `2^lgwin - 16` bytes): as small as it can be without costing a byte, which
/// keeps decoder memory low for small files.
pub fn window_for(len: usize) -> i32 {
    let needed = (len as u64 + 16).next_power_of_two().trailing_zeros() as i32;
    needed.clamp(MIN_LGWIN, MAX_LGWIN)
}

/// Files at least this large are compressed in parts that are concatenated
/// into one standard stream, so their brotli job can be spread over cores.
pub const SPLIT_MIN: usize = 8 << 20;
/// Target size of one part.
pub const SPLIT_PART: usize = 6 << 20;

/// How many parts a file of `len` bytes is compressed in: a pure function of
/// the size and type, so the bytes never depend on the thread count or the
/// machine. Only text is split: on the shared corpus two parts cost +0.15% on
/// typescript.js (9.1 MB) but +1.0% on esbuild.wasm, too much for binaries.
pub fn parts_for(len: usize, kind: ContentKind) -> usize {
    if len < SPLIT_MIN || kind != ContentKind::Text {
        1
    } else {
        len.div_ceil(SPLIT_PART)
    }
}

impl BrotliEncoder {
    /// The encoder parameters for `input`.
    pub fn params(&self, len: usize, kind: ContentKind) -> BrotliEncoderParams {
        BrotliEncoderParams {
            quality: self.quality as i32,
            lgwin: window_for(len),
            size_hint: len,
            mode: match kind {
                ContentKind::Text => BrotliEncoderMode::BROTLI_MODE_TEXT,
                ContentKind::Font => BrotliEncoderMode::BROTLI_MODE_FONT,
                ContentKind::Binary => BrotliEncoderMode::BROTLI_MODE_GENERIC,
            },
            ..BrotliEncoderParams::default()
        }
    }
}

/// The byte range of part `index` of `parts` (the same split rust-brotli's
/// `compress_multi` uses).
pub fn part_range(len: usize, index: usize, parts: usize) -> std::ops::Range<usize> {
    (index * len / parts)..((index + 1) * len / parts)
}

/// Compresses part `index` of `parts` of `input` as a catable brotli stream
/// whose dictionary is everything before it, so matches across the boundary are
/// kept. Parts are independent jobs: they can run on any thread, in any order.
pub fn compress_part(
    input: &[u8],
    index: usize,
    parts: usize,
    params: &BrotliEncoderParams,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    let range = part_range(input.len(), index, parts);
    let mut state = BrotliEncoderStateStruct::new(StandardAlloc::default());
    state.params = params.clone();
    if index != 0 {
        state.params.catable = true;
        state.params.magic_number = false;
    }
    state.params.appendable = true;
    if index != 0 {
        state.set_custom_dictionary_with_optional_precomputed_hasher(
            range.start,
            &input[..range.start],
            UnionHasher::Uninit,
            true,
        );
    }
    out.clear();
    finish_appending(&mut state, &input[range], out, "brotli part")
}

/// Compresses all of `input` with a prepared Rust encoder in one FINISH call,
/// appending the stream to `out` (after a header, say). `what` names the
/// encoder in the error.
pub(super) fn finish_appending(
    state: &mut BrotliEncoderStateStruct<StandardAlloc>,
    input: &[u8],
    out: &mut Vec<u8>,
    what: &str,
) -> io::Result<()> {
    let start = out.len();
    out.resize(
        start + brotli::enc::encode::BrotliEncoderMaxCompressedSize(input.len()) + 1024,
        0,
    );
    let (mut avail_in, mut in_off) = (input.len(), 0);
    let (mut avail_out, mut out_off) = (out.len() - start, start);
    let done = state.compress_stream(
        BrotliEncoderOperation::BROTLI_OPERATION_FINISH,
        &mut avail_in,
        input,
        &mut in_off,
        &mut avail_out,
        out,
        &mut out_off,
        &mut None,
        &mut |_, _, _, _| (),
    );
    if !done || avail_in != 0 {
        return Err(io::Error::other(format!("{what} did not finish")));
    }
    out.truncate(out_off);
    Ok(())
}

/// Compresses `input` in one stream with the C encoder, with the settings
/// `brotli -q Q FILE` uses (fitted window, size hint; mode as in `params`).
fn compress_whole(input: &[u8], params: &BrotliEncoderParams, out: &mut Vec<u8>) -> io::Result<()> {
    use brotlic::encode::BrotliOperation;
    use brotlic::{BrotliEncoderOptions, CompressionMode, Quality, WindowSize};
    let bad = |e| io::Error::other(format!("brotli settings: {e:?}"));
    let mode = match params.mode {
        BrotliEncoderMode::BROTLI_MODE_TEXT => CompressionMode::Text,
        BrotliEncoderMode::BROTLI_MODE_FONT => CompressionMode::Font,
        _ => CompressionMode::Generic,
    };
    let mut options = BrotliEncoderOptions::new();
    options
        .quality(Quality::new(params.quality as u8).map_err(bad)?)
        .window_size(WindowSize::new(params.lgwin as u8).map_err(bad)?)
        .mode(mode);
    if !input.is_empty() {
        options.size_hint(input.len().min(1 << 30) as u32);
    }
    let mut enc = options.build().map_err(bad)?;
    out.clear();
    // Room for the usual case; grown if the encoder asks for more.
    out.resize(input.len() / 4 + 1024, 0);
    let (mut read, mut written) = (0, 0);
    loop {
        // All input in PROCESS calls, then FINISH: what the CLI does.
        let op = if read < input.len() {
            BrotliOperation::Process
        } else {
            BrotliOperation::Finish
        };
        let r = enc
            .compress(&input[read..], &mut out[written..], op)
            .map_err(|_| io::Error::other("the brotli encoder failed"))?;
        read += r.bytes_read;
        written += r.bytes_written;
        if read == input.len() && enc.is_finished() {
            break;
        }
        if written == out.len() {
            out.resize(out.len() * 2, 0);
        } else if r.bytes_read == 0 && r.bytes_written == 0 {
            return Err(io::Error::other("the brotli encoder stopped short"));
        }
    }
    out.truncate(written);
    Ok(())
}

/// Joins the parts from [`compress_part`], in order, into one standard stream.
pub fn concat_parts(parts: Vec<Vec<u8>>, out: &mut Vec<u8>) -> io::Result<()> {
    let fail = |e| io::Error::other(format!("brotli concatenation failed: {e:?}"));
    let mut cat = BroCatli::new();
    out.clear();
    out.reserve(parts.iter().map(Vec::len).sum::<usize>() + 64);
    // Through a small buffer, freeing each part once it is copied: the parts
    // and the joined stream are never both held whole.
    let mut buf = vec![0u8; 256 * 1024];
    for p in parts {
        cat.new_brotli_file();
        let mut in_off = 0;
        loop {
            let mut out_off = 0;
            let r = cat.stream(&p, &mut in_off, &mut buf, &mut out_off);
            out.extend_from_slice(&buf[..out_off]);
            match r {
                BroCatliResult::NeedsMoreOutput => {}
                BroCatliResult::Success | BroCatliResult::NeedsMoreInput => break,
                e => return Err(fail(e)),
            }
        }
    }
    loop {
        let mut out_off = 0;
        let r = cat.finish(&mut buf, &mut out_off);
        out.extend_from_slice(&buf[..out_off]);
        match r {
            BroCatliResult::NeedsMoreOutput => {}
            BroCatliResult::Success => return Ok(()),
            e => return Err(fail(e)),
        }
    }
}

impl Encoder for BrotliEncoder {
    fn codec(&self) -> Codec {
        Codec::Brotli
    }

    fn encode(&mut self, input: &[u8], kind: ContentKind, out: &mut Vec<u8>) -> io::Result<()> {
        out.clear();
        let params = self.params(input.len(), kind);
        let n = parts_for(input.len(), kind);
        if n > 1 {
            // The same bytes the pipeline gets by running the parts as separate jobs.
            let mut parts = vec![Vec::new(); n];
            for (i, p) in parts.iter_mut().enumerate() {
                compress_part(input, i, n, &params, p)?;
            }
            return concat_parts(parts, out);
        }
        compress_whole(input, &params, out)
    }

    fn decode(
        &mut self,
        compressed: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        // Bounded like the other decoders: a few hundred bytes of brotli can
        // say a gigabyte, so at most one byte past the expected size is made
        // (enough for the caller's comparison to fail).
        use std::io::Read;
        out.clear();
        out.reserve(expected_len.saturating_add(1).min(64 << 20));
        brotli::Decompressor::new(compressed, 16 * 1024)
            .take(expected_len as u64 + 1)
            .read_to_end(out)?;
        Ok(())
    }

    fn verify(&mut self, compressed: &[u8], original: &[u8]) -> Result<(), String> {
        verify_stream(compressed, original)
    }

    fn settings(&self) -> String {
        format!(
            "libbrotli 1.0.9 (brotlic 0.8), parts by brotli-rs 8; quality {}; window fitted to the file, at most 2^{MAX_LGWIN}; mode by type; text files of {SPLIT_MIN} bytes or more in parts of about {SPLIT_PART}",
            self.quality
        )
    }
}

/// Decodes in 16 KiB steps, comparing as it goes (no second copy of the
/// source), and refuses bytes after the end of the stream, which a `Read`
/// adapter would not see.
fn verify_stream(compressed: &[u8], original: &[u8]) -> Result<(), String> {
    use brotli::{BrotliDecompressStream, BrotliResult, BrotliState, HeapAlloc, HuffmanCode};
    let mut state = BrotliState::new(
        HeapAlloc::<u8>::new(0),
        HeapAlloc::<u32>::new(0),
        HeapAlloc::<HuffmanCode>::new(HuffmanCode::default()),
    );
    let mut buf = [0u8; 16 * 1024];
    let (mut avail_in, mut in_offset, mut total) = (compressed.len(), 0usize, 0usize);
    let mut c = super::codec::Compare::new(original);
    loop {
        let (mut avail_out, mut out_offset) = (buf.len(), 0usize);
        let r = BrotliDecompressStream(
            &mut avail_in,
            &mut in_offset,
            compressed,
            &mut avail_out,
            &mut out_offset,
            &mut buf,
            &mut total,
            &mut state,
        );
        c.next(&buf[..out_offset])?;
        match r {
            BrotliResult::ResultSuccess => break,
            BrotliResult::NeedsMoreOutput => {}
            BrotliResult::NeedsMoreInput => {
                return Err("does not decode: the stream ends early".into())
            }
            BrotliResult::ResultFailure => {
                return Err("does not decode: invalid brotli data".into())
            }
        }
    }
    if avail_in != 0 {
        return Err(format!("{avail_in} bytes follow the brotli stream"));
    }
    c.end()
}

/// Compresses `input` with Google's C encoder, `dict` attached as a raw
/// (compound) dictionary: a `dcb` body as `brotli -D` and browsers read it.
/// Not rust-brotli's custom dictionary: that is a ring-buffer prefix whose
/// references enter the distance cache, which the C decoder's compound
/// dictionary references do not, so its streams can fail in browsers (a file
/// copied whole from its dictionary did).
pub(super) fn compress_with_dictionary(
    input: &[u8],
    dict: &[u8],
    quality: u32,
    lgwin: i32,
    kind: ContentKind,
    out: &mut Vec<u8>,
) -> io::Result<()> {
    use brotlic_sys::*;
    struct Encoder(
        *mut BrotliEncoderState,
        *mut BrotliEncoderPreparedDictionary,
    );
    impl Drop for Encoder {
        fn drop(&mut self) {
            // SAFETY: created below, each destroyed once, the encoder that
            // points to the prepared dictionary first.
            unsafe {
                if !self.0.is_null() {
                    BrotliEncoderDestroyInstance(self.0);
                }
                if !self.1.is_null() {
                    BrotliEncoderDestroyPreparedDictionary(self.1);
                }
            }
        }
    }
    let fail = |what: &str| io::Error::other(format!("the brotli dictionary encoder: {what}"));
    // SAFETY: default allocator; both are destroyed by `Encoder`'s drop before
    // `dict` (which the prepared dictionary points to) goes out of scope.
    let enc = unsafe {
        Encoder(
            BrotliEncoderCreateInstance(None, None, std::ptr::null_mut()),
            BrotliEncoderPrepareDictionary(
                BrotliSharedDictionaryType_BROTLI_SHARED_DICTIONARY_RAW,
                dict.len(),
                dict.as_ptr(),
                11,
                None,
                None,
                std::ptr::null_mut(),
            ),
        )
    };
    if enc.0.is_null() || enc.1.is_null() {
        return Err(fail("cannot start"));
    }
    let mode = match kind {
        ContentKind::Text => BrotliEncoderMode_BROTLI_MODE_TEXT,
        ContentKind::Font => BrotliEncoderMode_BROTLI_MODE_FONT,
        ContentKind::Binary => BrotliEncoderMode_BROTLI_MODE_GENERIC,
    };
    let params = [
        (BrotliEncoderParameter_BROTLI_PARAM_QUALITY, quality),
        (BrotliEncoderParameter_BROTLI_PARAM_LGWIN, lgwin as u32),
        (BrotliEncoderParameter_BROTLI_PARAM_MODE, mode as u32),
        (
            BrotliEncoderParameter_BROTLI_PARAM_SIZE_HINT,
            u32::try_from(input.len()).unwrap_or(u32::MAX),
        ),
    ];
    for (p, v) in params {
        // SAFETY: a live encoder that has not started.
        if unsafe { BrotliEncoderSetParameter(enc.0, p, v) } != 1 {
            return Err(fail("refused a parameter"));
        }
    }
    // SAFETY: both live; the dictionary outlives the encoder (see `Encoder`).
    if unsafe { BrotliEncoderAttachPreparedDictionary(enc.0, enc.1) } != 1 {
        return Err(fail("refused the dictionary"));
    }
    let mut buf = vec![0u8; 64 * 1024];
    let (mut next_in, mut avail_in) = (input.as_ptr(), input.len());
    loop {
        let (mut next_out, mut avail_out) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the pointers and lengths describe live buffers.
        let ok = unsafe {
            BrotliEncoderCompressStream(
                enc.0,
                BrotliEncoderOperation_BROTLI_OPERATION_FINISH,
                &mut avail_in,
                &mut next_in,
                &mut avail_out,
                &mut next_out,
                std::ptr::null_mut(),
            )
        };
        if ok != 1 {
            return Err(fail("failed"));
        }
        out.extend_from_slice(&buf[..buf.len() - avail_out]);
        // SAFETY: a live encoder.
        if unsafe { BrotliEncoderIsFinished(enc.0) } == 1 {
            return Ok(());
        }
    }
}

/// Checks a stream compressed with a raw custom dictionary (`dcb`) with
/// Google's C decoder (the one browsers use; brotlic-sys vendors a version with
/// dictionaries), through the decoder's API rather than the encoder's.
pub(super) fn verify_with_dictionary(
    compressed: &[u8],
    original: &[u8],
    dict: &[u8],
) -> Result<(), String> {
    use brotlic_sys::*;
    struct Decoder(*mut BrotliDecoderState);
    impl Drop for Decoder {
        fn drop(&mut self) {
            // SAFETY: created below, destroyed once.
            unsafe { BrotliDecoderDestroyInstance(self.0) }
        }
    }
    // SAFETY: default allocator; the state is destroyed by `Decoder`'s drop,
    // before `dict` (which the C decoder only points to) goes out of scope.
    let st = Decoder(unsafe { BrotliDecoderCreateInstance(None, None, std::ptr::null_mut()) });
    if st.0.is_null() {
        return Err("cannot start the brotli decoder".into());
    }
    // SAFETY: `dict` outlives the decoder (see above).
    let attached = unsafe {
        BrotliDecoderAttachDictionary(
            st.0,
            BrotliSharedDictionaryType_BROTLI_SHARED_DICTIONARY_RAW,
            dict.len(),
            dict.as_ptr(),
        )
    };
    if attached != 1 {
        return Err("the brotli decoder refused the dictionary".into());
    }
    let mut c = super::codec::Compare::new(original);
    let mut buf = [0u8; 16 * 1024];
    let (mut next_in, mut avail_in) = (compressed.as_ptr(), compressed.len());
    loop {
        let (mut next_out, mut avail_out) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the pointers and lengths describe live buffers.
        let r = unsafe {
            BrotliDecoderDecompressStream(
                st.0,
                &mut avail_in,
                &mut next_in,
                &mut avail_out,
                &mut next_out,
                std::ptr::null_mut(),
            )
        };
        c.next(&buf[..buf.len() - avail_out])?;
        if r == BrotliDecoderResult_BROTLI_DECODER_RESULT_SUCCESS {
            break;
        } else if r == BrotliDecoderResult_BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT {
            return Err("does not decode: the stream ends early".into());
        } else if r != BrotliDecoderResult_BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT {
            return Err("does not decode: invalid brotli data".into());
        }
    }
    if avail_in != 0 {
        return Err(format!("{avail_in} bytes follow the brotli stream"));
    }
    c.end()
}

#[cfg(test)]
mod tests {
    use super::window_for;

    #[test]
    fn window_covers_the_file_and_stays_standard() {
        assert_eq!(window_for(0), 10);
        assert_eq!(window_for(1000), 10);
        assert_eq!(window_for(1009), 11); // 1009 + 16 > 1024
        assert_eq!(window_for(100_000), 17);
        assert_eq!(window_for(11_479_963), 24);
        assert_eq!(window_for(1 << 30), 24);
    }
}
