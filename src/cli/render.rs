//! What a person reads: the run's summary and `tune`'s tables, rendered from
//! the library's reports (which hold the numbers, for `--json` as for these).

use std::fmt::Write;

use precompressor::report::{human, plural, Report};
use precompressor::tune::{signed_pct, CodingTable, Tuning};

/// The human summary printed at the end of a run.
pub fn run_summary(r0: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "precompress: {} ({}), {} compressed, {}, {:.1}s on {} threads",
        plural(r0.files, "file", "files"),
        human(r0.bytes),
        r0.compressed,
        plural(r0.errors.len() as u64, "error", "errors"),
        r0.wall_ms as f64 / 1000.0,
        r0.threads
    );
    for (coding, c) in &r0.codecs {
        let saved = if c.bytes_before > 0 {
            100.0 * (1.0 - c.bytes_after as f64 / c.bytes_before as f64)
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {coding:<5} {:>6} files  {:>10} -> {:>10}  (-{saved:.1}%)",
            c.files,
            human(c.bytes_before),
            human(c.bytes_after)
        );
    }
    if !r0.skipped_files.is_empty() {
        // Files, each once per reason (--json counts (file, coding) pairs).
        let parts: Vec<String> = r0
            .skipped_files
            .iter()
            .map(|(r, n)| {
                let files = plural(*n, "file", "files");
                format!("{files} {}", precompressor::model::skip::reason_in_words(r))
            })
            .collect();
        let _ = writeln!(s, "  no variant in some coding: {}", parts.join("; "));
    }
    if !r0.passed.is_empty() {
        let parts: Vec<String> = r0.passed.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let _ = writeln!(s, "  passed over: {}", parts.join(", "));
    }
    if r0.dictionaries > 0 {
        let _ = writeln!(
            s,
            "  {} assets marked as dictionaries for the next release's deltas (Use-As-Dictionary)",
            r0.dictionaries
        );
    }
    if r0.pages.pages > 0 {
        let _ = writeln!(s, "  {}", pages_line(&r0.pages));
    }
    let _ = writeln!(s, "  {}", deploy_line(&r0.deploy));
    if let Some(line) = r0.run.first_visit.as_ref().and_then(first_visit_line) {
        let _ = writeln!(s, "  {line}");
    }
    if let Some(d) = &r0.run.documents_dictionary {
        let _ = writeln!(s, "  {}", documents_line(d));
    }
    let r = &r0.run;
    let _ = writeln!(
            s,
            "  variants: {} encoded, {} from cache, {} not worth keeping, {} unchanged from the last run (each counts (file x coding) pairs); {} removed as stale{}",
            r.compressed,
            r.from_cache,
            r.not_kept,
            r.reused,
            r.removed.len(),
            if r.dry_run { " (dry run: nothing written or removed)" } else { "" }
        );
    // After a lost manifest every earlier variant is foreign: a count and
    // a few names, not a line each.
    const SHOWN: usize = 5;
    if !r.foreign.is_empty() {
        let _ = writeln!(
                s,
                "  kept {} the manifest did not list (it was lost, or a run was interrupted) that decode to their sources, so they are listed now:",
                plural(r.foreign.len() as u64, "variant or delta", "variants and deltas")
            );
    }
    for f in r.foreign.iter().take(SHOWN) {
        let _ = writeln!(s, "    {f}");
    }
    if r.foreign.len() > SHOWN {
        let _ = writeln!(
            s,
            "    ... and {} more (--json lists them all)",
            r.foreign.len() - SHOWN
        );
    }
    if r.manifest_written {
        let _ = writeln!(s, "  manifest: {}", r0.manifest.display());
    } else if r.dry_run {
        let _ = writeln!(s, "  manifest: not written (dry run)");
    } else {
        let _ = writeln!(s, "  manifest: not written (see the error above)");
    }
    s
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `precompress tune`'s human report: a header saying what was sampled, one
/// table per coding (a screen each), and the precompress.toml lines to pin.
pub fn tune_table(t: &Tuning) -> String {
    let mut s = String::new();
    write_header(t, &mut s);
    for c in &t.codings {
        write_coding(&mut s, c);
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "rule: {}.", t.rule.describe());
    let _ = writeln!(s, "To pin them, in precompress.toml:");
    for c in &t.codings {
        if c.recommendation.change {
            let _ = writeln!(s, "{}  # was {}", c.recommendation.toml, c.current);
        } else {
            let _ = writeln!(s, "{}", c.recommendation.toml);
        }
    }
    s
}

/// What was sampled, what it is compared with, and what the columns mean.
fn write_header(t: &Tuning, s: &mut String) {
    let sm = &t.sample;
    let _ = writeln!(s, "precompress tune: {}", t.dir.display());
    let _ = writeln!(
            s,
            "sample: {} (--sample {}: whole files, spread evenly in path order; the same tree gives the same sample)",
            sm.describe(),
            human(sm.limit)
        );
    if sm.over_limit > 0 {
        let _ = writeln!(
            s,
            "        {} larger than --sample on their own, never sampled",
            plural(sm.over_limit, "asset is", "assets are")
        );
    }
    let levels: Vec<String> = t
        .codings
        .iter()
        .map(|c| format!("{} {}", c.key, c.current))
        .collect();
    let _ = writeln!(
        s,
        "compared with: {} ({})",
        levels.join(", "),
        match &t.config_file {
            Some(f) => format!("from {}", f.display()),
            None => "the defaults and flags; no precompress.toml".into(),
        }
    );
    let _ = writeln!(
            s,
            "bytes: encoder output summed over the sample; CPU: encoder time on its thread, summed ({}, {:.1} s wall)",
            plural(t.threads as u64, "thread", "threads"),
            t.wall_ms as f64 / 1000.0
        );
}

/// One coding's table: a row per level, then its pick and notes.
fn write_coding(s: &mut String, c: &CodingTable) {
    let now = c.current;
    let _ = writeln!(s);
    let _ = writeln!(s, "{} ({}, now {now})", c.coding, c.key);
    // Seconds, or milliseconds for a sample too small to take one.
    let (unit, per) = if c.levels.iter().any(|r| r.cpu_micros >= 1_000_000) {
        ("CPU s", 1e6)
    } else {
        ("CPU ms", 1e3)
    };
    let _ = writeln!(
        s,
        "  {:>5}  {:>13}  {:>8}  {:>9}  {:>10}",
        "level",
        "bytes",
        format!("vs {now}"),
        unit,
        format!("CPU vs {now}")
    );
    let bytes_of_now = c
        .levels
        .iter()
        .find(|r| r.level == now)
        .map_or(0, |r| r.bytes);
    for r in &c.levels {
        let mut tags = Vec::new();
        if r.level == now {
            tags.push("now");
        }
        if r.level == c.recommendation.level {
            tags.push("pick");
        }
        if r.level == c.smallest {
            tags.push("smallest");
        }
        let line = format!(
            "  {:>5}  {:>13}  {:>8}  {:>9.3}  {:>10}  {}",
            r.level,
            thousands(r.bytes),
            signed_pct(r.bytes, bytes_of_now),
            r.cpu_micros as f64 / per,
            format!("{:.2}x", r.cpu_relative),
            tags.join(", ")
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    let _ = writeln!(
        s,
        "  pin: {}    ({})",
        c.recommendation.toml, c.recommendation.why
    );
    for n in &c.recommendation.notes {
        let _ = writeln!(s, "  note: {n}");
    }
}

/// What the deltas cost a first-time visitor, in one line; none when a
/// first visit fetches nothing and nothing was grouped or asked for (the
/// default run of a site with no shared dictionary has nothing to say).
fn first_visit_line(f: &precompressor::FirstVisit) -> Option<String> {
    if f.linked.is_empty() && f.groups == 0 && f.shared_dictionary != "on" {
        return None;
    }
    let groups = if f.groups > 0 {
        format!(
            "; {} with no name of their own are served by {} of them, marked, that a visit loads anyway",
            plural(f.grouped as u64, "chunk", "chunks"),
            f.groups
        )
    } else {
        String::new()
    };
    // auto's bound, said where it decided.
    let budget = match (f.idle_budget, &f.landing_page) {
        (Some(b), Some(page)) => format!(
            ", which holds what a first visit fetches at idle to {} ({}% of a first visit of {page})",
            human(b),
            precompressor::model::dictionary::IDLE_MAX_SHARE * 100.0
        ),
        _ => String::new(),
    };
    Some(if f.linked.is_empty() {
        format!(
            "first visit: fetches no dictionary (--shared-dictionary {}{budget}){groups}",
            f.shared_dictionary
        )
    } else {
        format!(
            "first visit: fetches {} of dictionaries at idle, which every page links ({}; --shared-dictionary {}{budget}){groups}",
            human(f.linked_bytes),
            f.linked.join(", "),
            f.shared_dictionary
        )
    })
}

/// The report's headline visit (`precompress report`'s first line, which
/// `check --url` prices from the origin too), as the run's summary says it:
/// one definition of a visit for the three.
pub fn visit_line(h: &precompressor::view::figures::Headline) -> String {
    let mut s = format!(
        "  a visit: a first visit of {} downloads {} (gzip: {}, uncompressed: {})",
        h.page,
        human(h.first),
        human(h.gzip),
        human(h.identity)
    );
    if let (Some(e), Some(back), Some(without)) =
        (&h.against, h.returning, h.returning_without_deltas)
    {
        let _ = write!(
            s,
            "; a visitor back from {e} downloads {}, {:.1}% of it ({} without deltas)",
            human(back),
            100.0 * back as f64 / h.first.max(1) as f64,
            human(without)
        );
    }
    s.push('\n');
    s
}

/// What the deploy uploads, and what its deltas cost.
fn deploy_line(d: &precompressor::report::Deploy) -> String {
    let bounded = if d.dcz_bounded == 0 {
        String::new()
    } else {
        format!(
            "; {} dcz at zstd level {} against a dictionary past {} MiB and 4 x the file, to bound the work",
            d.dcz_bounded,
            precompressor::encode::delta::DCZ_BOUNDED_LEVEL,
            precompressor::encode::delta::DCZ_BOUNDED_FROM >> 20
        )
    };
    let within = match (d.max_files, d.dropped_deltas) {
        (None, _) => String::new(),
        (Some(m), 0) => format!(" (--max-files {m})"),
        (Some(m), n) => {
            format!(" (--max-files {m}: {n} deltas not made, the oldest release's first)")
        }
    };
    format!(
        "deploy: {} files{within}, {}; {} of them deltas ({}, {:.1} s of CPU this run{bounded})",
        d.files,
        human(d.bytes),
        d.deltas,
        human(d.delta_bytes),
        d.delta_cpu_ms as f64 / 1000.0
    )
}

/// What the pages are to a returning visitor: each the dictionary of its
/// next version (and how many page deltas this release holds), or sent
/// `no-cache` with none.
fn pages_line(p: &precompressor::report::Pages) -> String {
    let pages = plural(p.pages, "page", "pages");
    if p.marked == 0 {
        format!("pages: {pages} sent no-cache, none kept by a browser as its next version's dictionary (--no-page-dictionary, or none large enough)")
    } else {
        format!(
            "pages: {} of {pages} kept by Chromium as their next version's dictionary (private, max-age=0, stale-while-revalidate); {} page deltas",
            p.marked, p.deltas
        )
    }
}

/// What the run measured for a documents dictionary, in one line.
fn documents_line(d: &precompressor::DocumentsDictionary) -> String {
    let measured = format!(
        "{} held-out pages came to {:.2} of their brotli bytes against it, and it costs a first visit {}",
        d.measured_pages,
        d.delta_bytes as f64 / d.br_bytes.max(1) as f64,
        human(d.dictionary_br_bytes)
    );
    let payback = match d.payback_pages {
        Some(p) => format!("pays back after {p:.1} pages"),
        None => "never pays back".to_string(),
    };
    match (&d.path, d.idle_left) {
        (Some(p), _) => format!("documents dictionary {p}: {payback} ({measured})"),
        (None, Some(left))
            if d.dictionary_br_bytes > left
                && d.payback_pages.is_some_and(|p| p <= d.bound_pages) =>
        {
            format!(
                "no documents dictionary: it {payback}, but costs a first visit more at idle than the {} left of its budget (--shared-dictionary on makes it; {measured})",
                human(left)
            )
        }
        (None, _) => format!(
            "no documents dictionary: it {payback}, and is made only within {} ({measured})",
            d.bound_pages
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
