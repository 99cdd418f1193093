//! The plan of a run: for every (asset, coding) and (asset, dictionary,
//! coding), whether the variant or delta on disk is kept as it is, redone,
//! checked (one precompress did not write), refused, or known not worth
//! making; and which of the variants precompress wrote are now stale. A pure
//! function of the previous manifest, what the scan found on disk and the
//! settings: no disk, no encoder, so every rule of docs/caching.md's "Incremental,
//! self-cleaning, checkable" has a row in the tables below.
//!
//! It never deletes or writes: the run removes what [`Plan::stale`] lists
//! before any job starts (so a run killed from then on leaves no stale
//! variant) and runs [`Plan::jobs`].

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::model::coding::{Codec, DeltaCoding};
use crate::model::dictionary::{available_dictionary, parse_available_dictionary};
use crate::model::manifest::{Asset, Delta, Manifest, SkippedDelta};
use crate::model::names::{delta_path, delta_source, variant_path};
use crate::model::skip::SkipReason;
use crate::run::jobs::{Job, JobKind, Outcome, Unit};
use crate::run::scanned::Source;

/// The largest dictionary plus file a `dcb` stream can reach across: brotli's
/// window (16 MiB less 16 bytes, RFC 9842 §4). Beyond it the C decoder that
/// browsers use reads far distances as references into the dictionary where
/// a prefix-dictionary encoder meant the static dictionary, so no `dcb` is
/// made for larger pairs (`dcz` still is).
pub(crate) const DCB_MAX_SPAN: u64 = (1 << 24) - 16;

/// What the run knows of everything but the sources.
pub(crate) struct Inputs<'a> {
    /// The previous manifest, if it could be read.
    pub prev: Option<&'a Manifest>,
    /// This run's settings per coding token.
    pub settings: &'a BTreeMap<String, String>,
    /// Variants and deltas the previous run wrote: path -> blake3 then.
    pub ours: &'a HashMap<String, String>,
    /// Variants and deltas on disk: path -> blake3 now (`None`: unreadable).
    pub on_disk: &'a HashMap<&'a str, Option<&'a str>>,
    /// Symlinks the walk passed over.
    pub symlinks: &'a HashSet<&'a str>,
    /// Variants and deltas an interrupted run wrote (its journal) from the
    /// source as it is now: checked and adopted, redone if they do not decode.
    pub journaled: &'a HashSet<&'a str>,
    pub codecs: &'a [Codec],
    pub delta_codings: &'a [DeltaCoding],
    pub force: bool,
    /// The run has earlier releases (`--dictionary-from`, the store's of
    /// this site). Without any, the deltas the previous run listed for an
    /// unchanged source are kept as they are: their dictionaries are what
    /// returning visitors hold, and this run could not make them again.
    pub earlier: bool,
}

/// The plan: per source (by index), what is kept and skipped as it is; the
/// jobs to run; what is refused; what is stale.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub jobs: Vec<Job>,
    /// Every unit the settings ask for, in source order.
    pub units: Vec<Unit>,
    /// Per source, in the order given.
    pub files: Vec<Outcome>,
    /// Paths left alone with why: a symlink where a variant goes, a delta
    /// precompress did not write. Each is an error of the run.
    pub refused: Vec<(String, &'static str)>,
    /// Our variants and deltas that are not kept as they are, sorted: removed
    /// before any job runs (the ones redone are written again).
    pub stale: Vec<String>,
    /// Those of [`Plan::stale`] that are deltas of a source that did not
    /// change: their dictionary is no longer among the run's (said aloud,
    /// since visitors holding it lose them).
    pub stale_deltas_kept_source: Vec<String>,
    /// (source, coding) outcomes kept from the previous run.
    pub reused: u64,
}

/// The delta of `coding` against `dictionary` that the previous run recorded
/// for asset `a`, and whether it recorded that delta as not worth keeping.
fn delta_prev<'a>(
    a: &'a Asset,
    coding: DeltaCoding,
    dictionary: &str,
) -> (Option<&'a Delta>, bool) {
    let found = a
        .deltas
        .iter()
        .find(|d| d.coding == coding.token() && d.dictionary == dictionary);
    let skipped = a
        .skipped_deltas
        .iter()
        .any(|d| d.coding == coding.token() && d.dictionary == dictionary);
    (found, skipped)
}

/// Plans the run over `sources`.
pub(crate) fn plan(inp: &Inputs, sources: &[Source]) -> Plan {
    let mut planner = Planner {
        inp,
        p: Plan {
            files: vec![Outcome::default(); sources.len()],
            ..Plan::default()
        },
        keep_paths: HashSet::new(),
        unchanged: HashSet::new(),
    };
    for (i, f) in sources.iter().enumerate() {
        // The previous run's entry, if the content is the same.
        let before = inp
            .prev
            .and_then(|m| m.files.get(f.rel))
            .filter(|a| a.blake3 == f.blake3 && !inp.force);
        if before.is_some() {
            planner.unchanged.insert(f.rel);
        }
        for &codec in inp.codecs {
            if f.decision.is_none() && !f.incompressible {
                planner.p.units.push(Unit {
                    file: i,
                    token: codec.token(),
                    dict: None,
                });
            }
            planner.variant(i, f, before, codec);
        }
        for &(dict, dict_size, sha) in &f.dictionaries {
            let dictionary = available_dictionary(&sha);
            for &coding in inp.delta_codings {
                if coding == DeltaCoding::Dcb && dict_size + f.size > DCB_MAX_SPAN {
                    // Said in the manifest, not left to guess.
                    planner.p.files[i].skipped_deltas.push(SkippedDelta {
                        coding: coding.token().into(),
                        dictionary: dictionary.clone(),
                        reason: SkipReason::OverDcbWindow,
                    });
                    continue;
                }
                planner.p.units.push(Unit {
                    file: i,
                    token: coding.token(),
                    dict: Some(dict),
                });
                planner.delta(i, f, before, (dict, &sha, &dictionary), coding);
            }
        }
        if !inp.earlier {
            planner.keep_listed_deltas(i, f, before);
        }
    }
    planner.finish()
}

/// The plan as it is built, one (source, coding) at a time.
struct Planner<'a> {
    inp: &'a Inputs<'a>,
    p: Plan,
    /// Paths on disk the plan keeps or leaves as they are: every other
    /// variant or delta of ours is stale.
    keep_paths: HashSet<String>,
    /// Sources whose content is the previous run's.
    unchanged: HashSet<&'a str>,
}

impl Planner<'_> {
    /// Ours: recorded by the previous run, and still the bytes it wrote.
    fn is_ours(&self, rel: &str) -> bool {
        match (self.inp.ours.get(rel), self.inp.on_disk.get(rel)) {
            (Some(recorded), Some(Some(actual))) => recorded == actual,
            _ => false,
        }
    }

    /// The previous run encoded `token` with this run's settings.
    fn same_settings(&self, token: &str) -> bool {
        self.inp
            .prev
            .is_some_and(|m| m.settings.get(token) == self.inp.settings.get(token))
    }

    /// The variant of source `i` (`f`) in `codec`: refused, checked, skipped,
    /// kept from `before` (the previous run's entry for the same content), or
    /// made.
    fn variant(&mut self, i: usize, f: &Source, before: Option<&Asset>, codec: Codec) {
        let inp = self.inp;
        let dest = variant_path(f.rel, codec);
        let on_disk = inp.on_disk.contains_key(dest.as_str());
        let mine = self.is_ours(&dest);
        if inp.symlinks.contains(dest.as_str()) && f.decision.is_none() && !inp.force {
            // A link someone put there (the walk does not follow it):
            // never replaced by a file of ours without --force.
            self.p
                .refused
                .push((dest, "a symlink where its variant goes"));
            return;
        }
        let journaled = inp.journaled.contains(dest.as_str());
        if (journaled && f.decision.is_none() || !mine && on_disk) && !inp.force {
            // Not listed: never overwritten unless the journal says a killed
            // run of ours wrote it; checked, and listed if it decodes to the
            // source.
            self.keep_paths.insert(dest);
            self.p.jobs.push(Job {
                file: i,
                codec,
                kind: JobKind::CheckForeign { ours: journaled },
            });
            return;
        }
        let reason = f
            .decision
            .or(f.incompressible.then_some(SkipReason::Incompressible));
        if let Some(reason) = reason {
            self.p.files[i]
                .skipped
                .insert(codec.token().to_string(), reason);
            return;
        }
        if let Some(a) = before.filter(|_| self.same_settings(codec.token())) {
            if let Some(v) = a
                .encodings
                .iter()
                .find(|v| v.coding == codec.token() && mine && v.path == dest)
            {
                self.p.files[i].variants.push(v.clone());
                self.keep_paths.insert(dest);
                self.p.reused += 1;
                return;
            }
            let was = a.skipped.get(codec.token());
            if let (Some(&r @ (SkipReason::NotSmaller | SkipReason::SavesTooLittle)), false) =
                (was, on_disk)
            {
                self.p.files[i].skipped.insert(codec.token().to_string(), r);
                self.p.reused += 1;
                return;
            }
        }
        self.p.jobs.extend(compress_jobs(i, codec, f.brotli_parts));
    }

    /// The delta of source `i` (`f`) in `coding` against `dict`, the run's
    /// dictionary of that index with that SHA-256 and `Available-Dictionary`
    /// value: refused, kept from `before`, known not smaller, or made.
    fn delta(
        &mut self,
        i: usize,
        f: &Source,
        before: Option<&Asset>,
        (dict, sha, dictionary): (usize, &[u8; 32], &str),
        coding: DeltaCoding,
    ) {
        let inp = self.inp;
        let dest = delta_path(f.rel, sha, coding);
        let on_disk = inp.on_disk.contains_key(dest.as_str());
        let mine = self.is_ours(&dest);
        let journaled = inp.journaled.contains(dest.as_str());
        if (journaled || on_disk && !mine) && !inp.force {
            // Not listed (a lost manifest, a killed run): decoded with the
            // dictionary its name points to and adopted if it gives the
            // source, as a variant is; never overwritten unless ours.
            self.keep_paths.insert(dest);
            self.p.jobs.push(Job {
                file: i,
                codec: Codec::Brotli,
                kind: JobKind::CheckDelta {
                    dict,
                    coding,
                    ours: journaled,
                },
            });
            return;
        }
        if let Some(a) = before.filter(|_| self.same_settings(coding.token())) {
            match delta_prev(a, coding, dictionary) {
                (Some(d), _) if mine && d.path == dest => {
                    self.p.files[i].deltas.push(d.clone());
                    self.keep_paths.insert(dest);
                    self.p.reused += 1;
                    return;
                }
                (None, true) if !on_disk => {
                    self.p.files[i].skipped_deltas.push(SkippedDelta {
                        coding: coding.token().into(),
                        dictionary: dictionary.to_string(),
                        reason: SkipReason::NotSmaller,
                    });
                    self.p.reused += 1;
                    return;
                }
                _ => {}
            }
        }
        self.p.jobs.push(Job {
            file: i,
            codec: Codec::Brotli,
            kind: JobKind::Delta { dict, coding },
        });
    }

    /// With no earlier release this run: the deltas `before` (the previous
    /// run's entry for the same content) lists, still ours on disk at the
    /// one name each may have, in a coding still asked for, against a
    /// dictionary this run does not have, kept as they are.
    fn keep_listed_deltas(&mut self, i: usize, f: &Source, before: Option<&Asset>) {
        let Some(a) = before else { return };
        for d in &a.deltas {
            let coding = self
                .inp
                .delta_codings
                .iter()
                .find(|c| c.token() == d.coding);
            let (Some(&coding), Some(sha)) = (coding, parse_available_dictionary(&d.dictionary))
            else {
                continue;
            };
            let dest = delta_path(f.rel, &sha, coding);
            let handled = f.dictionaries.iter().any(|(_, _, s)| *s == sha);
            if handled || d.path != dest || self.keep_paths.contains(&dest) || !self.is_ours(&dest)
            {
                continue;
            }
            self.p.files[i].deltas.push(d.clone());
            self.keep_paths.insert(dest);
            self.p.reused += 1;
        }
    }

    /// The plan, with its stale list: ours that this run will not keep as
    /// they are (the source changed, the coding is no longer asked for, the
    /// file is now skipped, the dictionary is no longer given).
    fn finish(mut self) -> Plan {
        self.p.stale = self
            .inp
            .ours
            .keys()
            .filter(|path| !self.keep_paths.contains(*path) && self.is_ours(path))
            .cloned()
            .collect();
        self.p.stale.sort();
        self.p.stale_deltas_kept_source = self
            .p
            .stale
            .iter()
            .filter(|p| delta_source(p).is_some_and(|(src, _)| self.unchanged.contains(src)))
            .cloned()
            .collect();
        self.p
    }
}

/// The jobs that make source `file`'s variant in `codec`: one, or for brotli
/// one per part when the source is split into `brotli_parts`.
fn compress_jobs(file: usize, codec: Codec, brotli_parts: usize) -> Vec<Job> {
    let parts = if codec == Codec::Brotli {
        brotli_parts
    } else {
        1
    };
    if parts > 1 {
        (0..parts)
            .map(|index| Job {
                file,
                codec,
                kind: JobKind::Part { index, of: parts },
            })
            .collect()
    } else {
        vec![Job {
            file,
            codec,
            kind: JobKind::Compress,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::manifest::etag;
    use crate::model::manifest::Variant;

    const SETTINGS: [(&str, &str); 3] = [("br", "q11"), ("zstd", "l19"), ("gzip", "l12")];

    fn settings(changed: &[&str]) -> BTreeMap<String, String> {
        SETTINGS
            .iter()
            .map(|(k, v)| {
                let v = if changed.contains(k) {
                    format!("{v} changed")
                } else {
                    v.to_string()
                };
                (k.to_string(), v)
            })
            .collect()
    }

    fn variant(path: &str, coding: &str, b3: &str) -> Variant {
        Variant {
            blake3: b3.into(),
            coding: coding.into(),
            etag: etag(b3),
            path: path.into(),
            size: 10,
        }
    }

    /// The previous manifest: `app.js` (content "A") with its three variants.
    fn previous() -> Manifest {
        let mut m = Manifest::new(settings(&[]));
        m.files.insert(
            "app.js".into(),
            Asset {
                blake3: "A".into(),
                cache: Default::default(),
                content_type: "text/javascript".into(),
                deltas: Vec::new(),
                encodings: vec![
                    variant("app.js.br", "br", "b1"),
                    variant("app.js.zst", "zstd", "z1"),
                    variant("app.js.gz", "gzip", "g1"),
                ],
                etag: etag("A"),
                sha256: String::new(),
                size: 100,
                skipped: BTreeMap::new(),
                skipped_deltas: Vec::new(),
                use_as_dictionary: None,
            },
        );
        m
    }

    /// What a run plans, as short strings: `keep app.js.br`, `job br app.js`,
    /// `check app.js.br`, `skip gzip too_small`, `stale app.js.br`, `refuse ...`.
    struct Case<'a> {
        name: &'a str,
        content: &'a str,
        decision: Option<SkipReason>,
        on_disk: &'a [(&'a str, &'a str)],
        changed_settings: &'a [&'a str],
        codecs: &'a [Codec],
        force: bool,
        symlinks: &'a [&'a str],
        journaled: &'a [&'a str],
        prev: Option<Manifest>,
        want: &'a [&'a str],
    }

    fn run(c: &Case) -> Vec<String> {
        let ours: HashMap<String, String> = c
            .prev
            .iter()
            .flat_map(|m| m.files.values())
            .flat_map(|a| {
                a.encodings
                    .iter()
                    .map(|v| (v.path.clone(), v.blake3.clone()))
            })
            .collect();
        let on_disk: HashMap<&str, Option<&str>> =
            c.on_disk.iter().map(|(p, h)| (*p, Some(*h))).collect();
        let symlinks: HashSet<&str> = c.symlinks.iter().copied().collect();
        let journaled: HashSet<&str> = c.journaled.iter().copied().collect();
        let s = settings(c.changed_settings);
        let inputs = Inputs {
            prev: c.prev.as_ref(),
            settings: &s,
            ours: &ours,
            on_disk: &on_disk,
            symlinks: &symlinks,
            journaled: &journaled,
            codecs: c.codecs,
            delta_codings: &DeltaCoding::ALL,
            force: c.force,
            earlier: true,
        };
        let src = Source {
            rel: "app.js",
            size: 100,
            blake3: c.content,
            decision: c.decision,
            incompressible: false,
            brotli_parts: 1,
            dictionaries: Vec::new(),
        };
        let p = plan(&inputs, &[src]);
        let mut out = Vec::new();
        out.extend(
            p.files[0]
                .variants
                .iter()
                .map(|v| format!("keep {}", v.path)),
        );
        out.extend(
            p.files[0]
                .skipped
                .iter()
                .map(|(k, r)| format!("skip {k} {}", r.as_str())),
        );
        for j in &p.jobs {
            out.push(match j.kind {
                JobKind::CheckForeign { ours } => {
                    format!(
                        "check{} app.js.{}",
                        if ours { " ours" } else { "" },
                        j.codec.suffix()
                    )
                }
                _ => format!("job {} app.js", j.token()),
            });
        }
        out.extend(p.stale.iter().map(|s| format!("stale {s}")));
        out.extend(p.refused.iter().map(|(r, _)| format!("refuse {r}")));
        out.sort();
        out
    }

    const OURS_ON_DISK: &[(&str, &str)] = &[
        ("app.js.br", "b1"),
        ("app.js.zst", "z1"),
        ("app.js.gz", "g1"),
    ];

    #[test]
    fn the_rules_of_incremental_self_cleaning_runs() {
        let all: &[Codec] = &Codec::ALL;
        let base = || Case {
            name: "",
            content: "A",
            decision: None,
            on_disk: OURS_ON_DISK,
            changed_settings: &[],
            codecs: all,
            force: false,
            symlinks: &[],
            journaled: &[],
            prev: Some(previous()),
            want: &[],
        };
        #[rustfmt::skip]
        let table = [
            Case { name: "nothing changed: every variant kept untouched",
                want: &["keep app.js.br", "keep app.js.gz", "keep app.js.zst"], ..base() },
            Case { name: "the source changed: all redone, the old ones stale first",
                content: "B",
                want: &["job br app.js", "job gzip app.js", "job zstd app.js",
                        "stale app.js.br", "stale app.js.gz", "stale app.js.zst"], ..base() },
            Case { name: "one coding's settings changed: only it is redone",
                changed_settings: &["br"],
                want: &["job br app.js", "keep app.js.gz", "keep app.js.zst", "stale app.js.br"], ..base() },
            Case { name: "a coding no longer asked for: its variant is stale",
                codecs: &[Codec::Brotli, Codec::Zstd],
                want: &["keep app.js.br", "keep app.js.zst", "stale app.js.gz"], ..base() },
            Case { name: "the file is now skipped: its variants are stale",
                decision: Some(SkipReason::ExcludedGlob),
                want: &["skip br excluded_glob", "skip gzip excluded_glob", "skip zstd excluded_glob",
                        "stale app.js.br", "stale app.js.gz", "stale app.js.zst"], ..base() },
            Case { name: "a variant that is not what we wrote is foreign: checked, never stale",
                on_disk: &[("app.js.br", "someone else"), ("app.js.zst", "z1"), ("app.js.gz", "g1")],
                want: &["check app.js.br", "keep app.js.gz", "keep app.js.zst"], ..base() },
            Case { name: "a foreign variant with --force is redone; ours too",
                on_disk: &[("app.js.br", "someone else"), ("app.js.zst", "z1"), ("app.js.gz", "g1")],
                force: true,
                want: &["job br app.js", "job gzip app.js", "job zstd app.js",
                        "stale app.js.gz", "stale app.js.zst"], ..base() },
            Case { name: "our variant deleted from disk: redone, nothing stale",
                on_disk: &[("app.js.zst", "z1"), ("app.js.gz", "g1")],
                want: &["job br app.js", "keep app.js.gz", "keep app.js.zst"], ..base() },
            Case { name: "no previous manifest: everything is a job, foreign ones checked",
                prev: None, on_disk: &[("app.js.gz", "g1")],
                want: &["check app.js.gz", "job br app.js", "job zstd app.js"], ..base() },
            Case { name: "a variant a killed run wrote from this content (its journal): checked as ours",
                prev: None, on_disk: &[("app.js.br", "b9")], journaled: &["app.js.br"],
                want: &["check ours app.js.br", "job gzip app.js", "job zstd app.js"], ..base() },
            Case { name: "a journaled variant of a file now excluded is not checked",
                prev: None, on_disk: &[], journaled: &["app.js.br"], decision: Some(SkipReason::ExcludedGlob),
                want: &["skip br excluded_glob", "skip gzip excluded_glob", "skip zstd excluded_glob"], ..base() },
            Case { name: "a symlink where a variant goes is refused",
                prev: None, on_disk: &[], symlinks: &["app.js.br"],
                want: &["job gzip app.js", "job zstd app.js", "refuse app.js.br"], ..base() },
        ];
        for c in &table {
            assert_eq!(run(c), c.want, "{}", c.name);
        }
    }

    #[test]
    fn a_known_not_smaller_outcome_is_reused_unless_a_file_is_in_the_way() {
        let mut prev = previous();
        let a = prev.files.get_mut("app.js").unwrap();
        a.encodings.retain(|v| v.coding != "gzip");
        a.skipped.insert("gzip".into(), SkipReason::NotSmaller);
        let base = Case {
            name: "",
            content: "A",
            decision: None,
            on_disk: &[("app.js.br", "b1"), ("app.js.zst", "z1")],
            changed_settings: &[],
            codecs: &Codec::ALL,
            force: false,
            symlinks: &[],
            journaled: &[],
            prev: Some(prev.clone()),
            want: &[],
        };
        assert_eq!(
            run(&base),
            ["keep app.js.br", "keep app.js.zst", "skip gzip not_smaller"]
        );
        let foreign_gz = Case {
            on_disk: &[
                ("app.js.br", "b1"),
                ("app.js.zst", "z1"),
                ("app.js.gz", "x"),
            ],
            ..base
        };
        assert_eq!(
            run(&foreign_gz),
            ["check app.js.gz", "keep app.js.br", "keep app.js.zst"]
        );
    }

    #[test]
    fn deltas_are_kept_redone_or_refused_by_the_same_rules() {
        let sha = [7u8; 32];
        let dcb = delta_path("app.js", &sha, DeltaCoding::Dcb);
        let dcz = delta_path("app.js", &sha, DeltaCoding::Dcz);
        let mut prev = previous();
        let mut s = settings(&[]);
        s.insert("dcb".into(), "dcb q10".into());
        s.insert("dcz".into(), "dcz l19".into());
        prev.settings = s.clone();
        prev.files.get_mut("app.js").unwrap().deltas = vec![Delta {
            blake3: "d1".into(),
            coding: "dcb".into(),
            dictionary: available_dictionary(&sha),
            dictionary_path: "old.js".into(),
            etag: etag("d1"),
            path: dcb.clone(),
            size: 5,
        }];
        let mut ours: HashMap<String, String> = HashMap::new();
        ours.insert(dcb.clone(), "d1".into());
        let journaled = HashSet::new();
        let plan_with = |on_disk: &[(&str, &str)],
                         dicts: Vec<(usize, u64, [u8; 32])>,
                         size: u64,
                         earlier: bool| {
            let on_disk: HashMap<&str, Option<&str>> =
                on_disk.iter().map(|(p, h)| (*p, Some(*h))).collect();
            let inputs = Inputs {
                prev: Some(&prev),
                settings: &s,
                ours: &ours,
                on_disk: &on_disk,
                symlinks: &HashSet::new(),
                journaled: &journaled,
                codecs: &[],
                delta_codings: &DeltaCoding::ALL,
                force: false,
                earlier,
            };
            let src = Source {
                rel: "app.js",
                size,
                blake3: "A",
                decision: None,
                incompressible: false,
                brotli_parts: 1,
                dictionaries: dicts,
            };
            let p = plan(&inputs, &[src]);
            let jobs: Vec<String> = p
                .jobs
                .iter()
                .map(|j| match j.kind {
                    JobKind::CheckDelta { ours, .. } => {
                        format!("check{} {}", if ours { " ours" } else { "" }, j.token())
                    }
                    _ => j.token().to_string(),
                })
                .collect();
            let skipped: Vec<&str> = p.files[0]
                .skipped_deltas
                .iter()
                .map(|d| d.reason.as_str())
                .collect();
            assert!(
                skipped.iter().all(|r| *r == "over_dcb_window"),
                "{skipped:?}"
            );
            let kept: Vec<String> = p.files[0].deltas.iter().map(|d| d.coding.clone()).collect();
            let refused: Vec<String> = p.refused.iter().map(|(r, _)| r.clone()).collect();
            let warned = p.stale_deltas_kept_source.clone();
            assert!(warned.iter().all(|w| p.stale.contains(w)));
            (
                jobs.join(","),
                kept.join(","),
                p.stale.clone(),
                refused,
                warned,
            )
        };
        // Our dcb kept, the missing dcz made.
        let (jobs, kept, stale, refused, _) =
            plan_with(&[(&dcb, "d1")], vec![(0, 100, sha)], 100, true);
        assert_eq!((jobs.as_str(), kept.as_str()), ("dcz", "dcb"));
        assert!(stale.is_empty() && refused.is_empty());
        // Earlier releases, none with its dictionary: our delta is stale,
        // and said to be (the source did not change).
        let (jobs, _, stale, _, warned) = plan_with(&[(&dcb, "d1")], vec![], 100, true);
        assert_eq!((jobs.as_str(), &stale), ("", &vec![dcb.clone()]));
        assert_eq!(warned, stale);
        // No earlier release at all (a plain rerun after a run that had the
        // store): removed as stale before; kept as it is now.
        let (jobs, kept, stale, _, _) = plan_with(&[(&dcb, "d1")], vec![], 100, false);
        assert_eq!((jobs.as_str(), kept.as_str(), stale.len()), ("", "dcb", 0));
        // ... but not when it is no longer the bytes we wrote.
        let (_, kept, stale, _, _) = plan_with(&[(&dcb, "d9")], vec![], 100, false);
        assert_eq!((kept.as_str(), stale.len()), ("", 0));
        // A dcz the manifest does not list where ours would go (a lost
        // manifest): checked with its dictionary, never stale nor refused.
        let (jobs, _, stale, refused, _) =
            plan_with(&[(&dcb, "d1"), (&dcz, "x")], vec![(0, 100, sha)], 100, true);
        assert_eq!(
            (jobs.as_str(), stale.len(), refused.len()),
            ("check dcz", 0, 0)
        );
        // Dictionary and file past brotli's window: no dcb, the old one stale.
        let (jobs, kept, stale, _, _) =
            plan_with(&[(&dcb, "d1")], vec![(0, DCB_MAX_SPAN, sha)], 100, true);
        assert_eq!(
            (jobs.as_str(), kept.as_str(), stale),
            ("dcz", "", vec![dcb])
        );
    }
}
