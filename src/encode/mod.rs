//! One module per codec behind one small trait. An [`Encoder`] owns its
//! context and scratch buffers and is kept per worker thread, so a run pays for
//! set-up once per thread, not once per file.

mod brotli;
pub(crate) mod codec;
/// RFC 9842 deltas: `dcb` and `dcz`.
pub mod delta;
/// Fast zstd estimates: does a source shrink, how big is a delta.
pub mod estimate;
/// Splitting one brotli stream into parts that run as separate jobs.
pub mod brotli_split {
    pub use super::brotli::{
        compress_part, concat_parts, part_range, parts_for, SPLIT_MIN, SPLIT_PART,
    };
}
mod gzip;
mod zstd;

use std::io;

pub use self::brotli::BrotliEncoder;
pub use self::codec::Encoder;
pub use self::gzip::GzipEncoder;
pub use self::zstd::{frame_window_size, ZstdEncoder, ZSTD_MAX_WINDOW_LOG};
pub use crate::model::coding::{Codec, ContentKind};

/// The encoder settings a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// Brotli quality 0..=11 (default 11).
    pub brotli_quality: u32,
    /// Zstandard level 1..=22 (default 19).
    pub zstd_level: i32,
    /// libdeflate level 1..=12 for gzip (default 12).
    pub gzip_level: i32,
}

impl Default for Levels {
    fn default() -> Self {
        Levels {
            brotli_quality: 11,
            zstd_level: 19,
            gzip_level: gzip::DEFAULT_LEVEL,
        }
    }
}

/// Builds the encoder for `codec` with the run's levels.
pub fn new_encoder(codec: Codec, levels: Levels) -> io::Result<Box<dyn Encoder>> {
    Ok(match codec {
        Codec::Brotli => Box::new(BrotliEncoder::new(levels.brotli_quality)),
        Codec::Zstd => Box::new(ZstdEncoder::new(levels.zstd_level)?),
        Codec::Gzip => Box::new(GzipEncoder::new(levels.gzip_level)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..4000 {
            v.extend_from_slice(
                format!("function f{i}(a, b) {{ return a + b * {i}; }}\n").as_bytes(),
            );
        }
        v
    }

    /// Low levels keep the tests quick; what they check does not depend on level.
    fn fast_encoder(codec: Codec) -> Box<dyn Encoder> {
        new_encoder(
            codec,
            Levels {
                brotli_quality: 5,
                zstd_level: 3,
                gzip_level: 6,
            },
        )
        .unwrap()
    }

    #[test]
    fn every_codec_round_trips_and_shrinks_text() {
        let input = sample();
        for codec in Codec::ALL {
            let mut enc = fast_encoder(codec);
            let mut out = Vec::new();
            enc.encode(&input, ContentKind::Text, &mut out).unwrap();
            assert!(
                out.len() < input.len() / 4,
                "{codec:?} compressed to {}",
                out.len()
            );
            let mut back = Vec::new();
            enc.decode(&out, input.len(), &mut back).unwrap();
            assert_eq!(back, input, "{codec:?}");
        }
    }

    #[test]
    fn reused_encoder_gives_the_same_bytes_as_a_fresh_one() {
        let a = sample();
        let b = b"short different input that is not the same".repeat(50);
        for codec in Codec::ALL {
            let levels = Levels {
                brotli_quality: 5,
                zstd_level: 3,
                gzip_level: 6,
            };
            let mut reused = new_encoder(codec, levels).unwrap();
            let mut first = Vec::new();
            reused.encode(&b, ContentKind::Text, &mut first).unwrap();
            let mut second = Vec::new();
            reused.encode(&a, ContentKind::Text, &mut second).unwrap();
            let mut fresh_out = Vec::new();
            new_encoder(codec, levels)
                .unwrap()
                .encode(&a, ContentKind::Text, &mut fresh_out)
                .unwrap();
            assert_eq!(second, fresh_out, "{codec:?}");
        }
    }

    #[test]
    fn corrupt_input_fails_to_decode() {
        let input = sample();
        for codec in Codec::ALL {
            let mut enc = new_encoder(codec, Levels::default()).unwrap();
            let mut out = Vec::new();
            enc.encode(&input, ContentKind::Text, &mut out).unwrap();
            let mid = out.len() / 2;
            out[mid] ^= 0x55;
            out.truncate(out.len() - 3);
            let mut back = Vec::new();
            let ok = enc.decode(&out, input.len(), &mut back).is_ok() && back == input;
            assert!(!ok, "{codec:?} accepted a corrupt stream");
        }
    }

    #[test]
    fn verify_accepts_the_source_and_refuses_anything_else() {
        let input = sample();
        for codec in Codec::ALL {
            let mut enc = fast_encoder(codec);
            let mut out = Vec::new();
            enc.encode(&input, ContentKind::Text, &mut out).unwrap();
            assert_eq!(enc.verify(&out, &input), Ok(()), "{codec:?}");
            assert!(
                enc.verify(&out, &input[..input.len() - 1]).is_err(),
                "{codec:?}: longer than expected"
            );
            let mut longer = input.clone();
            longer.push(b'x');
            assert!(
                enc.verify(&out, &longer).is_err(),
                "{codec:?}: shorter than expected"
            );
            let mut other = input.clone();
            other[100] ^= 1;
            assert!(
                enc.verify(&out, &other).is_err(),
                "{codec:?}: different bytes"
            );
            assert!(
                enc.verify(&out[..out.len() / 2], &input).is_err(),
                "{codec:?}: truncated"
            );
        }
    }

    #[test]
    fn verify_refuses_bytes_after_the_stream() {
        let input = sample();
        for codec in Codec::ALL {
            let mut enc = fast_encoder(codec);
            let mut out = Vec::new();
            enc.encode(&input, ContentKind::Text, &mut out).unwrap();
            // The same stream twice, and a stream with one stray byte after it.
            let mut twice = out.clone();
            twice.extend_from_slice(&out);
            let mut stray = out.clone();
            stray.push(0);
            for bad in [twice, stray] {
                let e = enc.verify(&bad, &input).unwrap_err();
                assert!(e.contains("follow"), "{codec:?}: {e}");
            }
        }
    }

    #[test]
    fn the_stream_check_for_large_sources_agrees_with_the_whole_buffer_check() {
        type Check = fn(&[u8], &[u8]) -> Result<(), String>;
        let stream_checks: [(Codec, Check); 2] = [
            (Codec::Zstd, zstd::verify_stream),
            (Codec::Gzip, gzip::verify_stream),
        ];
        let input = sample();
        for (codec, verify_stream) in stream_checks {
            let mut enc = fast_encoder(codec);
            let mut out = Vec::new();
            enc.encode(&input, ContentKind::Text, &mut out).unwrap();
            let mut trailing = out.clone();
            trailing.push(0);
            let mut other = input.clone();
            other[7] ^= 1;
            let cases: [(&[u8], &[u8], bool); 5] = [
                (&out, &input, true),
                (&trailing, &input, false),
                (&out, &other, false),
                (&out, &input[1..], false),
                (&out[..out.len() - 1], &input, false),
            ];
            for (compressed, original, good) in cases {
                assert_eq!(
                    verify_stream(compressed, original).is_ok(),
                    good,
                    "{codec:?}"
                );
                assert_eq!(enc.verify(compressed, original).is_ok(), good, "{codec:?}");
            }
        }
    }

    #[test]
    fn tokens_and_suffixes() {
        assert_eq!(Codec::Zstd.token(), "zstd");
        assert_eq!(Codec::Zstd.suffix(), "zst");
        assert_eq!(Codec::parse("GZ"), Some(Codec::Gzip));
        assert_eq!(Codec::parse("deflate"), None);
    }
}
