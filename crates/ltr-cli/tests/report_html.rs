//! `report.html` of `ltr experiment` in a real browser: headless chromium (Debian's, installed by `cargo xtask
//! test` through `scripts/setup-chromium.sh`) takes a screenshot of the page and dumps the page after its script
//! ran. Without chromium the test prints `SKIP: …` and passes.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{generate_folds, ok, s};

/// `chromium` on the PATH.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Run headless chromium on `url` with `args`; its own profile folder under `dir`. The time limit (coreutils'
/// `timeout`, 300 s) only ends a browser that hangs, a run that has already failed.
fn run_chromium(chromium: &Path, dir: &Path, args: &[&str], url: &str) -> Output {
    let profile = dir.join("chromium-profile");
    let out = Command::new("timeout")
        .arg("300")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The tables of a Markdown text: each a list of rows (header first) of cell texts, inline marks removed.
fn markdown_tables(md: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut current: Vec<Vec<String>> = Vec::new();
    for line in md.lines().chain(std::iter::once("")) {
        let t = line.trim();
        if t.starts_with('|') {
            let cells: Vec<String> = t
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().replace("**", "").replace('`', ""))
                .collect();
            if !cells
                .iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-'))
            {
                current.push(cells);
            }
        } else if !current.is_empty() {
            tables.push(std::mem::take(&mut current));
        }
    }
    tables
}

/// The text of an HTML fragment: tags dropped, the entities chromium writes decoded.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
        .trim()
        .to_string()
}

/// The tables of the dumped page, as rows of cell texts.
fn dom_tables(dom: &str) -> Vec<Vec<Vec<String>>> {
    dom.split("<table")
        .skip(1)
        .map(|t| {
            let t = &t[..t.find("</table>").unwrap_or(t.len())];
            t.split("<tr")
                .skip(1)
                .map(|row| {
                    row[..row.find("</tr>").unwrap_or(row.len())]
                        .split("</t")
                        .filter_map(|cell| {
                            let start = cell.rfind("<td").or_else(|| cell.rfind("<th"))?;
                            let body = &cell[start..];
                            Some(text(&body[body.find('>')? + 1..]))
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

#[test]
fn report_html_renders_in_chromium_with_sortable_tables() {
    let Some(chromium) = chromium() else {
        println!(
            "SKIP: no chromium on the PATH (cargo xtask test installs it with scripts/setup-chromium.sh)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 2, 40);
    let out = dir.path().join("out");
    // Two metrics: the validation metric NDCG@10, whose plots the page shows, and MAP.
    ok(&[
        "experiment",
        "--fold-dir",
        s(&data),
        "--algo",
        "ranksvm",
        "--algo",
        "rankboost:rounds=30",
        "--algo",
        "committee-perceptron:committee=5,epochs=10",
        "--report-metric",
        "MAP",
        "--seed",
        "3",
        "--out",
        s(&out),
    ]);
    let html_path = out.join("report.html");
    let html =
        std::fs::read_to_string(&html_path).expect("report.html is written beside report.md");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // Self-contained: nothing fetched, the plots inline.
    for external in [
        "src=\"http",
        "href=\"http",
        "<link",
        "<img",
        "@import",
        "url(",
    ] {
        assert!(
            !html.contains(external),
            "report.html refers outside itself: {external}"
        );
    }
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "the two NDCG@10 plots inline"
    );
    let url = format!("file://{}", html_path.display());

    // The screenshot: the top of the page (a URL fragment such as #plots leaves headless chromium's screenshot
    // half blank, so the plots below the tables are checked in the dumped page instead).
    let png_path = dir.path().join("report.png");
    run_chromium(
        &chromium,
        dir.path(),
        &[
            &format!("--screenshot={}", png_path.display()),
            "--window-size=1280,2400",
        ],
        &url,
    );
    if let Some(keep) = std::env::var_os("LTR_KEEP_SCREENSHOT") {
        std::fs::copy(&png_path, keep).unwrap();
    }
    let file = std::io::BufReader::new(std::fs::File::open(&png_path).expect("the PNG exists"));
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a buffer size")];
    let frame = reader.next_frame(&mut buf).expect("the PNG decodes");
    assert_eq!((frame.width, frame.height), (1280, 2400));
    let channels = match frame.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected colour type {other:?}"),
    };
    let pixels: Vec<[u8; 3]> = buf[..frame.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let non_white = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
    let share = non_white as f64 / pixels.len() as f64;
    // Measured 2026-11-27 (Chromium 148, Debian 12): 15.6 % of the pixels are not white.
    assert!(
        share > 0.05,
        "the page looks blank: {:.2} % non-white",
        share * 100.0
    );
    // Each method's colour (the swatch beside its name in every table, the colour of its curves) is on the page:
    // measured 829, 1069 and 818 pixels of exactly the palette's first three colours.
    let palette: Vec<[u8; 3]> = ltr_experiment_palette();
    let counts: Vec<usize> = palette[..3]
        .iter()
        .map(|c| pixels.iter().filter(|p| *p == c).count())
        .collect();
    println!(
        "non-white {:.2} %, method colours {counts:?} pixels",
        share * 100.0
    );
    assert!(
        counts.iter().all(|&n| n >= 300),
        "the three method colours should each cover at least 300 pixels: {counts:?}"
    );

    // The page after its script ran.
    let dom = String::from_utf8(run_chromium(&chromium, dir.path(), &["--dump-dom"], &url).stdout)
        .unwrap();
    let want = markdown_tables(&md);
    let got = dom_tables(&dom);
    assert!(want.len() >= 8, "report.md has its tables: {}", want.len());
    assert_eq!(
        got, want,
        "every table of report.md, cell for cell, in the page"
    );
    let headers: usize = want.iter().map(|t| t[0].len()).sum();
    assert_eq!(
        dom.matches("<th data-sortable=\"on\"").count(),
        headers,
        "the sorting script set up every header"
    );
    // The plots inline, each an SVG with one curve per method in its colour (the sorted differences: the two
    // methods other than the baseline; by fold: all three).
    let figures: Vec<&str> = dom.split("<figure>").skip(1).collect();
    assert_eq!(figures.len(), 2, "the NDCG@10 plots");
    let palette = ltr_experiment::palette();
    for (figure, methods) in figures.iter().zip([1..3, 0..3]) {
        assert!(figure.contains("<svg"));
        for colour in &palette[methods] {
            assert!(
                figure.contains(&format!("stroke=\"{}\"", colour.to_uppercase())),
                "{colour} missing from a plot"
            );
        }
    }
    // Clicks on the first table's headers (a script appended to a copy of the page, run after the page's own):
    // MAP once sorts ascending by number, twice descending; method sorts by text. Rows move whole.
    let first = &want[0];
    let map = first[0]
        .iter()
        .position(|h| h == "MAP")
        .expect("a MAP column");
    for (clicks, column) in [(1, map), (2, map), (1, 0)] {
        let script = format!(
            "<script>var h = document.querySelector('table').tHead.rows[0].cells[{column}]; \
             for (var i = 0; i < {clicks}; i++) {{ h.click(); }}</script></body>"
        );
        let clicked = dir.path().join("clicked.html");
        std::fs::write(&clicked, html.replace("</body>", &script)).unwrap();
        let url = format!("file://{}", clicked.display());
        let dom =
            String::from_utf8(run_chromium(&chromium, dir.path(), &["--dump-dom"], &url).stdout)
                .unwrap();
        let table = &dom_tables(&dom)[0];
        let mut rows = first[1..].to_vec();
        if column == 0 {
            rows.sort_by(|a, b| a[0].cmp(&b[0]));
        } else {
            rows.sort_by(|a, b| {
                a[column]
                    .parse::<f64>()
                    .unwrap()
                    .total_cmp(&b[column].parse().unwrap())
            });
        }
        if clicks == 2 {
            rows.reverse();
        }
        assert_eq!(
            &table[1..],
            &rows[..],
            "{clicks} click(s) on column {column}"
        );
        let dir_attr = if clicks == 2 { "desc" } else { "asc" };
        assert!(dom.contains(&format!("data-dir=\"{dir_attr}\"")));
    }
    for heading in md.lines().filter(|l| l.starts_with('#')) {
        let h = heading.trim_start_matches('#').trim().replace('`', "");
        assert!(text(&dom).contains(&h), "heading {h} missing");
    }
}

/// The plot palette (`ltr_experiment::palette`, `#rrggbb`) as RGB triples; the first is the first method's.
fn ltr_experiment_palette() -> Vec<[u8; 3]> {
    ltr_experiment::palette()
        .iter()
        .map(|h| {
            let v = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).unwrap();
            [v(1), v(3), v(5)]
        })
        .collect()
}
