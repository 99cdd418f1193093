//! The vocabulary every layer shares, and that imports none of them (only
//! itself and `crate::error`): codings (`coding`), what a file is by its name
//! (`content`), why there is no variant (`skip`), logical names and
//! dictionary values (`dictionary`), the rules for paths under DIR (`path`),
//! precompress's own file names (`names`), the list of dictionaries a release
//! publishes (`published`), the manifest itself (`manifest`)
//! and a sharded run's units and partial manifests (`shard`). The run, the
//! codecs, the servers and the binary all speak it.

pub mod coding;
pub mod content;
pub mod dictionary;
pub mod manifest;
pub mod names;
pub mod path;
pub mod published;
pub mod shard;
pub mod skip;
