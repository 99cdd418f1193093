//! The names precompress gives its own files in DIR, which no walk may take
//! for assets and no server may send.

// Temporary files are named by `fsutil`, which writes them and sits below
// this vocabulary; the names are re-exported here with the rest.
pub use crate::fsutil::{TMP_PREFIX, TMP_SUFFIX};
