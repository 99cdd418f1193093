//! The dictionaries a release makes and marks for the next one: the chunks
//! with no name of their own grouped and the code dictionary (`shared`), the
//! documents dictionary (`documents`), what a first visit loads, which no
//! dictionary may lean on a chunk it lacks (`first_visit`), and the list of
//! marked files a live site publishes (`publish`).

pub(crate) mod documents;
pub(crate) mod first_visit;
pub(crate) mod publish;
pub(crate) mod shared;
