//! What precompress generates for servers and hosts it does not run itself
//! (feature `deploy`): nginx `map` blocks (`precompress nginx-map`), a Caddy
//! snippet (`caddy-map`), a folder as bucket objects with their headers and
//! the scripts that upload them (`objects`), and the CloudFront Functions that
//! pick an object per request (`objects --edge`). Each is made from a loaded
//! [`Index`] and says what it had to leave out; none runs per request, so a
//! server that embeds [`crate::serve`] compiles none of it.
//!
//! This file holds what the server configurations share: which assets can be
//! written into one, and the `Accept-Encoding` rule as a regex.

pub mod apache;
pub mod caddy;
pub mod cloudfront;
pub(crate) mod generate;
pub mod nginx;
pub mod objects;

#[cfg(test)]
mod fixture;

use crate::serve::{Entry, Index};

/// A regex (PCRE for nginx, RE2 for Caddy; no look-around, case left to the
/// caller's flag) that matches an `Accept-Encoding` naming `token` exactly as
/// [`negotiate`](crate::serve::negotiate) accepts it: alone, or with one `q` weight above 0 and
/// nothing after it. `dcb;q=0;x=1` is malformed, so [`negotiate`](crate::serve::negotiate) passes it
/// over, and so must the map.
pub(crate) fn accept_encoding_regex(token: &str) -> String {
    const NONZERO: &str = r"(?:1(?:\.0{0,3})?|0\.(?:[1-9][0-9]{0,2}|0[1-9][0-9]?|00[1-9]))";
    // `\x20`, not a space: a Caddyfile token ends at a space.
    const OWS: &str = r"[\x20\t]*";
    format!(r"(?:^|,){OWS}{token}{OWS}(?:$|,|;{OWS}q{OWS}={OWS}{NONZERO}{OWS}(?:$|,))")
}

/// An asset as a server's configuration writes it (`nginx-map`, `caddy-map`).
pub(crate) struct ConfigAsset<'a> {
    pub key: &'a str,
    pub entry: &'a Entry,
    /// `/` and the key: the URL path.
    pub uri: String,
    /// Its `Use-As-Dictionary`, when the configuration can write it.
    pub use_as: Option<&'a str>,
}

/// The assets of `index` in path order, as far as `unwritable` (the reason a
/// URL path cannot be written into that server's configuration, if any) and
/// `unwritable_value` (the same for a `Use-As-Dictionary` value) let them be
/// written; what is left out goes to `skipped` with why.
pub(crate) fn config_assets<'a>(
    index: &'a Index,
    unwritable: impl Fn(&str) -> Option<&'static str>,
    unwritable_value: impl Fn(&str) -> Option<&'static str>,
    skipped: &mut Vec<String>,
) -> Vec<ConfigAsset<'a>> {
    let mut assets: Vec<_> = index.iter().collect();
    assets.sort_by_key(|(k, _)| *k);
    let mut out = Vec::with_capacity(assets.len());
    for (key, entry) in assets {
        let uri = index.url(key);
        if let Some(why) = unwritable(&uri) {
            if !entry.deltas.is_empty() || entry.use_as_dictionary.is_some() {
                skipped.push(format!("{key}: {why}"));
            }
            continue;
        }
        let use_as = match &entry.use_as_dictionary {
            Some(u) => match unwritable_value(u) {
                Some(why) => {
                    skipped.push(format!("{key}: Use-As-Dictionary {u:?}: {why}"));
                    None
                }
                None => Some(u.as_str()),
            },
            None => None,
        };
        out.push(ConfigAsset {
            key,
            entry,
            uri,
            use_as,
        });
    }
    out
}
