//! Why an asset has no variant of a coding, or no delta: the reasons the
//! manifest records and reports put in words.

/// Why a file gets no variant of a codec. Serialized into the manifest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Smaller than `--min-size`.
    TooSmall,
    /// The variant would not be strictly smaller than the source.
    NotSmaller,
    /// Smaller, but by less than `--min-ratio` asks.
    SavesTooLittle,
    /// Not a compressible type, or already compressed (png, woff2, ...).
    ExcludedType,
    /// Left out by `--exclude`, or not matched by `--include`.
    ExcludedGlob,
    /// A large source a fast zstd probe did not shrink at all: the slow
    /// encoders were not run on it.
    Incompressible,
    /// A `dcb` delta whose dictionary and file together pass brotli's 16 MiB
    /// window (RFC 9842 §4): not made (`dcz` still is).
    OverDcbWindow,
}

impl SkipReason {
    /// The name used in the manifest and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooSmall => "too_small",
            SkipReason::NotSmaller => "not_smaller",
            SkipReason::SavesTooLittle => "saves_too_little",
            SkipReason::ExcludedType => "excluded_type",
            SkipReason::ExcludedGlob => "excluded_glob",
            SkipReason::Incompressible => "incompressible",
            SkipReason::OverDcbWindow => "over_dcb_window",
        }
    }
}

/// What a skip reason's code (`too_small`, as in the manifest and `--json`)
/// means, in words for people; "" for a code it does not know.
pub fn reason_in_words(code: &str) -> &'static str {
    match code {
        "too_small" => "under `--min-size`",
        "not_smaller" => "the variant would not be smaller",
        "saves_too_little" => "the variant would save less than `--min-ratio` asks",
        "excluded_type" => "not a compressible type, or already compressed",
        "excluded_glob" => "`--exclude`, or not matched by `--include`",
        "incompressible" => "a fast zstd probe did not shrink it",
        "over_dcb_window" => "dictionary and file pass dcb's 16 MiB window",
        _ => "",
    }
}
