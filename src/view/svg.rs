//! The report's one kind of chart, as inline SVG made here: rows of grouped
//! horizontal bars, one bar per series, each with its size written after it
//! and a `<title>` a browser shows on hover. No script, no font or style
//! from anywhere else: the page must load with no request beyond itself.

use std::fmt::Write;

use crate::report::human;

/// One series: its name in the legend and its bars' colour.
#[derive(Debug, Clone, Copy)]
pub struct Series {
    pub name: &'static str,
    pub color: &'static str,
}

/// One row: its label and a value per series (`None`: no bar).
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub values: Vec<Option<u64>>,
}

/// `&`, `<`, `>`, `"` and `'` escaped, for text and attribute values alike.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const LABEL_W: usize = 260;
const BARS_W: usize = 480;
const VALUE_W: usize = 90;
const BAR_H: usize = 13;
const GAP: usize = 10;
const LEGEND_H: usize = 24;

/// A label cut to what fits the label column, keeping its end (a path's
/// file name says most).
fn fit(label: &str) -> String {
    const MAX: usize = 38;
    let n = label.chars().count();
    if n <= MAX {
        label.to_string()
    } else {
        let tail: String = label.chars().skip(n - (MAX - 1)).collect();
        format!("…{tail}")
    }
}

/// The chart: `aria-label` says what it shows; bars scale to the largest
/// value of all rows, so rows compare at a glance.
pub fn bars(aria: &str, series: &[Series], rows: &[Row]) -> String {
    let max = rows
        .iter()
        .flat_map(|r| r.values.iter().flatten())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1);
    let row_h = series.len() * BAR_H + GAP;
    let width = LABEL_W + BARS_W + VALUE_W;
    let height = LEGEND_H + rows.len() * row_h + GAP;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="system-ui, sans-serif" font-size="12">"#,
        escape(aria)
    );
    let mut x = LABEL_W;
    for se in series {
        let _ = write!(
            s,
            r#"<rect x="{x}" y="6" width="12" height="12" fill="{}"/><text x="{}" y="16">{}</text>"#,
            se.color,
            x + 16,
            escape(se.name)
        );
        x += 24 + 7 * se.name.chars().count();
    }
    for (i, r) in rows.iter().enumerate() {
        let top = LEGEND_H + i * row_h;
        let mid = top + series.len() * BAR_H / 2 + 4;
        let _ = write!(
            s,
            r#"<text x="{}" y="{mid}" text-anchor="end"><title>{}</title>{}</text>"#,
            LABEL_W - 8,
            escape(&r.label),
            escape(&fit(&r.label))
        );
        for (j, (se, v)) in series.iter().zip(&r.values).enumerate() {
            let Some(v) = v else { continue };
            let y = top + j * BAR_H;
            let w = ((*v as f64 / max as f64) * BARS_W as f64).round() as usize;
            let _ = write!(
                s,
                r##"<rect x="{LABEL_W}" y="{y}" width="{}" height="{}" fill="{}"><title>{}: {}: {} bytes</title></rect><text x="{}" y="{}" fill="#333">{}</text>"##,
                w.max(1),
                BAR_H - 2,
                se.color,
                escape(&r.label),
                escape(se.name),
                v,
                LABEL_W + w.max(1) + 4,
                y + BAR_H - 3,
                human(*v)
            );
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [Series; 2] = [
        Series {
            name: "a",
            color: "#111",
        },
        Series {
            name: "b",
            color: "#222",
        },
    ];

    #[test]
    fn bars_scale_to_the_largest_value_and_escape_labels() {
        let rows = [
            Row {
                label: "<x>&\"y\"".into(),
                values: vec![Some(1000), Some(500)],
            },
            Row {
                label: "z".into(),
                values: vec![None, Some(250)],
            },
        ];
        let svg = bars("t", &TWO, &rows);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(&format!(r##"width="{BARS_W}" height="11" fill="#111""##)));
        assert!(svg.contains(&format!(
            r##"width="{}" height="11" fill="#222""##,
            BARS_W / 2
        )));
        assert!(svg.contains(&format!(
            r##"width="{}" height="11" fill="#222""##,
            BARS_W / 4
        )));
        // Three bars: the missing value draws none.
        assert_eq!(svg.matches("bytes</title></rect>").count(), 3);
        assert!(svg.contains("&lt;x&gt;&amp;&quot;y&quot;"));
        assert!(!svg.contains("<x>"));
    }

    #[test]
    fn long_labels_keep_their_end() {
        let long = format!("{}/index-abc123.js", "deep/".repeat(20));
        let f = fit(&long);
        assert_eq!(f.chars().count(), 38);
        assert!(f.starts_with('…') && f.ends_with("index-abc123.js"));
        assert_eq!(fit("short.js"), "short.js");
    }
}
