//! The content codings precompress writes, as types: the ordinary ones
//! ([`Codec`]: `br`, `zstd`, `gzip`) and RFC 9842's dictionary-compressed ones
//! ([`DeltaCoding`]: `dcb`, `dcz`), with their tokens, file-name suffixes and
//! stream headers. Names only: no encoder, so a server that only negotiates
//! (`serve`, without the `compress` feature) builds without any codec library.

/// A content coding we write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Codec {
    Brotli,
    Zstd,
    Gzip,
}

impl Codec {
    /// All codecs, in the order the manifest and reports list them.
    pub const ALL: [Codec; 3] = [Codec::Brotli, Codec::Zstd, Codec::Gzip];

    /// Position in [`Codec::ALL`], for per-codec arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The HTTP content-coding token (`Content-Encoding`, `Accept-Encoding`).
    pub fn token(self) -> &'static str {
        match self {
            Codec::Brotli => "br",
            Codec::Zstd => "zstd",
            Codec::Gzip => "gzip",
        }
    }

    /// The file-name suffix servers look for (`app.js` -> `app.js.br`).
    pub fn suffix(self) -> &'static str {
        match self {
            Codec::Brotli => "br",
            Codec::Zstd => "zst",
            Codec::Gzip => "gz",
        }
    }

    /// Parses a token or suffix (`br`, `brotli`, `zstd`, `zst`, `gzip`, `gz`).
    pub fn parse(s: &str) -> Option<Codec> {
        match s.trim().to_ascii_lowercase().as_str() {
            "br" | "brotli" => Some(Codec::Brotli),
            "zstd" | "zst" => Some(Codec::Zstd),
            "gzip" | "gz" => Some(Codec::Gzip),
            _ => None,
        }
    }

    /// Relative CPU cost per input byte at the default levels, measured on the
    /// shared `large` corpus (brotli q11 143.5 s, zstd 19 34 s, libdeflate 12
    /// 15.8 s). Only used to start the longest jobs first.
    pub fn cost_weight(self) -> u64 {
        match self {
            Codec::Brotli => 91,
            Codec::Zstd => 22,
            Codec::Gzip => 10,
        }
    }
}

/// How brotli should model the data; other codecs ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    Text,
    Font,
    Binary,
}

/// A dictionary-compressed coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeltaCoding {
    /// `dcb`: brotli with a raw dictionary.
    Dcb,
    /// `dcz`: Zstandard with a raw-content dictionary.
    Dcz,
}

/// `dcb`'s magic number.
pub const DCB_MAGIC: [u8; 4] = [0xFF, 0x44, 0x43, 0x42];
/// `dcz`'s header: a skippable frame of 32 bytes (the hash).
pub const DCZ_MAGIC: [u8; 8] = [0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00];

impl DeltaCoding {
    /// Both, in the order the manifest lists equal sizes.
    pub const ALL: [DeltaCoding; 2] = [DeltaCoding::Dcb, DeltaCoding::Dcz];

    /// The HTTP content-coding token, also the file-name suffix.
    pub fn token(self) -> &'static str {
        match self {
            DeltaCoding::Dcb => "dcb",
            DeltaCoding::Dcz => "dcz",
        }
    }

    /// Parses a token.
    pub fn parse(s: &str) -> Option<DeltaCoding> {
        match s {
            "dcb" => Some(DeltaCoding::Dcb),
            "dcz" => Some(DeltaCoding::Dcz),
            _ => None,
        }
    }

    /// The bytes before the compressed stream: magic number and hash.
    pub fn header(self, dict_sha256: &[u8; 32]) -> Vec<u8> {
        let magic: &[u8] = match self {
            DeltaCoding::Dcb => &DCB_MAGIC,
            DeltaCoding::Dcz => &DCZ_MAGIC,
        };
        [magic, dict_sha256].concat()
    }

    /// Length of [`DeltaCoding::header`].
    pub fn header_len(self) -> usize {
        match self {
            DeltaCoding::Dcb => DCB_MAGIC.len() + 32,
            DeltaCoding::Dcz => DCZ_MAGIC.len() + 32,
        }
    }

    /// The dictionary hash a delta's header names, if the header is well formed.
    pub fn header_hash(self, delta: &[u8]) -> Option<[u8; 32]> {
        let magic_len = self.header_len() - 32;
        let header = delta.get(..self.header_len())?;
        if header[..magic_len] != self.header(&[0; 32])[..magic_len] {
            return None;
        }
        header[magic_len..].try_into().ok()
    }

    /// Relative CPU cost per input byte, for ordering jobs (as
    /// [`Codec::cost_weight`]); the dictionary is indexed too.
    pub fn cost_weight(self) -> u64 {
        match self {
            DeltaCoding::Dcb => 91,
            DeltaCoding::Dcz => 22,
        }
    }
}
