//! `report.html`: the report's Markdown as one self-contained page — the same headings, paragraphs and tables,
//! every table sortable by a click on a header (a small inline script), the plots embedded as SVG text, an inline
//! style, no network and no external asset.
//!
//! The page is built from `report.md`'s text rather than from the report's data a second time: the tables are
//! written once (by [`crate::md_table`] and by `ltr-metrics` for the all-pairs tables) and read back here into
//! [`Table`]s, so the two files cannot disagree. Only the Markdown that the report writes is understood: `#`
//! headings, paragraphs, pipe tables, images on a line of their own, and inline `**bold**`, `` `code` `` and
//! `[links](…)`.

use std::path::{Path, PathBuf};

use crate::error::{ExperimentError, Result};

/// A table as the report writes it: a header row and body rows of cell text (inline Markdown).
#[derive(Debug, Clone, PartialEq)]
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub struct Table {
    /// Header cells.
    pub header: Vec<String>,
    /// Body rows.
    pub rows: Vec<Vec<String>>,
}

/// One block of the report.
#[derive(Debug, Clone, PartialEq)]
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub enum Block {
    Heading(usize, String),
    Paragraph(String),
    Table(Table),
    /// `![alt](target)` on a line of its own.
    Image(String, String),
}

/// The cells of a pipe-table line; `\|` is a `|` inside a cell.
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t
        .strip_suffix('|')
        .filter(|r| !r.ends_with('\\'))
        .unwrap_or(t);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cell).trim().to_string()),
            _ => cell.push(c),
        }
    }
    out.push(cell.trim().to_string());
    out
}

fn is_separator(line: &str) -> bool {
    let c = cells(line);
    !c.is_empty()
        && c.iter()
            .all(|x| !x.is_empty() && x.chars().all(|ch| ch == '-' || ch == ':'))
}

/// The blocks of the report's Markdown.
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub fn blocks(md: &str) -> Vec<Block> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let flush = |para: &mut Vec<&str>, out: &mut Vec<Block>| {
        if !para.is_empty() {
            out.push(Block::Paragraph(para.join(" ")));
            para.clear();
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim();
        if t.is_empty() {
            flush(&mut para, &mut out);
            i += 1;
        } else if let Some(level) = heading_level(t) {
            flush(&mut para, &mut out);
            out.push(Block::Heading(level, t[level..].trim().to_string()));
            i += 1;
        } else if t.starts_with('|') && lines.get(i + 1).is_some_and(|n| is_separator(n)) {
            flush(&mut para, &mut out);
            let header = cells(t);
            i += 2;
            let mut rows = Vec::new();
            while i < lines.len() && lines[i].trim().starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push(Block::Table(Table { header, rows }));
        } else if let Some((alt, target)) = image(t) {
            flush(&mut para, &mut out);
            out.push(Block::Image(alt, target));
            i += 1;
        } else {
            para.push(t);
            i += 1;
        }
    }
    flush(&mut para, &mut out);
    out
}

fn heading_level(t: &str) -> Option<usize> {
    let n = t.chars().take_while(|&c| c == '#').count();
    ((1..=6).contains(&n) && t[n..].starts_with(' ')).then_some(n)
}

/// `![alt](target)` filling the whole line.
fn image(t: &str) -> Option<(String, String)> {
    let rest = t.strip_prefix("![")?;
    let (alt, rest) = rest.split_once("](")?;
    let target = rest.strip_suffix(')')?;
    (!target.contains(')')).then(|| (alt.to_string(), target.to_string()))
}

/// Text with `&`, `<`, `>` and quotes escaped.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// Inline Markdown to HTML: `` `code` ``, `**bold**`, `[text](link)`; everything else escaped.
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub fn inline(s: &str) -> String {
    let mut o = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`') {
            if let Some(end) = r.find('`') {
                o.push_str(&format!("<code>{}</code>", escape(&r[..end])));
                rest = &r[end + 1..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix("**") {
            if let Some(end) = r.find("**").filter(|&e| e > 0) {
                o.push_str(&format!("<strong>{}</strong>", inline(&r[..end])));
                rest = &r[end + 2..];
                continue;
            }
        }
        if let Some(r) = rest.strip_prefix('[') {
            if let Some((text, after)) = r.split_once("](") {
                if let Some(end) = after.find(')') {
                    if !text.contains(']') {
                        o.push_str(&format!(
                            "<a href=\"{}\">{}</a>",
                            escape(&after[..end]),
                            inline(text)
                        ));
                        rest = &after[end + 1..];
                        continue;
                    }
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        o.push_str(&escape(&c.to_string()));
        rest = &rest[c.len_utf8()..];
    }
    o
}

/// A table's HTML; a first-column cell naming a method gets the method's colour swatch, the colour of its curves.
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub fn table_html(t: &Table, colours: &[(String, String)]) -> String {
    let mut h = String::from("<table>\n<thead><tr>");
    for c in &t.header {
        h.push_str(&format!("<th>{}</th>", inline(c)));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        h.push_str("<tr>");
        for (j, c) in r.iter().enumerate() {
            let swatch = colours
                .iter()
                .find(|(m, _)| j == 0 && m == c)
                .map(|(_, colour)| {
                    format!("<span class=\"swatch\" style=\"background:{colour}\"></span>")
                })
                .unwrap_or_default();
            h.push_str(&format!("<td>{swatch}{}</td>", inline(c)));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;\
background:#fff;max-width:1180px;margin:2em auto;padding:0 1.5em;line-height:1.45}\
h1{font-size:1.6em;border-bottom:2px solid #eee;padding-bottom:.3em}h2{font-size:1.3em;margin-top:1.8em;\
border-bottom:1px solid #eee;padding-bottom:.2em}h3{font-size:1.08em;margin-top:1.4em}\
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.92em}th,td{border:1px solid #ddd;padding:.3em .65em;\
text-align:left;vertical-align:top}thead th{background:#f5f5f5;cursor:pointer;user-select:none;white-space:nowrap}\
thead th[data-dir=asc]::after{content:' \\25B2';font-size:.75em}thead th[data-dir=desc]::after{content:' \\25BC';\
font-size:.75em}tbody tr:nth-child(even){background:#fafafa}code{background:#f3f3f3;padding:0 .25em;\
border-radius:3px;font-size:.92em}.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;\
margin-right:.4em;vertical-align:-.05em}figure{margin:1em 0}figure svg{max-width:100%;height:auto}\
figcaption{font-size:.85em;color:#666}";

/// Sorts a table by a clicked header: numerically when every non-empty cell of the column starts with a number
/// (missing values, `—`, last), as text otherwise; a second click reverses. Marks each header it set up with
/// `data-sortable="on"`.
const SCRIPT: &str = r#"(function () {
  function key(cell) { return cell ? cell.textContent.trim() : ""; }
  function missing(s) { return s === "" || s === "\u2014"; }
  document.querySelectorAll("table").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.setAttribute("data-sortable", "on");
      th.setAttribute("title", "Sort");
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = rows.every(function (r) {
          var s = key(r.cells[col]);
          return missing(s) || isFinite(parseFloat(s));
        });
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var sign = dir === "asc" ? 1 : -1;
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          if (missing(x) || missing(y)) { return missing(x) - missing(y); }
          var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return sign * c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();"#;

/// A heading's anchor (`report.html#plots`): lower-case letters and digits joined by `-`, a number appended when
/// an earlier heading took the same anchor.
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub fn anchor(text: &str, taken: &[String]) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    let slug = if slug.is_empty() {
        "section".into()
    } else {
        slug
    };
    let mut id = slug.clone();
    let mut k = 1;
    while taken.contains(&id) {
        k += 1;
        id = format!("{slug}-{k}");
    }
    id
}

/// The page for the report's Markdown `md`; images under `out` are embedded as their SVG text. `colours` pairs
/// each method with its plot colour.
fn page(md: &str, out: &Path, colours: &[(String, String)]) -> Result<String> {
    let bs = blocks(md);
    let title = bs
        .iter()
        .find_map(|b| match b {
            Block::Heading(1, t) => Some(t.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "Experiment".into());
    let mut body = String::new();
    let mut ids: Vec<String> = Vec::new();
    for b in &bs {
        match b {
            Block::Heading(l, t) => {
                let id = anchor(t, &ids);
                body.push_str(&format!("<h{l} id=\"{id}\">{}</h{l}>\n", inline(t)));
                ids.push(id);
            }
            Block::Paragraph(p) => body.push_str(&format!("<p>{}</p>\n", inline(p))),
            Block::Table(t) => body.push_str(&table_html(t, colours)),
            Block::Image(alt, target) => {
                let path = out.join(target);
                let svg =
                    std::fs::read_to_string(&path).map_err(|e| ExperimentError::io(&path, e))?;
                // The SVG as plotters writes it: one <svg> element, no XML declaration to strip.
                let svg = svg.trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
                body.push_str(&format!(
                    "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
                    svg.trim(),
                    escape(alt)
                ));
            }
        }
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n{body}<script>\n{SCRIPT}\n</script>\n</body>\n</html>\n",
        escape(&title)
    ))
}

/// Write `report.html` into `out` (atomically) from the report's Markdown; returns its path.
pub(crate) fn write_html(md: &str, out: &Path, colours: &[(String, String)]) -> Result<PathBuf> {
    let html = page(md, out, colours)?;
    let path = out.join("report.html");
    ltr_data::write_atomic(&path, |w| w.write_all(html.as_bytes()))?;
    Ok(path)
}
