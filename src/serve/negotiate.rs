//! `Accept-Encoding` parsing and content-coding choice (RFC 9110 §12.5.3).
//!
//! The header comes from the network, so the parser never fails: a part that does
//! not follow the grammar (`codings [ OWS ";" OWS "q=" qvalue ]`) is ignored and
//! the rest still counts, the way browsers and the big servers behave. Weights are
//! kept as integer thousandths, the header's own precision, so ties are exact.
//!
//! Choices the RFC leaves to the server, made here:
//! - No header at all: identity. The RFC allows any coding, but clients that send
//!   nothing (curl, scripts, old proxies) rarely decode what they did not ask for.
//! - A coding listed twice: the first listing counts.
//! - `x-gzip` is `gzip` (§8.4.1.3).
//! - Identity that is acceptable only implicitly (neither listed nor covered by `*`)
//!   ranks below every coding the client listed with a non-zero weight.
//! - Among equal weights the smallest representation wins.

use crate::model::coding::Codec;

/// A weight in thousandths: 0 (refused) ..= 1000 (`q=1`, the default).
pub type Weight = u16;

/// The parsed header: the codings the client named, with their weights.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcceptEncoding {
    /// `(lower-cased token, weight)` in header order, first listing of each token only.
    entries: Vec<(String, Weight)>,
}

/// The most comma-separated parts of `Accept-Encoding` that are read.
pub const MAX_PARTS: usize = 64;

/// How much the client wants one representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// Acceptable only because identity always is unless refused.
    Implicit,
    /// Named (or covered by `*`) with this non-zero weight.
    Weighted(Weight),
}

impl AcceptEncoding {
    /// Parses one or more `Accept-Encoding` field values (join repeated fields with
    /// `,`). Never fails: malformed parts are skipped. Linear in the header's
    /// length, and only the first [`MAX_PARTS`] parts count: a real client
    /// names a handful of codings, a hostile one sent 60,000.
    pub fn parse(header: &str) -> AcceptEncoding {
        let mut entries: Vec<(String, Weight)> = Vec::new();
        for part in header.split(',').take(MAX_PARTS) {
            let Some((token, weight)) = parse_part(part) else {
                continue;
            };
            // At most MAX_PARTS entries: this scan is bounded.
            if !entries.iter().any(|(t, _)| *t == token) {
                entries.push((token, weight));
            }
        }
        AcceptEncoding { entries }
    }

    /// The weight the client gave `token` (lower case) explicitly, if it named it.
    fn named(&self, token: &str) -> Option<Weight> {
        self.entries
            .iter()
            .find(|(t, _)| t == token)
            .map(|&(_, w)| w)
    }

    /// The weight of a content coding: its own entry, else `*`'s, else refused.
    pub fn weight(&self, codec: Codec) -> Weight {
        self.named(codec.token())
            .or_else(|| self.named("*"))
            .unwrap_or(0)
    }

    /// The weight the client gave `token` (lower case) by name; 0 when it did
    /// not name it (`*` does not count).
    pub fn named_weight(&self, token: &str) -> Weight {
        self.named(token).unwrap_or(0)
    }

    /// Identity's rank: its own entry, else `*`'s, else acceptable by default.
    fn identity_rank(&self) -> Option<Rank> {
        match self.named("identity").or_else(|| self.named("*")) {
            Some(0) => None,
            Some(w) => Some(Rank::Weighted(w)),
            None => Some(Rank::Implicit),
        }
    }
}

/// One comma-separated part: `token [; q=value]`, or `None` if malformed or empty.
fn parse_part(part: &str) -> Option<(String, Weight)> {
    let mut pieces = part.split(';');
    let token = pieces.next()?.trim_matches(is_ows);
    if token.is_empty() || !token.bytes().all(is_tchar) {
        return None;
    }
    let mut token = token.to_ascii_lowercase();
    if token == "x-gzip" {
        token = "gzip".into();
    }
    let weight = match pieces.next() {
        None => 1000,
        Some(param) => {
            let (name, value) = param.trim_matches(is_ows).split_once('=')?;
            if !name.trim_end_matches(is_ows).eq_ignore_ascii_case("q") {
                return None;
            }
            parse_qvalue(value.trim_start_matches(is_ows))?
        }
    };
    // Accept-Encoding has exactly one parameter, the weight.
    if pieces.next().is_some() {
        return None;
    }
    Some((token, weight))
}

fn is_ows(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn parse_qvalue(s: &str) -> Option<Weight> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut thousandths: Weight = 0;
    for (i, b) in frac.bytes().enumerate() {
        thousandths += Weight::from(b - b'0') * [100, 10, 1][i];
    }
    match int {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// A representation on offer: how much the client wants its coding.
pub trait Offer {
    /// The client's weight for this coding (0: refused).
    fn weight_in(&self, accept: &AcceptEncoding) -> Weight;
}

impl Offer for Codec {
    fn weight_in(&self, accept: &AcceptEncoding) -> Weight {
        accept.weight(*self)
    }
}

/// What to send, or that nothing is acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The unencoded representation.
    Identity,
    /// The variant at this index of the list given to [`choose`].
    Variant(usize),
    /// Every representation is refused: answer 406.
    NotAcceptable,
}

/// Picks among the identity representation (`identity_size` bytes) and `variants`
/// (`(coding, size)`): the highest rank, then the smallest, then the earliest
/// variant. `accept` is `None` when the request had no `Accept-Encoding` field.
pub fn choose<C: Offer>(
    accept: Option<&AcceptEncoding>,
    identity_size: u64,
    variants: &[(C, u64)],
) -> Choice {
    let Some(accept) = accept else {
        return Choice::Identity;
    };
    let mut best: Option<(Rank, u64, Choice)> = accept
        .identity_rank()
        .map(|r| (r, identity_size, Choice::Identity));
    for (i, (coding, size)) in variants.iter().enumerate() {
        let size = *size;
        let w = coding.weight_in(accept);
        if w == 0 {
            continue;
        }
        let candidate = (Rank::Weighted(w), size, Choice::Variant(i));
        let better = match &best {
            None => true,
            Some((rank, best_size, _)) => {
                (candidate.0, std::cmp::Reverse(candidate.1))
                    > (*rank, std::cmp::Reverse(*best_size))
            }
        };
        if better {
            best = Some(candidate);
        }
    }
    best.map_or(Choice::NotAcceptable, |(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Codec::{Brotli as Br, Gzip, Zstd};

    fn pick(header: Option<&str>, variants: &[(Codec, u64)]) -> &'static str {
        let ae = header.map(AcceptEncoding::parse);
        match choose(ae.as_ref(), 1000, variants) {
            Choice::Identity => "identity",
            Choice::NotAcceptable => "406",
            Choice::Variant(i) => variants[i].0.token(),
        }
    }

    /// The rows of `fixtures/accept-encoding.json` with variants only (the
    /// deltas' rows go through `Index`, in serve's own test), each against
    /// its offer's variants, smallest first, as the manifest lists them.
    #[test]
    fn negotiation_table() {
        let t = crate::serve::tables::accept_encoding();
        let mut rows = 0;
        for row in t["cases"].as_array().unwrap() {
            let offer = &t["offers"][row["offer"].as_str().unwrap()];
            if !offer["deltas"].is_null() || !row["dictionary"].is_null() {
                continue;
            }
            let variants: Vec<(Codec, u64)> = offer["variants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    let c = Codec::parse(v[0].as_str().unwrap()).unwrap();
                    (c, v[1].as_u64().unwrap())
                })
                .collect();
            assert_eq!(offer["identity"], 1000, "pick's identity");
            let header = crate::serve::tables::accept(row);
            assert_eq!(
                pick(header.as_deref(), &variants),
                row["want"].as_str().unwrap(),
                "row {row}"
            );
            rows += 1;
        }
        assert!(rows >= 48, "{rows} rows");
    }

    #[test]
    fn qvalues_follow_the_grammar() {
        for (s, want) in [
            ("0", Some(0)),
            ("0.", Some(0)),
            ("0.5", Some(500)),
            ("0.05", Some(50)),
            ("0.123", Some(123)),
            ("1", Some(1000)),
            ("1.000", Some(1000)),
            ("1.001", None),
            ("0.1234", None),
            ("2", None),
            ("-1", None),
            (".5", None),
            ("", None),
            ("1e0", None),
        ] {
            assert_eq!(parse_qvalue(s), want, "q={s}");
        }
    }

    #[test]
    fn a_huge_header_is_read_only_as_far_as_it_matters() {
        // 60,000 distinct tokens: every part after the first 64 is ignored, so
        // parsing is linear and the result bounded (it took seconds before).
        let mut h: String = (0..60_000).map(|i| format!("x{i}, ")).collect();
        h.push_str("br");
        let ae = AcceptEncoding::parse(&h);
        assert_eq!(ae.entries.len(), MAX_PARTS);
        assert_eq!(ae.weight(Br), 0, "br came after the bound");
        let ae = AcceptEncoding::parse(&format!("br, {h}"));
        assert_eq!(ae.weight(Br), 1000);
    }

    #[test]
    fn weight_falls_back_to_star() {
        let ae = AcceptEncoding::parse("gzip;q=0.3, *;q=0.2");
        assert_eq!(ae.weight(Gzip), 300);
        assert_eq!(ae.weight(Br), 200);
        assert_eq!(AcceptEncoding::parse("gzip").weight(Zstd), 0);
    }
}
