//! Why an asset has no variant of a coding, or no delta: the reasons the
//! manifest records and reports put in words; and why the walk passed a
//! directory entry over before any filter ran ([`Passed`]).

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

/// Why a directory entry was passed over before any filter ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Passed {
    /// A symlink, not followed (no `--follow-links`).
    Symlink,
    /// A symlink whose target does not exist.
    BrokenSymlink,
    /// A symlink that leads back to one of its own ancestors.
    SymlinkLoop,
    /// With `--follow-links`: leads to a folder outside DIR.
    OutsideRoot,
    /// A FIFO, socket or device.
    NotRegular,
    /// The name is not UTF-8, so it cannot be a manifest key or a URL we serve.
    NameNotUtf8,
    /// A dot-file or dot-folder (`.env`, `.git/`), other than `.well-known`:
    /// servers do not serve them, and the manifest, which a server may expose,
    /// does not list them.
    DotFile,
    /// The name holds a backslash (or another character no URL path segment
    /// may decode to), so no server could be asked for it by its name.
    NameNotServable,
}

impl Passed {
    pub fn as_str(self) -> &'static str {
        match self {
            Passed::Symlink => "symlink",
            Passed::BrokenSymlink => "broken_symlink",
            Passed::SymlinkLoop => "symlink_loop",
            Passed::OutsideRoot => "outside_root",
            Passed::NotRegular => "not_regular",
            Passed::NameNotUtf8 => "name_not_utf8",
            Passed::NameNotServable => "name_not_servable",
            Passed::DotFile => "dot_file",
        }
    }
}
