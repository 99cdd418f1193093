//! The report page: [`Figures`] as one self-contained HTML document, its
//! charts inline SVG (`view::svg`), its style inline, no script and no URL
//! a browser would fetch. Pure: the same figures give the same bytes.

use std::fmt::Write;

use crate::model::skip::reason_in_words;
use crate::report::human;
use crate::view::figures::{Figures, PageVisit, CODINGS};
use crate::view::svg::{bars, escape, Row, Series};

/// Pages drawn in the main chart at most (the table lists them all).
pub const CHART_PAGES: usize = 25;

/// Skipped (file, coding) pairs listed one by one at most.
pub const SKIPS_LISTED: usize = 200;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222;padding:0 1em}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:13px;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child,td.words{text-align:left}code{font-size:12px}.note{color:#555;font-size:13px}\
svg.chart{max-width:100%;height:auto;display:block;margin:.5em 0}";

const FIRST: Series = Series {
    name: "first visit",
    color: "#4285f4",
};
const IDLE: Series = Series {
    name: "+ dictionaries at idle",
    color: "#a0c3ff",
};
const BACK_FULL: Series = Series {
    name: "back, without deltas",
    color: "#f4b400",
};
const BACK_DELTA: Series = Series {
    name: "back, with deltas",
    color: "#0f9d58",
};

/// The colour of a coding's bars.
fn coding_series(c: &'static str) -> Series {
    let color = match c {
        "identity" => "#9aa0a6",
        "gzip" => "#f4b400",
        "br" => "#4285f4",
        "zstd" => "#db4437",
        "dcb" | "dcz" | "delta" => "#0f9d58",
        _ => "#7b1fa2",
    };
    Series { name: c, color }
}

/// The whole page.
pub fn render(f: &Figures) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>precompress report: {}</title><style>{STYLE}</style></head><body>\n",
        escape(&f.dir)
    );
    header(&mut s, f);
    visits(&mut s, f);
    by_coding(&mut s, f);
    deltas(&mut s, f);
    biggest(&mut s, f);
    skipped(&mut s, f);
    s.push_str("</body></html>\n");
    s
}

/// The first line: what a first and a returning visit of the landing page
/// download, against gzip ([`crate::view::figures::Headline`]).
fn headline(s: &mut String, f: &Figures) {
    let Some(h) = &f.headline else { return };
    let _ = write!(
        s,
        "<p class=\"headline\"><strong>A first visit of <code>{}</code> downloads {}</strong> (as gzip, the most a server compressing on the fly saves: {}; uncompressed: {}){}",
        escape(&h.page),
        human(h.first),
        human(h.gzip),
        human(h.identity),
        if h.lazy > 0 {
            format!(", and {} more for the lazy routes its scripts load as a visitor opens them", human(h.lazy))
        } else {
            String::new()
        }
    );
    match (&h.against, h.returning, h.returning_without_deltas) {
        (Some(e), Some(back), Some(without)) => {
            let _ = writeln!(
                s,
                "; <strong>a visitor back from {} downloads {}</strong>, {:.1}% of a first visit ({} without deltas).</p>",
                escape(e),
                human(back),
                100.0 * back as f64 / h.first.max(1) as f64,
                human(without)
            );
        }
        _ => s.push_str(".</p>\n"),
    }
}

fn header(s: &mut String, f: &Figures) {
    let _ = writeln!(
        s,
        "<h1>precompress report: <code>{}</code></h1>",
        escape(&f.dir)
    );
    headline(s, f);
    let _ = writeln!(
        s,
        "<p>{} assets, {}, by {}. {}</p>",
        f.assets,
        human(f.bytes),
        escape(&f.generator),
        match f.earlier.len() {
            0 => "No earlier release (none in the release store, and no <code>--dictionary-from</code>): a returning visitor is not shown.".to_string(),
            n => format!(
                "Compared with {} earlier release{}, newest first: {} (release -1 is the release store's newest before this one).",
                n,
                if n == 1 { "" } else { "s" },
                f.described.iter().map(|e| escape(e)).collect::<Vec<_>>().join(", ")
            ),
        }
    );
    let _ = writeln!(
        s,
        "<p class=\"note\">A first visit downloads a page and what it loads (its scripts, modulepreloads and stylesheets, and their static imports), each in the one coding the client accepts, or the smallest when it accepts them all (best); a browser that accepts deltas then fetches the dictionaries every page links at idle{}. A visitor back from an earlier release holds that release's files as the store or its published list of dictionaries names them: what is unchanged costs nothing, what changed costs its smallest delta against the version held (or its best variant without deltas); a file it does not list (an unmarked file) is counted as fetched again at its best variant.</p>",
        if f.linked.is_empty() {
            " (this release links none)".to_string()
        } else {
            format!(" ({})", f.linked.iter().map(|d| format!("<code>{}</code>", escape(d))).collect::<Vec<_>>().join(", "))
        }
    );
}

/// The main chart: each page's first visit and a return from the newest
/// earlier release; then the table of every page and coding.
fn visits(s: &mut String, f: &Figures) {
    s.push_str("<h2 id=\"visits\">A visit, page by page</h2>\n");
    if f.pages.is_empty() {
        s.push_str("<p>The release has no HTML page, so what a visit loads is not known: the whole site's figures are below.</p>\n");
        return;
    }
    let back = !f.earlier.is_empty();
    let mut series = vec![FIRST, IDLE];
    if back {
        series.extend([BACK_FULL, BACK_DELTA]);
    }
    let rows: Vec<Row> = f
        .pages
        .iter()
        .take(CHART_PAGES)
        .map(|p| {
            let v = &p.visit;
            let mut values = vec![Some(v.first["best"]), Some(v.idle)];
            if let Some(r) = v.returning.first() {
                values.extend([Some(r.without_deltas), Some(r.with_deltas)]);
            }
            Row {
                label: p.page.clone(),
                values,
            }
        })
        .collect();
    let what = match f.earlier.first() {
        Some(e) => {
            format!("first visit (best coding), dictionaries at idle, and a visitor back from {e}")
        }
        None => "first visit (best coding) and dictionaries at idle".to_string(),
    };
    // The label is a folder or a URL: escaped in the caption (bars escapes its own).
    let _ = writeln!(
        s,
        "<figure id=\"main\">{}<figcaption class=\"note\">Per page: {}.{}</figcaption></figure>",
        bars(
            &format!("Bytes downloaded per page: {what}"),
            &series,
            &rows
        ),
        escape(&what),
        if f.pages.len() > CHART_PAGES {
            format!(
                " The first {CHART_PAGES} of {} pages; the table has them all.",
                f.pages.len()
            )
        } else {
            String::new()
        }
    );
    s.push_str("<table><tr><th>page</th><th>assets</th>");
    for c in CODINGS {
        let _ = write!(s, "<th>{c}</th>");
    }
    s.push_str("<th>at idle</th><th>lazy routes (best)</th>");
    for e in &f.earlier {
        let _ = write!(s, "<th>back from {} (without deltas)</th>", escape(e));
    }
    s.push_str("</tr>\n");
    for p in &f.pages {
        page_row(s, p);
    }
    s.push_str("</table>\n");
}

fn page_row(s: &mut String, p: &PageVisit) {
    let v = &p.visit;
    let _ = write!(
        s,
        "<tr><td><code>{}</code></td><td>{}</td>",
        escape(&p.page),
        p.assets
    );
    for c in CODINGS {
        let _ = write!(s, "<td>{}</td>", human(v.first[c]));
    }
    let _ = write!(
        s,
        "<td>{}</td><td>{}</td>",
        human(v.idle),
        human(p.lazy.first["best"])
    );
    for r in &v.returning {
        let _ = write!(
            s,
            "<td>{} ({})</td>",
            human(r.with_deltas),
            human(r.without_deltas)
        );
    }
    s.push_str("</tr>\n");
}

fn by_coding(s: &mut String, f: &Figures) {
    s.push_str("<h2 id=\"codings\">The whole release, by coding</h2>\n");
    let rows: Vec<Row> = CODINGS
        .iter()
        .map(|c| Row {
            label: if *c == "best" {
                "best (accepts all)".into()
            } else {
                format!("{c} only")
            },
            values: vec![Some(f.site.first[c])],
        })
        .collect();
    let one = [coding_series("all assets")];
    let _ = writeln!(
        s,
        "{}<p class=\"note\">Every asset once, as a client that accepts only that coding downloads it (the file itself where it has no variant of it).</p>",
        bars("Bytes of every asset, by the coding a client accepts", &one, &rows)
    );
}

fn deltas(s: &mut String, f: &Figures) {
    s.push_str("<h2 id=\"deltas\">What the deltas saved over the last releases</h2>\n");
    if f.earlier.is_empty() {
        s.push_str("<p>No earlier release, so no delta to weigh: none in the release store (the next run records this one: give the same <code>--cache-dir</code>), and no <code>--dictionary-from</code> (the folder or live site the deltas were made against).</p>\n");
        return;
    }
    let rows: Vec<Row> = f
        .earlier
        .iter()
        .zip(&f.site.returning)
        .map(|(e, r)| Row {
            label: format!("back from {e}"),
            values: vec![Some(r.without_deltas), Some(r.with_deltas)],
        })
        .collect();
    let _ = writeln!(
        s,
        "{}",
        bars(
            "A visitor back from each earlier release, every asset: without and with deltas",
            &[BACK_FULL, BACK_DELTA],
            &rows
        )
    );
    s.push_str("<table><tr><th>visitor back from</th><th>assets fetched</th><th>as deltas</th><th>without deltas</th><th>with deltas</th><th>saved</th></tr>\n");
    for (e, r) in f.earlier.iter().zip(&f.site.returning) {
        let saved = r.without_deltas - r.with_deltas.min(r.without_deltas);
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({:.1}%)</td></tr>",
            escape(e),
            r.fetched,
            r.as_delta,
            human(r.without_deltas),
            human(r.with_deltas),
            human(saved),
            100.0 * saved as f64 / r.without_deltas.max(1) as f64
        );
    }
    s.push_str("</table>\n");
}

fn biggest(s: &mut String, f: &Figures) {
    s.push_str("<h2 id=\"biggest\">The biggest assets and what they cost</h2>\n");
    let codings = ["identity", "gzip", "br", "zstd", "delta"];
    let series: Vec<Series> = codings.iter().map(|c| coding_series(c)).collect();
    let rows: Vec<Row> = f
        .biggest
        .iter()
        .map(|a| Row {
            label: a.path.clone(),
            values: codings
                .iter()
                .map(|c| match *c {
                    "identity" => Some(a.size),
                    "delta" => a.delta.as_ref().map(|d| d.1),
                    c => a.variants.get(c).copied(),
                })
                .collect(),
        })
        .collect();
    let _ = writeln!(
        s,
        "{}",
        bars(
            "The biggest assets: their size, each variant and their smallest delta",
            &series,
            &rows
        )
    );
    s.push_str("<table><tr><th>asset</th><th>size</th><th>gzip</th><th>br</th><th>zstd</th><th>smallest delta</th></tr>\n");
    for a in &f.biggest {
        let v = |c: &str| a.variants.get(c).map_or("–".to_string(), |n| human(*n));
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&a.path),
            human(a.size),
            v("gzip"),
            v("br"),
            v("zstd"),
            a.delta
                .as_ref()
                .map_or("–".to_string(), |(c, n)| format!("{c} {}", human(*n)))
        );
    }
    s.push_str("</table>\n");
}

fn skipped(s: &mut String, f: &Figures) {
    s.push_str("<h2 id=\"skipped\">What has no variant, and why</h2>\n");
    if f.skipped.is_empty() {
        s.push_str("<p>Every asset has a variant of every coding asked for.</p>\n");
        return;
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for k in &f.skipped {
        match counts.last_mut() {
            Some((r, n)) if *r == k.reason => *n += 1,
            _ => counts.push((&k.reason, 1)),
        }
    }
    s.push_str("<table><tr><th>reason</th><th>file × coding</th><th>what it means</th></tr>\n");
    for (r, n) in &counts {
        let _ = writeln!(
            s,
            "<tr><td><code>{r}</code></td><td>{n}</td><td class=\"words\">{}</td></tr>",
            escape(&reason_in_words(r).replace('`', ""))
        );
    }
    s.push_str("</table>\n");
    let _ = writeln!(
        s,
        "<details><summary>Each of them{}</summary><table><tr><th>asset</th><th>coding</th><th>reason</th></tr>",
        if f.skipped.len() > SKIPS_LISTED {
            format!(" (the first {SKIPS_LISTED} of {})", f.skipped.len())
        } else {
            String::new()
        }
    );
    for k in f.skipped.iter().take(SKIPS_LISTED) {
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>",
            escape(&k.path),
            escape(&k.coding),
            escape(&k.reason)
        );
    }
    s.push_str("</table></details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::figures::figures;
    use crate::view::fixture::release;

    #[test]
    fn the_page_draws_every_section_and_fetches_nothing() {
        let (m, loads, earlier) = release();
        let html = render(&figures("dist", &m, &loads, &Default::default(), &earlier));
        for id in ["main", "visits", "codings", "deltas", "biggest", "skipped"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
        }
        assert_eq!(html.matches("<svg").count(), 4);
        // No URL a browser would fetch: no src, no href, no url(), no import.
        for fetch in ["src=", "href=", "url(", "@import", "<script", "<link"] {
            assert!(!html.contains(fetch), "{fetch} in the page");
        }
        // The returning visitor's row: 900 B with deltas, 3.4 KiB without.
        assert!(html.contains("<td>900 B (3.4 KiB)</td>"), "{html}");
        assert!(html.contains("under `--min-size`") || html.contains("not a compressible type"));
        assert_eq!(
            html,
            render(&figures("dist", &m, &loads, &Default::default(), &earlier))
        );
    }

    #[test]
    fn without_earlier_releases_or_pages_it_says_so() {
        let (m, _, _) = release();
        let html = render(&figures(
            "<dist>",
            &m,
            &Default::default(),
            &Default::default(),
            &[],
        ));
        assert!(html.contains("has no HTML page"));
        assert!(html.contains("No earlier release, so no delta to weigh"));
        assert!(html.contains("&lt;dist&gt;") && !html.contains("<dist>"));
        assert_eq!(html.matches("<svg").count(), 2);
    }
}
