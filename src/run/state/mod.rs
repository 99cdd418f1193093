//! What a run keeps between runs, and what it reads of the runs and releases
//! before it: the encoder cache (`cache`), the release store (`store`), the
//! journal of an interrupted run (`journal`), what the previous manifest and
//! the journals say precompress wrote (`prior`), and each candidate's
//! dictionaries in the earlier releases (`releases`). The stages, check,
//! merge and tune share them; none of them runs a stage.

pub mod cache;
pub(crate) mod journal;
pub(crate) mod prior;
pub(crate) mod releases;
pub(crate) mod store;
