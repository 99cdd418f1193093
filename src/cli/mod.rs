//! The `precompress` binary's own rooms, outside the library: argument
//! parsing (`args`), `precompress.toml` (`configfile`), size budgets
//! (`budget`), the GitHub Actions output (`github`), the earlier releases
//! taken from live sites (`live`) what a person
//! reads (`render`) and the report page's command (`report`). They turn what a
//! person or CI typed into a library [`precompressor::Config`] and the
//! library's reports into what a person or CI reads; none of the work is here.

pub mod args;
pub mod budget;
pub mod configfile;
pub mod github;
pub mod live;
pub mod render;
pub mod report;
