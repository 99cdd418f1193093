//! `precompress check --url URL DIR`: asks a live origin for every asset of
//! DIR's manifest the way Chromium would, and reports per asset what came back
//! wrong. The offline `check` proves the files; this proves the deploy: that
//! the server sends those files (not a stale copy, not one it re-encoded),
//! with the headers `serve` documents, and a delta to a client that holds the
//! previous release.
//!
//! Per asset, one GET with Chromium's `Accept-Encoding` (plus `dcb, dcz` when
//! the asset has deltas), then one per distinct dictionary of its deltas
//! (at most [`MAX_DICTIONARIES`]) with `Available-Dictionary`. The code
//! dictionary is asked first as Chromium's idle fetch holding no dictionary
//! (a 204 is right: [`Ask::Deferred`]), then plainly (the whole file). Each answer is
//! judged by pure functions of its status, headers and body ([`judge`]), so
//! the rules are unit-tested without a network.
//!
//! Where docs/servers.md's servers differ from `precompress serve` and a browser
//! does not care, the check does not either: nginx and Caddy send their own
//! ETags (from mtime and size), so the body is proved by hash instead; they
//! send `application/javascript` or no charset, which a browser reads the
//! same. The report's notes name the first. A dictionary with no
//! `Cache-Control` lifetime is a problem, not a difference: Chromium keeps it
//! only for its heuristic lifetime (a tenth of its age since `Last-Modified`),
//! minutes after a deploy, so a visitor who returns the next day holds no
//! dictionary and every delta is lost without a sign.
//!
//! Bounds: requests are paced at `rate` per second, at most `max_requests`
//! (assets are checked in path order; when the next asset's requests do not fit,
//! it and all after it are not checked, which is a problem, never a pass), a
//! total `timeout`, and [`REQUEST_TIMEOUT`] per request. A redirect is never
//! followed.

//!
//! The parts: `client` (the HTTP client, one request, no redirect), `headers`
//! (reading URLs and headers as a browser does), `verdict` (what is wrong with
//! an answer, pure); here the options, the report and the paced loop.

mod client;
mod headers;
pub mod previous;
mod terms;
mod verdict;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use url::Url;

use crate::model::manifest::{Asset, Manifest, Variant};

pub use self::client::{Answer, Client, Fetch, FetchError};
pub use self::headers::*;
pub use self::terms::*;
pub use self::verdict::{judge, Ask, Decoders, Seen, Target};
use self::verdict::{judge_etags, smaller_accepted};

/// One asset's requests.
struct Job<'m> {
    key: &'m str,
    asset: &'m Asset,
    url: Url,
    dictionaries: Vec<&'m str>,
    /// The code dictionary: asked first holding no dictionary ([`Ask::Deferred`]).
    deferred: bool,
}

/// Spaces requests `1/rate` s apart, within the deadline.
struct Pacer {
    next: Instant,
    interval: Duration,
    deadline: Instant,
}

impl Pacer {
    /// Waits for the next slot; `None` when it is past the deadline.
    fn wait(&mut self) -> Option<Duration> {
        let now = Instant::now();
        if self.next > now {
            if self.next >= self.deadline {
                return None;
            }
            std::thread::sleep(self.next - now);
        }
        let now = Instant::now();
        if now >= self.deadline {
            return None;
        }
        self.next = self.next.max(now) + self.interval;
        Some((self.deadline - now).min(REQUEST_TIMEOUT))
    }
}

/// The longest check: [`crate::config::limits::CHECK_TIMEOUT_SECS`].
fn max_timeout() -> Duration {
    Duration::from_secs(*crate::config::limits::CHECK_TIMEOUT_SECS.end())
}

/// Why the check stopped before the end.
enum Stop {
    Budget,
    Timeout,
    /// Refused or unreachable: the problem's kind and what happened.
    Origin(ProbeKind, String),
}

/// Checks the origin at `url` against the manifest at `manifest_path`.
pub fn probe(manifest_path: &Path, url: &str, opts: &Options) -> Result<Report, ProbeError> {
    let base = parse_base_url(url)?;
    let manifest = Manifest::read(manifest_path)?;
    Ok(probe_with(&manifest, &base, opts, &mut Client::new()))
}

/// [`probe`] with a parsed manifest and URL and any client.
pub fn probe_with(
    manifest: &Manifest,
    base: &Url,
    opts: &Options,
    client: &mut dyn Fetch,
) -> Report {
    let mut problems = Vec::new();
    let mut notes: Vec<String> = base_note(manifest, base).into_iter().collect();
    let jobs = jobs(manifest, base, &mut problems);
    let dictionaries: Vec<Url> = [&manifest.shared_dictionary, &manifest.documents_dictionary]
        .into_iter()
        .flatten()
        .filter_map(|k| asset_url(base, k))
        .collect();
    let start = Instant::now();
    let mut session = Session {
        base,
        extra: &opts.headers,
        dictionaries: &dictionaries,
        pacer: Pacer {
            next: start,
            interval: Duration::from_secs(1) / opts.rate.max(1),
            // Past the range the CLI takes, an Instant can overflow (a panic).
            deadline: start + opts.timeout.min(max_timeout()),
        },
        dec: Decoders::default(),
        sent: Sent::default(),
        requests: 0,
        seen: Vec::new(),
        larger: Vec::new(),
        host: Vec::new(),
        server: None,
        served: std::collections::BTreeMap::new(),
        stop: None,
    };
    let (mut checked, mut unchecked, mut needed) = (Vec::new(), 0u64, 0u64);
    for job in &jobs {
        let need = 1 + job.dictionaries.len() as u64 + u64::from(job.deferred);
        if session.stop.is_none() && session.requests + need > opts.max_requests {
            session.stop = Some(Stop::Budget);
        }
        let complete = session.stop.is_none() && session.check(job, client, &mut problems);
        if complete {
            checked.push(job.key);
        } else {
            unchecked += 1;
            needed += need;
        }
    }
    problems.extend(judge_etags(&session.seen, &mut notes));
    notes.extend(larger_notes(&session.larger, session.server));
    notes.extend(host_note(&session.host, session.server));
    let mut host = std::mem::take(&mut session.host);
    host.sort();
    notes.extend(pages_note(&session.seen));
    let not_checked = format!("{unchecked} of {} assets not checked", manifest.files.len());
    problems.extend(
        session
            .stop
            .map(|s| stopped(s, base, opts, &not_checked, needed)),
    );
    problems.sort();
    let with_problems: BTreeSet<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    Report {
        ok: problems.is_empty(),
        url: shown(base),
        assets: manifest.files.len() as u64,
        checked: checked.len() as u64,
        ok_assets: checked
            .iter()
            .filter(|k| !with_problems.contains(*k))
            .count() as u64,
        requests: session.requests,
        sent: session.sent,
        problems,
        host,
        first_visit: opts
            .visit
            .as_ref()
            .and_then(|(page, keys)| first_visit(manifest, page, keys, &session.served)),
        notes,
    }
}

/// The first visit of `page` (loading `keys`) from what was `served`, and
/// what precompress wrote for the same files; none when nothing of it was.
fn first_visit(
    m: &Manifest,
    page: &str,
    keys: &BTreeSet<String>,
    served: &std::collections::BTreeMap<&str, u64>,
) -> Option<FirstVisit> {
    let answered: Vec<(&String, u64)> = keys
        .iter()
        .filter_map(|k| Some((k, *served.get(k.as_str())?)))
        .collect();
    (!answered.is_empty()).then(|| FirstVisit {
        page: page.to_string(),
        files: answered.len() as u64,
        served: answered.iter().map(|(_, b)| b).sum(),
        written: answered
            .iter()
            .filter_map(|(k, _)| m.files.get(k.as_str()))
            .map(Asset::best_size)
            .sum(),
    })
}

/// A note when the manifest's dictionary patterns were written for another
/// base path than the one checked: browsers would send no dictionary there.
fn base_note(manifest: &Manifest, base: &Url) -> Option<String> {
    let manifest_base = manifest
        .base
        .as_deref()
        .unwrap_or(crate::model::path::ROOT_BASE);
    let marked = manifest
        .files
        .values()
        .any(|a| a.use_as_dictionary.is_some());
    (marked && manifest_base != base.path()).then(|| format!(
        "the manifest was written for base {manifest_base}, and DIR is checked at {}: its dictionary patterns match no URL there, so browsers send no dictionary (run precompress with --base {})",
        base.path(),
        base.path()
    ))
}

/// Every asset to ask for, in path order; one whose key is no plain path
/// inside DIR is a problem, never requested.
fn jobs<'m>(manifest: &'m Manifest, base: &Url, problems: &mut Vec<Problem>) -> Vec<Job<'m>> {
    let mut jobs = Vec::new();
    for (key, asset) in &manifest.files {
        let url = crate::model::path::check_relative(key)
            .ok()
            .and_then(|()| asset_url(base, key));
        let Some(url) = url else {
            problems.push(Problem {
                path: key.clone(),
                url: String::new(),
                problem: ProbeKind::UnsafePath,
                detail: "not a plain path inside DIR; not requested".into(),
            });
            continue;
        };
        let dicts: BTreeSet<&str> = asset.deltas.iter().map(|d| d.dictionary.as_str()).collect();
        jobs.push(Job {
            key,
            asset,
            url,
            dictionaries: dicts.into_iter().take(MAX_DICTIONARIES).collect(),
            deferred: crate::model::dictionary::deferred_without_dictionary(
                manifest.shared_dictionary.as_deref(),
                key,
                !asset.deltas.is_empty(),
            ),
        });
    }
    jobs
}

/// The check as it goes: pacing, decoders, what was sent and seen, and why
/// it stopped, if it did.
struct Session<'a, 'm> {
    base: &'a Url,
    /// `--header`'s fields, sent with every request.
    extra: &'a [(String, String)],
    dictionaries: &'a [Url],
    pacer: Pacer,
    dec: Decoders,
    sent: Sent,
    requests: u64,
    seen: Vec<(&'m str, &'m Url, Seen)>,
    /// Assets sent in a larger coding than the smallest accepted: what was
    /// sent and what was not.
    larger: Vec<(&'m str, &'m Variant, &'m Variant)>,
    /// What the host compressed on its own ([`ProbeKind::is_host`]).
    host: Vec<Problem>,
    /// Who answered, as its headers say ([`host_of`]).
    server: Option<&'static str>,
    /// Each asset's body bytes as answered to the plain request.
    served: std::collections::BTreeMap<&'m str, u64>,
    stop: Option<Stop>,
}

impl<'m> Session<'_, 'm> {
    /// Asks for one asset, plainly and with each of its dictionaries, and
    /// adds what is wrong to `problems`; whether every request was answered.
    fn check(
        &mut self,
        job: &'m Job<'m>,
        client: &mut dyn Fetch,
        problems: &mut Vec<Problem>,
    ) -> bool {
        let mut found: Vec<(ProbeKind, String)> = Vec::new();
        let asks = job
            .deferred
            .then_some(Ask::Deferred)
            .into_iter()
            .chain([Ask::Plain])
            .chain(job.dictionaries.iter().map(|d| Ask::Dictionary(d)));
        let mut complete = true;
        for ask in asks {
            if !self.ask(job, ask, client, &mut found) {
                complete = false;
                break;
            }
        }
        found.sort();
        // One dictionary_not_fresh per asset: the heuristic's seconds can tick
        // between its requests.
        found.dedup_by(|b, a| a.0 == b.0 && (a.1 == b.1 || a.0 == ProbeKind::DictionaryNotFresh));
        for (problem, detail) in found {
            let p = Problem {
                path: job.key.to_string(),
                url: shown(&job.url),
                problem,
                detail,
            };
            if problem.is_host() {
                self.host.push(p);
            } else {
                problems.push(p);
            }
        }
        complete
    }

    /// One request for `job`, judged into `found`; `false` when the check
    /// must stop (out of time, or the origin is gone).
    fn ask(
        &mut self,
        job: &'m Job<'m>,
        ask: Ask<'m>,
        client: &mut dyn Fetch,
        found: &mut Vec<(ProbeKind, String)>,
    ) -> bool {
        let Some(timeout) = self.pacer.wait() else {
            self.stop = Some(Stop::Timeout);
            return false;
        };
        // Chromium names dcb and dcz only when it offers a dictionary.
        let accept = if job.asset.deltas.is_empty() || ask == Ask::Deferred {
            ACCEPT_ENCODING
        } else {
            ACCEPT_ENCODING_DELTAS
        };
        let mut headers = vec![("Accept-Encoding", accept)];
        headers.extend(self.extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        // A page is asked for as Chromium navigates to it: a server sends a
        // page marked as its next version's dictionary the policy that lets
        // the browser keep it only then (serve::keeps_page).
        if crate::model::dictionary::is_page(job.key) {
            headers.extend(NAVIGATION);
        }
        match ask {
            Ask::Dictionary(d) => {
                headers.push(("Available-Dictionary", d));
                self.sent.delta_requests += 1;
            }
            // Chromium's idle fetch holding no dictionary: a 204.
            Ask::Deferred => headers.extend(DICTIONARY_FETCH),
            Ask::Plain => {}
        }
        let max_body = job
            .asset
            .encodings
            .iter()
            .map(|v| v.size)
            .chain(job.asset.deltas.iter().map(|d| d.size))
            .fold(job.asset.size, u64::max)
            + (1 << 16);
        self.requests += 1;
        match client.get(&job.url, &headers, timeout, max_body) {
            Ok(answer) => {
                self.server = self.server.or_else(|| host_of(&answer));
                if ask == Ask::Plain && answer.status == 200 {
                    self.served.insert(job.key, answer.body.len() as u64);
                }
                let target = Target {
                    key: job.key,
                    asset: job.asset,
                    url: &job.url,
                    dictionaries: self.dictionaries,
                };
                if let Some(seen) = judge(target, ask, &answer, &mut self.dec, found) {
                    count(&mut self.sent, seen.coding.as_deref());
                    if ask == Ask::Plain && !seen.host_coded {
                        let smaller = smaller_accepted(job.asset, seen.coding.as_deref(), accept);
                        self.larger
                            .extend(smaller.map(|(sent, small)| (job.key, sent, small)));
                    }
                    self.seen.push((job.key, &job.url, seen));
                }
                true
            }
            // Every later request would fail the same way: stop.
            Err(FetchError::Refused(_)) => {
                let at = self.base.host_str().unwrap_or_default().to_string();
                let port = self.base.port_or_known_default().unwrap_or_default();
                self.stop = Some(Stop::Origin(
                    ProbeKind::ConnectionRefused,
                    format!("connection refused: nothing listens at {at}:{port}"),
                ));
                false
            }
            Err(FetchError::Unreachable(e)) => {
                self.stop = Some(Stop::Origin(
                    ProbeKind::Unreachable,
                    format!("cannot reach the origin: {e}"),
                ));
                false
            }
            Err(FetchError::Other(e)) => {
                found.push((ProbeKind::RequestFailed, e));
                true
            }
        }
    }
}

/// Notes (not problems: the browser decodes it) for the assets sent in a
/// A note when pages the manifest marks as their next version's dictionary
/// came `no-cache` with no `Use-As-Dictionary`: nothing wrong with a body,
/// but a returning visitor downloads each page whole.
fn pages_note(seen: &[(&str, &Url, Seen)]) -> Option<String> {
    let mut pages: Vec<&str> = seen
        .iter()
        .filter(|(_, _, s)| s.page_not_kept)
        .map(|(k, _, _)| *k)
        .collect();
    pages.dedup();
    (!pages.is_empty()).then(|| format!(
        "{} sent no-cache with no Use-As-Dictionary (first: {}): this server keeps no page as the dictionary of its next version, so a returning visitor downloads pages whole; precompress serve, the Node handler, the Worker and the Netlify and Pages functions send them so Chromium keeps them",
        crate::report::plural(pages.len() as u64, "page", "pages"),
        pages[0]
    ))
}

/// larger coding than the smallest the request accepted, the first few by
/// name.
fn larger_notes(larger: &[(&str, &Variant, &Variant)], server: Option<&str>) -> Option<String> {
    const NAMED: usize = 5;
    let extra: u64 = larger.iter().map(|(_, s, m)| s.size - m.size).sum();
    let named: Vec<String> = larger
        .iter()
        .take(NAMED)
        .map(|(k, s, m)| {
            format!(
                "{k}: {} ({} B) where {} is {} B",
                s.coding, s.size, m.coding, m.size
            )
        })
        .collect();
    let more = match larger.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(", and {n} more"),
    };
    (!larger.is_empty()).then(|| format!(
        "{} sent in a larger coding than the smallest the request accepts ({}{more}): {extra} B more per visit; the server breaks ties by its own order, not by size{}",
        crate::report::plural(larger.len() as u64, "asset", "assets"),
        named.join("; "),
        match server {
            Some("Caddy") | None => " (Caddy: use precompress caddy-map, which sends the smaller)",
            Some(_) => "",
        }
    ))
}

/// Who answered, from the headers hosts and servers set: a CDN's own first.
fn host_of(answer: &Answer) -> Option<&'static str> {
    let has = |name: &str| answer.first(name).is_some();
    let server = answer
        .joined("server")
        .unwrap_or_default()
        .to_ascii_lowercase();
    if has("cf-ray") || server.contains("cloudflare") {
        Some("Cloudflare")
    } else if has("x-nf-request-id") || server.contains("netlify") {
        Some("Netlify")
    } else if has("x-vercel-id") || server.contains("vercel") {
        Some("Vercel")
    } else if has("x-amz-cf-id") || server.contains("cloudfront") {
        Some("CloudFront")
    } else if server.starts_with("caddy") {
        Some("Caddy")
    } else if server.starts_with("nginx") {
        Some("nginx")
    } else if server.starts_with("apache") {
        Some("Apache")
    } else {
        None
    }
}

/// The note on what the host compressed on its own: how many, that they do
/// not fail the check, and what to do, for the host the answers name.
fn host_note(host: &[Problem], server: Option<&str>) -> Option<String> {
    if host.is_empty() {
        return None;
    }
    let count = |k: ProbeKind| host.iter().filter(|p| p.problem == k).count() as u64;
    let (compressed, again) = (
        count(ProbeKind::HostCompressed),
        count(ProbeKind::HostReencoded),
    );
    let advice = match server {
        Some("Cloudflare") => "Cloudflare compresses at its edge what it is sent uncompressed, and may re-encode what it is sent compressed; serve the folder through precompressor/pages or precompressor/worker (docs/servers.md, \"Cloudflare Pages\")",
        Some("Netlify") => "Netlify compresses the files it sends as they are; the edge function (precompressor/netlify) sends the variants precompress wrote, and the files without one (under --min-size) Netlify compresses itself (docs/servers.md, \"Netlify Edge Functions\")",
        Some("Vercel") => "Vercel compresses at its edge, and precompress gives a Vercel site nothing today (docs/servers.md, \"Vercel\")",
        Some("CloudFront") => "CloudFront's \"Compress objects automatically\" compresses at the edge: turn it off for the behavior that serves the folder (docs/servers.md, \"Object stores\")",
        Some("Caddy") => "Caddy's `encode` compresses on the fly: leave it out of the site that serves the folder (docs/servers.md, \"Caddy\")",
        Some("nginx") => "nginx's `gzip on` compresses on the fly: `gzip off` with `gzip_static on` (docs/servers.md, \"nginx\")",
        Some("Apache") => "mod_deflate or mod_brotli compresses on the fly: apache-map's rules set no-gzip and no-brotli for the manifest's files (docs/servers.md, \"Apache\")",
        _ => "a server or a proxy in front of it compresses on its own (a CDN's automatic compression, nginx's `gzip on`, Caddy's `encode`, a local emulator of an edge)",
    };
    Some(format!(
        "{} the host compressed itself, not as precompress wrote it ({compressed} with no variant of ours in that coding, {again} compressed again): each decodes to the asset, so visitors get the right file, in a coding and size the host chose; listed apart (`--json`: host), not failing the check. {advice}",
        crate::report::plural(compressed + again, "answer", "answers"),
    ))
}

/// The problem that says why the check stopped early and what it left.
fn stopped(stop: Stop, base: &Url, opts: &Options, not_checked: &str, needed: u64) -> Problem {
    let origin = |problem, detail| Problem {
        path: String::new(),
        url: shown(base),
        problem,
        detail,
    };
    match stop {
        Stop::Origin(kind, what) => origin(kind, format!("{what}; stopped: {not_checked}")),
        Stop::Budget => origin(
            ProbeKind::NotChecked,
            format!(
                "{not_checked}: --max-requests {} reached (they need {} more; raise it); that is not a pass",
                opts.max_requests,
                crate::report::plural(needed, "request", "requests")
            ),
        ),
        Stop::Timeout => origin(
            ProbeKind::NotChecked,
            format!(
                "{not_checked}: --timeout {} s ran out (raise it, or --rate); that is not a pass",
                opts.timeout.as_secs()
            ),
        ),
    }
}

fn count(sent: &mut Sent, coding: Option<&str>) {
    let slot = match coding {
        None => &mut sent.identity,
        Some("br") => &mut sent.br,
        Some("zstd") => &mut sent.zstd,
        Some("gzip") => &mut sent.gzip,
        Some("dcb") => &mut sent.dcb,
        Some("dcz") => &mut sent.dcz,
        Some(_) => &mut sent.other,
    };
    *slot += 1;
}
