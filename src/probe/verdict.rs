//! What is wrong with an origin's answer: pure functions of its status,
//! headers and body, against the manifest's entry (the variant or delta it
//! must be, the headers `serve` documents), and across answers (the ETags).

use std::collections::{BTreeMap, BTreeSet};

use url::Url;

use crate::encode::{new_encoder, Codec, Encoder, Levels};
use crate::model::coding::DeltaCoding;
use crate::model::manifest::{Asset, Variant};

use super::client::Answer;
use super::headers::*;
use super::terms::*;

/// What one request of an asset asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask<'a> {
    /// No dictionary.
    Plain,
    /// The code dictionary, as Chromium's idle fetch holding no dictionary
    /// asks it: a 204, `no-store`
    /// ([`crate::model::dictionary::DEFERRED_CACHE_CONTROL`]).
    Deferred,
    /// With this `Available-Dictionary` (a delta's `dictionary`).
    Dictionary(&'a str),
}

/// The asset one request is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Its manifest key.
    pub key: &'a str,
    /// Its manifest entry.
    pub asset: &'a Asset,
    /// The URL asked.
    pub url: &'a Url,
    /// The `Link` targets an HTML page must carry (absolute URLs): the
    /// manifest's shared and documents dictionaries.
    pub dictionaries: &'a [Url],
}

/// What [`judge`] found in one answer, besides problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The `Content-Encoding` token sent (`None`: identity).
    pub coding: Option<String>,
    /// The ETag sent.
    pub etag: Option<String>,
    /// The ETag the manifest gives the representation sent, when it lists it.
    pub expected_etag: Option<String>,
    /// blake3 of the raw body.
    pub body_blake3: String,
    /// A page the manifest marks as its next version's dictionary, sent
    /// `no-cache` with no `Use-As-Dictionary`: a server that keeps no page
    /// dictionary (nginx-map, caddy-map, apache-map today). Not a wrong
    /// answer, a win not taken: the report's notes count them.
    pub page_not_kept: bool,
    /// The body was compressed by the host, not as precompress wrote it
    /// ([`ProbeKind::is_host`]): its ETag is the host's to choose.
    pub host_coded: bool,
}

/// Decoders for the three variant codecs, made on first use.
#[derive(Default)]
pub struct Decoders([Option<Box<dyn Encoder>>; 3]);

impl Decoders {
    /// blake3 of `body` decoded with `codec` (the limits of a browser), or why not.
    fn decoded_blake3(&mut self, codec: Codec, body: &[u8], size: u64) -> Result<String, String> {
        let dec = match &mut self.0[codec.index()] {
            Some(d) => d,
            slot => slot.insert(
                new_encoder(codec, Levels::default()).map_err(|e| format!("no decoder: {e}"))?,
            ),
        };
        let mut out = Vec::new();
        // One spare byte: a body that decodes to more fails the comparison.
        dec.decode(body, size as usize + 1, &mut out)
            .map_err(|e| format!("it does not decode as {} ({e})", codec.token()))?;
        Ok(blake3::hash(&out).to_hex().to_string())
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}

/// Judges one answer for `target`, pushing problems (`kind`, `detail`) into
/// `out`. `None` when there is nothing more to learn from it (not a 200).
pub fn judge(
    target: Target<'_>,
    ask: Ask<'_>,
    answer: &Answer,
    dec: &mut Decoders,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<Seen> {
    let (asset, url) = (target.asset, target.url);
    if (300..400).contains(&answer.status) {
        out.push(redirect(url, answer));
        return None;
    }
    if ask == Ask::Deferred {
        out.extend(judge_deferred(answer));
        return None;
    }
    if answer.status != 200 {
        out.push((
            ProbeKind::Status,
            format!("answered {}, not 200", answer.status),
        ));
        return None;
    }
    let body_blake3 = blake3::hash(&answer.body).to_hex().to_string();
    let before = out.len();
    let coding = answer
        .joined("content-encoding")
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity");
    let expected_etag = match ask {
        Ask::Plain | Ask::Deferred => {
            judge_variant(asset, coding.as_deref(), answer, &body_blake3, dec, out)
        }
        Ask::Dictionary(d) => {
            let delta = judge_delta(asset, d, coding.as_deref(), &body_blake3, out);
            let delta_coding = coding.as_deref().and_then(DeltaCoding::parse).is_some();
            let delta_bytes = asset.deltas.iter().any(|d| d.blake3 == body_blake3);
            if delta.is_none() && !delta_coding && !delta_bytes {
                // No delta: what came instead must still be right.
                judge_variant(asset, coding.as_deref(), answer, &body_blake3, dec, out)
            } else {
                delta
            }
        }
    };
    let host_coded = out[before..].iter().any(|(k, _)| k.is_host());
    let page_not_kept = asset.cache == crate::model::manifest::Caching::Page
        && answer.joined("use-as-dictionary").is_none()
        && matches!(
            dictionary_freshness(answer.joined("cache-control").as_deref(), None, None, None),
            Freshness::NotFresh(_)
        );
    let mut headers = Vec::new();
    judge_headers(target, answer, &mut headers);
    out.extend(
        headers
            .into_iter()
            .filter(|(k, _)| !(page_not_kept && *k == ProbeKind::MissingUseAsDictionary)),
    );
    if asset.use_as_dictionary.is_some() && !page_not_kept {
        let not_fresh = match dictionary_freshness(
            answer.joined("cache-control").as_deref(),
            answer.first("expires"),
            answer.first("date"),
            answer.first("last-modified"),
        ) {
            Freshness::Fresh => None,
            Freshness::Heuristic(s) => Some(format!(
                "no Cache-Control lifetime nor Expires: Chromium would keep the dictionary only for a tenth of its age since Last-Modified ({s} s now), so a visitor who comes back later holds none and gets no delta; send `Cache-Control: {}` (fingerprinted names; precompress serve does)",
                crate::serve::CACHE_IMMUTABLE
            )),
            Freshness::NotFresh(why) => Some(why),
        };
        out.extend(not_fresh.map(|why| (ProbeKind::DictionaryNotFresh, why)));
    }
    Some(Seen {
        coding,
        etag: answer.joined("etag"),
        expected_etag,
        body_blake3,
        page_not_kept,
        host_coded,
    })
}

/// The problem of a 3xx answer.
fn redirect(url: &Url, answer: &Answer) -> (ProbeKind, String) {
    let Some(loc) = answer.first("location") else {
        return (
            ProbeKind::Status,
            format!("answered {} with no Location", answer.status),
        );
    };
    match url.join(loc.trim()) {
        Ok(to) if same_origin(url, &to) => (
            ProbeKind::Redirect,
            format!(
                "answered {} to {} (same origin): an asset's URL should answer 200; not followed",
                answer.status,
                shown(&to)
            ),
        ),
        Ok(to) => (
            ProbeKind::RedirectOffOrigin,
            format!(
                "answered {} to {}, another origin; not followed",
                answer.status,
                shown(&to)
            ),
        ),
        Err(_) => (
            ProbeKind::RedirectOffOrigin,
            format!(
                "answered {} with Location {:?}, which is no URL; not followed",
                answer.status,
                redact_userinfo(loc)
            ),
        ),
    }
}

/// An uncompressed answer to a request without a dictionary: whether the
/// manifest has a variant it should have sent, and whether the body is the asset.
fn judge_identity(
    asset: &Asset,
    listed: &[&str],
    size: usize,
    body_blake3: &str,
    out: &mut Vec<(ProbeKind, String)>,
) {
    if !listed.is_empty() {
        out.push((
            ProbeKind::WrongContentEncoding,
            format!(
                "sent identity, though the manifest lists {} and the request accepts it",
                listed.join(", ")
            ),
        ));
    }
    if body_blake3 != asset.blake3 {
        out.push((
            ProbeKind::BodyMismatch,
            format!(
                "the uncompressed body ({size} bytes, blake3 {}) is not the asset's ({} bytes, blake3 {}): a stale file after a rebuild?",
                short(body_blake3),
                asset.size,
                short(&asset.blake3)
            ),
        ));
    }
}

/// Coding and body of an answer to a request without a dictionary; the
/// manifest's ETag of what was sent.
fn judge_variant(
    asset: &Asset,
    coding: Option<&str>,
    answer: &Answer,
    body_blake3: &str,
    dec: &mut Decoders,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<String> {
    let listed: Vec<&str> = asset.encodings.iter().map(|v| v.coding.as_str()).collect();
    let size = answer.body.len();
    let Some(coding) = coding else {
        judge_identity(asset, &listed, size, body_blake3, out);
        return Some(asset.etag.clone());
    };
    if DeltaCoding::parse(coding).is_some() {
        out.push((
            ProbeKind::WrongContentEncoding,
            format!("sent {coding}, a delta, to a request with no Available-Dictionary"),
        ));
        return None;
    }
    let codec = Codec::parse(coding).filter(|c| c.token() == coding);
    let Some(variant) = asset.encodings.iter().find(|v| v.coding == coding) else {
        out.push(judge_unlisted(asset, &listed, coding, codec, answer, dec));
        return None;
    };
    let decoded = codec.map(|c| dec.decoded_blake3(c, &answer.body, asset.size));
    if body_blake3 != variant.blake3 {
        if let Some(Ok(h)) = &decoded {
            if *h == asset.blake3 {
                out.push((
                    ProbeKind::HostReencoded,
                    format!(
                        "the {coding} body ({size} bytes, blake3 {}) is not the manifest's {} ({} bytes), though it decodes to the asset: the host compressed it again",
                        short(body_blake3),
                        variant.path,
                        variant.size
                    ),
                ));
                return None;
            }
        }
        let how = match decoded {
            Some(Ok(_)) => {
                ", and it decodes to something other than the asset: a stale file after a rebuild?"
                    .to_string()
            }
            Some(Err(e)) => format!(", and {e}: a stale file after a rebuild?"),
            None => String::new(),
        };
        out.push((
            ProbeKind::BodyMismatch,
            format!(
                "the {coding} body ({size} bytes, blake3 {}) is not the manifest's {} ({} bytes, blake3 {}){how}",
                short(body_blake3),
                variant.path,
                variant.size,
                short(&variant.blake3)
            ),
        ));
    } else {
        // The file is the one listed, so the manifest itself is wrong.
        let why = match decoded {
            Some(Ok(h)) if h != asset.blake3 => {
                Some("it decodes to something other than the asset".to_string())
            }
            Some(Err(e)) => Some(e),
            _ => None,
        };
        if let Some(why) = why {
            out.push((
                ProbeKind::BodyMismatch,
                format!(
                    "the {coding} body is the manifest's {}, but {why} (run precompress check DIR)",
                    variant.path
                ),
            ));
        }
    }
    Some(variant.etag.clone())
}

/// A body sent in `coding`, for which the manifest lists no variant of
/// `asset` (it lists `listed`): the host's own compression when it decodes
/// to the asset, else a wrong encoding.
fn judge_unlisted(
    asset: &Asset,
    listed: &[&str],
    coding: &str,
    codec: Option<Codec>,
    answer: &Answer,
    dec: &mut Decoders,
) -> (ProbeKind, String) {
    let decodes = codec.map(|c| dec.decoded_blake3(c, &answer.body, asset.size));
    let lists = if listed.is_empty() {
        "no variant".to_string()
    } else {
        listed.join(", ")
    };
    let (kind, how) = match decodes {
        Some(Ok(h)) if h == asset.blake3 => (
            ProbeKind::HostCompressed,
            "; it decodes to the asset: the host compressed it itself".to_string(),
        ),
        Some(Ok(_)) => (
            ProbeKind::WrongContentEncoding,
            "; it decodes to something other than the asset".to_string(),
        ),
        Some(Err(e)) => (ProbeKind::WrongContentEncoding, format!("; {e}")),
        None => (ProbeKind::WrongContentEncoding, String::new()),
    };
    let size = answer.body.len();
    (
        kind,
        format!(
            "sent {coding} ({size} bytes), which the manifest does not list for this asset (it lists {lists}){how}"
        ),
    )
}

/// Coding and body of an answer to a request with the dictionary `dict`.
fn judge_delta(
    asset: &Asset,
    dict: &str,
    coding: Option<&str>,
    body_blake3: &str,
    out: &mut Vec<(ProbeKind, String)>,
) -> Option<String> {
    let got = coding.unwrap_or("identity");
    let Some(delta) = asset
        .deltas
        .iter()
        .find(|d| d.dictionary == dict && Some(d.coding.as_str()) == coding)
    else {
        // The delta's bytes under another coding: a browser would take them
        // for the asset itself.
        if let Some(d) = asset.deltas.iter().find(|d| d.blake3 == body_blake3) {
            out.push((
                ProbeKind::WrongContentEncoding,
                format!(
                    "sent the bytes of {} with Content-Encoding {got}, not {}: a browser would read the delta as the asset",
                    d.path, d.coding
                ),
            ));
        }
        out.push((
            ProbeKind::NoDelta,
            format!(
                "a client holding the previous release (Available-Dictionary {dict}) got {got}, not its delta"
            ),
        ));
        return None;
    };
    if body_blake3 != delta.blake3 {
        out.push((
            ProbeKind::BodyMismatch,
            format!(
                "the {got} body (blake3 {}) is not the manifest's {} (blake3 {}): a stale delta after a rebuild?",
                short(body_blake3),
                delta.path,
                short(&delta.blake3)
            ),
        ));
    }
    Some(delta.etag.clone())
}

/// `Content-Type`, `Vary`, `Use-As-Dictionary` and, on HTML, `Link`.
fn judge_headers(target: Target<'_>, answer: &Answer, out: &mut Vec<(ProbeKind, String)>) {
    let (key, asset, url) = (target.key, target.asset, target.url);
    match answer.joined("content-type") {
        Some(t) if same_content_type(&t, &asset.content_type) => {}
        t => out.push((
            ProbeKind::WrongContentType,
            format!(
                "Content-Type {}, the manifest's is {:?}",
                t.map_or("missing".into(), |t| format!("{t:?}")),
                asset.content_type
            ),
        )),
    }
    let vary = answer.all("vary");
    let mut need = Vec::new();
    if !asset.encodings.is_empty() || !asset.deltas.is_empty() {
        need.push("Accept-Encoding");
    }
    if !asset.deltas.is_empty() {
        need.push("Available-Dictionary");
    }
    let lacking: Vec<&str> = need.into_iter().filter(|n| !varies_on(&vary, n)).collect();
    if !lacking.is_empty() {
        out.push((
            ProbeKind::MissingVary,
            format!(
                "{} lacks {}: a shared cache could send one client's coding to another",
                if vary.is_empty() {
                    "no Vary: it".to_string()
                } else {
                    format!("Vary {:?}", vary.join(", "))
                },
                lacking.join(" and ")
            ),
        ));
    }
    let use_as = answer.joined("use-as-dictionary");
    match (&asset.use_as_dictionary, use_as) {
        (Some(want), None) => out.push((
            ProbeKind::MissingUseAsDictionary,
            format!("no Use-As-Dictionary (the manifest's is {want:?}): browsers will not keep it for the next release's deltas"),
        )),
        (Some(want), Some(got)) if got.trim() != want => out.push((
            ProbeKind::WrongUseAsDictionary,
            format!("Use-As-Dictionary {got:?}, the manifest's is {want:?}"),
        )),
        (None, Some(got)) => out.push((
            ProbeKind::UnexpectedUseAsDictionary,
            format!("Use-As-Dictionary {got:?} on an asset the manifest does not mark"),
        )),
        _ => {}
    }
    if asset
        .content_type
        .to_ascii_lowercase()
        .starts_with("text/html")
        && !target.dictionaries.is_empty()
    {
        let links: Vec<Url> = link_targets(&answer.all("link"), "compression-dictionary")
            .iter()
            .filter_map(|t| url.join(t).ok())
            .collect();
        let missing: Vec<&str> = target
            .dictionaries
            .iter()
            .filter(|d| !links.contains(d))
            .map(Url::path)
            .collect();
        if !missing.is_empty() {
            out.push((
                ProbeKind::MissingLink,
                format!(
                    "no Link <{}>; rel=\"compression-dictionary\" on {key}: browsers will not fetch the shared dictionary",
                    missing.join(">, <")
                ),
            ));
        }
    }
}

/// What is wrong with the answer to a request for the code dictionary that
/// holds no dictionary: anything but a 204 that no cache keeps.
fn judge_deferred(answer: &Answer) -> Option<(ProbeKind, String)> {
    let want = crate::model::dictionary::DEFERRED_CACHE_CONTROL;
    let cc = answer.joined("cache-control");
    let no_store = cc
        .as_deref()
        .is_some_and(|v| v.split(',').any(|d| d.trim().eq_ignore_ascii_case(want)));
    match answer.status {
        204 if no_store => None,
        204 => Some((
            ProbeKind::DictionaryNotDeferred,
            format!(
                "204 with Cache-Control {:?}: a cache may keep the empty answer; send `Cache-Control: {want}`",
                cc.unwrap_or_default()
            ),
        )),
        200 => Some((
            ProbeKind::DictionaryNotDeferred,
            format!(
                "sent whole ({} B{}) to Chromium holding no dictionary: a first visit whose idle fetch comes before the chunk it is a delta against is stored pays for all of it; answer it 204 with `Cache-Control: {want}`, as precompress serve and the nginx-map, caddy-map and apache-map configurations do",
                answer.body.len(),
                answer
                    .joined("content-encoding")
                    .map(|c| format!(" {}", c.trim()))
                    .unwrap_or_default()
            ),
        )),
        s => Some((ProbeKind::Status, format!("answered {s}, not 204"))),
    }
}

/// When the variant sent (`coding`) is larger than another the manifest lists
/// and `accept` (the request's `Accept-Encoding`) allows, that one: the
/// server breaks ties by its own order, not by size (Caddy's `precompressed
/// zstd br gzip`), and every visitor downloads the difference. `None` for
/// identity or a delta (judged elsewhere) and for the smallest.
pub(crate) fn smaller_accepted<'a>(
    asset: &'a Asset,
    coding: Option<&str>,
    accept: &str,
) -> Option<(&'a Variant, &'a Variant)> {
    let allowed = |token: &str| {
        accept.split(',').any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let named = parts.next().is_some_and(|t| t.eq_ignore_ascii_case(token));
            let refused = parts.any(|p| {
                p.split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("q") && v.trim().parse::<f32>() == Ok(0.0)
                })
            });
            named && !refused
        })
    };
    let sent = asset
        .encodings
        .iter()
        .find(|v| Some(v.coding.as_str()) == coding)?;
    let smallest = asset
        .encodings
        .iter()
        .filter(|v| allowed(&v.coding))
        .min_by_key(|v| v.size)?;
    (smallest.size < sent.size).then_some((sent, smallest))
}

/// ETags over the whole origin. A weak one is always a problem (the server
/// re-encoded the body or no longer vouches for its bytes). A server that
/// sends the manifest's ETags (any response carries one) must send the one
/// of each representation; one with its own scheme (nginx, Caddy: mtime and
/// size) must at least never give two different bodies of an asset one tag.
pub(crate) fn judge_etags(seen: &[(&str, &Url, Seen)], notes: &mut Vec<String>) -> Vec<Problem> {
    let problem = |key: &str, url: &Url, detail: String| Problem {
        path: key.to_string(),
        url: shown(url),
        problem: ProbeKind::EtagMismatch,
        detail,
    };
    let manifest_tags = seen
        .iter()
        .any(|(_, _, s)| s.etag.is_some() && s.etag == s.expected_etag);
    let mut out = Vec::new();
    let mut bodies: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    // A body the host compressed itself carries the host's ETag.
    for (key, url, s) in seen.iter().filter(|(_, _, s)| !s.host_coded) {
        let what = s.coding.as_deref().unwrap_or("identity");
        match (&s.etag, &s.expected_etag) {
            (Some(e), _) if e.trim_start().starts_with("W/") => out.push(problem(
                key,
                url,
                format!(
                    "weak ETag {e} on the {what} body: re-encoded, or changed since precompress ran?"
                ),
            )),
            (e, Some(want)) if manifest_tags && e.as_ref() != Some(want) => out.push(problem(
                key,
                url,
                format!(
                    "ETag {} on the {what} body, the manifest's is {want}: a stale or re-encoded file?",
                    e.as_deref().unwrap_or("missing")
                ),
            )),
            (Some(e), _) => {
                bodies
                    .entry((key, e.as_str()))
                    .or_default()
                    .insert(&s.body_blake3);
            }
            _ => {}
        }
    }
    for ((key, etag), hashes) in bodies {
        if hashes.len() > 1 {
            let url = seen.iter().find(|(k, _, _)| *k == key).map(|(_, u, _)| *u);
            if let Some(url) = url {
                out.push(problem(
                    key,
                    url,
                    format!("one strong ETag {etag} on {} different bodies: a cache could revalidate one coding with another", hashes.len()),
                ));
            }
        }
    }
    if !manifest_tags && seen.iter().any(|(_, _, s)| s.etag.is_some()) {
        notes.push(
            "the server sends its own ETags (as nginx and Caddy do, from mtime and size), not the manifest's; each body was checked by its blake3 instead"
                .into(),
        );
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset_json() -> Asset {
        serde_json::from_str(
            r#"{"blake3": "b3", "content_type": "text/javascript; charset=utf-8",
                "deltas": [{"blake3": "d1", "coding": "dcb", "dictionary": ":AA=:", "dictionary_path": "old.js",
                            "etag": "\"dcb\"", "path": "a.js.x.dcb", "size": 10}],
                "encodings": [{"blake3": "v1", "coding": "br", "etag": "\"br\"", "path": "a.js.br", "size": 20}],
                "etag": "\"id\"", "sha256": "s", "size": 100, "skipped": {},
                "use_as_dictionary": "match=\"/a-*.js\""}"#,
        )
        .unwrap()
    }

    fn answer(status: u16, headers: &[(&str, &str)]) -> Answer {
        Answer {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                .collect(),
            body: b"not the file".to_vec(),
        }
    }

    fn kinds(a: &Answer, ask: Ask<'_>) -> Vec<ProbeKind> {
        let base = parse_base_url("http://127.0.0.1:1/").unwrap();
        let url = asset_url(&base, "a.js").unwrap();
        let asset = asset_json();
        let target = Target {
            key: "a.js",
            asset: &asset,
            url: &url,
            dictionaries: &[],
        };
        let mut out = Vec::new();
        judge(target, ask, a, &mut Decoders::default(), &mut out);
        let mut k: Vec<ProbeKind> = out.into_iter().map(|(k, _)| k).collect();
        k.dedup();
        k
    }

    fn seen(coding: &str, etag: &str, expected: &str, body: &str) -> Seen {
        Seen {
            coding: Some(coding.into()),
            etag: (!etag.is_empty()).then(|| etag.into()),
            expected_etag: Some(expected.into()),
            body_blake3: body.into(),
            page_not_kept: false,
            host_coded: false,
        }
    }

    fn etag_problems(seen: &[Seen]) -> (Vec<String>, Vec<String>) {
        let url = Url::parse("http://h/a.js").unwrap();
        let all: Vec<(&str, &Url, Seen)> = seen.iter().map(|s| ("a.js", &url, s.clone())).collect();
        let mut notes = Vec::new();
        let p = judge_etags(&all, &mut notes);
        (p.into_iter().map(|p| p.detail).collect(), notes)
    }

    #[test]
    fn a_larger_coding_than_the_smallest_accepted_is_named() {
        let mut a = asset_json();
        let v = |coding: &str, size| Variant {
            blake3: "00".into(),
            coding: coding.into(),
            etag: format!("\"{coding}\""),
            path: format!("index.html.{coding}"),
            size,
        };
        a.encodings = vec![v("br", 58_868), v("zstd", 61_795), v("gzip", 70_000)];
        let pick = |coding, accept| {
            smaller_accepted(&a, Some(coding), accept)
                .map(|(s, m)| (s.coding.clone(), m.coding.clone()))
        };
        // Chromium accepts all three: zstd is not the smallest, br is.
        assert_eq!(
            pick("zstd", ACCEPT_ENCODING),
            Some(("zstd".to_string(), "br".to_string()))
        );
        assert_eq!(pick("gzip", ACCEPT_ENCODING_DELTAS).unwrap().1, "br");
        assert_eq!(pick("br", ACCEPT_ENCODING), None);
        // A client that refuses br, or does not name it, gets zstd rightly.
        assert_eq!(pick("zstd", "gzip, br;q=0, zstd"), None);
        assert_eq!(pick("zstd", "gzip, zstd"), None);
        assert_eq!(pick("gzip", "gzip, zstd").unwrap().1, "zstd");
        // Identity and codings the manifest does not list are judged elsewhere.
        assert_eq!(smaller_accepted(&a, None, ACCEPT_ENCODING), None);
        assert_eq!(pick("dcb", ACCEPT_ENCODING_DELTAS), None);
    }

    #[test]
    fn etags_are_the_manifests_once_the_server_sends_them() {
        // The manifest's scheme: every representation its own tag.
        let (p, notes) = etag_problems(&[
            seen("br", "\"br\"", "\"br\"", "1"),
            seen("dcb", "\"id\"", "\"dcb\"", "2"),
        ]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("ETag \"id\" on the dcb body"), "{p:?}");
        assert!(notes.is_empty());
        // nginx's scheme: its own tags, never one for two bodies.
        let (p, notes) = etag_problems(&[
            seen("br", "\"6b1-9f9\"", "\"br\"", "1"),
            seen("dcb", "\"6b1-54\"", "\"dcb\"", "2"),
        ]);
        assert!(p.is_empty(), "{p:?}");
        assert!(notes[0].contains("its own ETags"), "{notes:?}");
        let (p, _) = etag_problems(&[
            seen("br", "\"x\"", "\"br\"", "1"),
            seen("dcb", "\"x\"", "\"dcb\"", "2"),
        ]);
        assert!(
            p[0].contains("one strong ETag \"x\" on 2 different bodies"),
            "{p:?}"
        );
        // Weak is always wrong.
        let (p, _) = etag_problems(&[seen("br", "W/\"x\"", "\"br\"", "1")]);
        assert!(p[0].starts_with("weak ETag"), "{p:?}");
    }

    #[test]
    fn a_dictionary_without_a_cache_lifetime_is_not_fresh() {
        let base = parse_base_url("http://127.0.0.1:1/").unwrap();
        let url = asset_url(&base, "a.js").unwrap();
        let asset = asset_json();
        let target = Target {
            key: "a.js",
            asset: &asset,
            url: &url,
            dictionaries: &[],
        };
        let not_fresh = |headers: &[(&str, &str)]| -> Vec<String> {
            let mut out = Vec::new();
            let a = answer(200, headers);
            judge(target, Ask::Plain, &a, &mut Decoders::default(), &mut out);
            out.into_iter()
                .filter(|(k, _)| *k == ProbeKind::DictionaryNotFresh)
                .map(|(_, d)| d)
                .collect()
        };
        // nginx and Caddy as they come: Last-Modified, no Cache-Control.
        let date = "Thu, 02 Jan 2025 00:00:00 GMT";
        let bare = [("Date", date), ("Last-Modified", date)];
        let d = not_fresh(&bare);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains("a tenth of its age since Last-Modified (0 s now)"),
            "{d:?}"
        );
        assert!(
            d[0].contains("send `Cache-Control: public, max-age=31536000, immutable`"),
            "{d:?}"
        );
        let kept = [
            ("Date", date),
            ("Last-Modified", date),
            ("Cache-Control", crate::serve::CACHE_IMMUTABLE),
        ];
        assert!(not_fresh(&kept).is_empty());
    }

    #[test]
    fn a_redirects_target_never_shows_the_urls_userinfo() {
        let base = parse_base_url("http://user:s3cret@127.0.0.1:8080/app").unwrap();
        // A same-origin redirect's target keeps the base's userinfo when joined.
        let (kind, detail) = redirect(&base, &answer(301, &[("Location", "/app/x/")]));
        assert_eq!(kind, ProbeKind::Redirect);
        assert!(!detail.contains("s3cret"), "{detail}");
        assert!(
            detail.contains("http://***@127.0.0.1:8080/app/x/"),
            "{detail}"
        );
    }

    #[test]
    fn redirects_are_judged_not_followed() {
        let a = answer(302, &[("Location", "http://other.example/x")]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::RedirectOffOrigin]);
        let a = answer(301, &[("Location", "/a.js/")]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::Redirect]);
        let a = answer(404, &[]);
        assert_eq!(kinds(&a, Ask::Plain), [ProbeKind::Status]);
    }

    #[test]
    fn a_bare_server_answer_names_every_missing_header() {
        let a = answer(
            200,
            &[
                ("Content-Type", "text/plain"),
                ("Cache-Control", "no-cache"),
            ],
        );
        let k = kinds(&a, Ask::Plain);
        for want in [
            ProbeKind::WrongContentEncoding,
            ProbeKind::BodyMismatch,
            ProbeKind::WrongContentType,
            ProbeKind::MissingVary,
            ProbeKind::MissingUseAsDictionary,
            ProbeKind::DictionaryNotFresh,
        ] {
            assert!(k.contains(&want), "{want}: {k:?}");
        }
        let k = kinds(&a, Ask::Dictionary(":AA=:"));
        assert!(k.contains(&ProbeKind::NoDelta), "{k:?}");
    }
}
