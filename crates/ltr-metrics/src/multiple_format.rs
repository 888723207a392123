//! A [`ManyComparison`] as Markdown, LaTeX (booktabs) or JSON.

use crate::multiple::{ManyComparison, ManyTest};

/// The output formats of a many-run comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    /// Markdown tables.
    #[default]
    Markdown,
    /// LaTeX tables with booktabs rules.
    Latex,
    /// JSON.
    Json,
}

impl std::str::FromStr for ReportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "markdown" | "md" => Ok(Self::Markdown),
            "latex" | "tex" => Ok(Self::Latex),
            "json" => Ok(Self::Json),
            _ => Err(format!(
                "unknown format `{s}`; expected markdown, latex or json"
            )),
        }
    }
}

fn num(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.4}")
    }
}

fn signed(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:+.4}")
    }
}

/// A p-value as the tables print it: 4 decimals, scientific below 1e-4, `—` for NaN.
pub fn p_value_text(p: f64) -> String {
    if p.is_nan() {
        "—".into()
    } else if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

fn d_text(d: f64) -> String {
    if d.is_finite() {
        format!("{d:+.2}")
    } else {
        "—".into()
    }
}

fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() {
        serde_json::json!(x)
    } else {
        serde_json::Value::Null
    }
}

impl ManyComparison {
    /// One sentence saying what was computed.
    pub fn method_text(&self) -> String {
        let o = &self.options;
        let test = match o.test {
            ManyTest::TukeyHsd => {
                format!("randomised Tukey HSD over all pairs ({} trials)", o.trials)
            }
            t => format!(
                "paired two-sided {} per pair, {} correction over the {} pairs",
                t.name(),
                o.correction.name(),
                self.pairs.len()
            ),
        };
        format!(
            "{} over {} queries; {test}; means with 95% percentile bootstrap intervals ({} resamples); \
             seed {}; α = {}",
            self.measure, self.queries, o.resamples, o.seed, o.alpha
        )
    }

    fn verdict(&self, r: usize) -> &'static str {
        if r == self.baseline {
            "baseline"
        } else if self.against_baseline(true).contains(&r) {
            "better"
        } else if self.against_baseline(false).contains(&r) {
            "worse"
        } else {
            "n.s."
        }
    }

    /// Cell (row i, column j) of the difference matrix: row − column, p, d; `*` when significant. A p-value of 0
    /// (no randomisation trial as extreme) reads as below one trial's share.
    fn cell(&self, i: usize, j: usize, star: &str) -> String {
        let p_of = |p: f64| match p {
            0.0 => format!("<{:.0e}", 1.0 / self.options.trials as f64),
            p => format!("={}", p_value_text(p)),
        };
        match self.pair(i, j) {
            Some(p) if i < j => format!(
                "{} (p{}{}, d={})",
                signed(self.runs[i].mean - self.runs[j].mean),
                p_of(p.p_adjusted),
                if p.significant { star } else { "" },
                d_text(p.effect_size)
            ),
            _ => String::new(),
        }
    }

    /// Markdown: the runs with their means, intervals and verdicts, then the pairwise difference matrix.
    pub fn to_markdown(&self) -> String {
        let mut s = format!("{}.\n\n", self.method_text());
        s.push_str("| run | mean | 95% CI | vs baseline |\n|---|---|---|---|\n");
        for (r, run) in self.runs.iter().enumerate() {
            s.push_str(&format!(
                "| {} | {} | [{}, {}] | {} |\n",
                markdown_cell(&run.name),
                num(run.mean),
                num(run.ci.0),
                num(run.ci.1),
                self.verdict(r)
            ));
        }
        let k = self.runs.len();
        s.push_str("\nDifference row − column, p-value, Cohen's d; `*`: p < α.\n\n|  |");
        for run in &self.runs[1..] {
            s.push_str(&format!(" {} |", markdown_cell(&run.name)));
        }
        s.push_str(&format!("\n|---|{}\n", "---|".repeat(k - 1)));
        for i in 0..k - 1 {
            s.push_str(&format!("| {} |", markdown_cell(&self.runs[i].name)));
            for j in 1..k {
                s.push_str(&format!(" {} |", self.cell(i, j, "*")));
            }
            s.push('\n');
        }
        s
    }

    /// LaTeX: two booktabs tables (needs `\usepackage{booktabs}`).
    pub fn to_latex(&self) -> String {
        let k = self.runs.len();
        let esc = |t: &str| latex_escape(t);
        let mut s = format!(
            "% {}\n\\begin{{table}}[t]\n\\centering\n\\caption{{{}: mean and 95\\% bootstrap interval per run.}}\n\
             \\begin{{tabular}}{{lrrl}}\n\\toprule\nRun & Mean & 95\\% CI & vs.\\ baseline \\\\\n\\midrule\n",
            self.method_text(),
            esc(&self.measure)
        );
        for (r, run) in self.runs.iter().enumerate() {
            s.push_str(&format!(
                "{} & {} & [{}, {}] & {} \\\\\n",
                esc(&run.name),
                num(run.mean),
                num(run.ci.0),
                num(run.ci.1),
                self.verdict(r)
            ));
        }
        s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n\n");
        s.push_str(&format!(
            "\\begin{{table}}[t]\n\\centering\n\\caption{{{}: difference row $-$ column, p-value ({}) and Cohen's \
             $d$; $^*$: $p < {}$.}}\n\\begin{{tabular}}{{l{}}}\n\\toprule\n",
            esc(&self.measure),
            esc(self.options.test.name()),
            self.options.alpha,
            "l".repeat(k - 1)
        ));
        let head: Vec<String> = self.runs[1..].iter().map(|r| esc(&r.name)).collect();
        s.push_str(&format!(" & {} \\\\\n\\midrule\n", head.join(" & ")));
        for i in 0..k - 1 {
            let cells: Vec<String> = (1..k)
                .map(|j| esc(&self.cell(i, j, "*")).replace("\\textasteriskcentered{}", "$^*$"))
                .collect();
            s.push_str(&format!(
                "{} & {} \\\\\n",
                esc(&self.runs[i].name),
                cells.join(" & ")
            ));
        }
        s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
        s
    }

    /// JSON: settings, runs (mean, interval), pairs (difference, p-values, effect size, verdict) and the runs
    /// significantly better or worse than the baseline. Undefined numbers (an effect size of constant differences)
    /// are null.
    pub fn to_json(&self) -> serde_json::Value {
        let o = &self.options;
        let names = |v: Vec<usize>| -> Vec<&str> {
            v.into_iter().map(|r| self.runs[r].name.as_str()).collect()
        };
        serde_json::json!({
            "measure": self.measure,
            "queries": self.queries,
            "test": o.test.name(),
            "correction": match o.test {
                ManyTest::TukeyHsd => "none",
                _ => o.correction.name(),
            },
            "alpha": o.alpha,
            "trials": o.trials,
            "resamples": o.resamples,
            "seed": o.seed,
            "higher_is_better": o.higher_is_better,
            "baseline": self.runs[self.baseline].name,
            "runs": self.runs.iter().enumerate().map(|(r, run)| serde_json::json!({
                "name": run.name,
                "mean": run.mean,
                "ci95": [run.ci.0, run.ci.1],
                "vs_baseline": self.verdict(r),
            })).collect::<Vec<_>>(),
            "pairs": self.pairs.iter().map(|p| serde_json::json!({
                "a": self.runs[p.a].name,
                "b": self.runs[p.b].name,
                "difference": p.difference,
                "p_value": finite_or_null(p.p_value),
                "p_adjusted": finite_or_null(p.p_adjusted),
                "effect_size": finite_or_null(p.effect_size),
                "significant": p.significant,
            })).collect::<Vec<_>>(),
            "better_than_baseline": names(self.against_baseline(true)),
            "worse_than_baseline": names(self.against_baseline(false)),
        })
    }

    /// The comparison in `format` (JSON pretty-printed), ending in a newline.
    pub fn render(&self, format: ReportFormat) -> String {
        match format {
            ReportFormat::Markdown => self.to_markdown(),
            ReportFormat::Latex => self.to_latex(),
            ReportFormat::Json => format!("{:#}\n", self.to_json()),
        }
    }
}

/// A run label as a Markdown table cell: a `|` inside it is written `\|`, as the experiment report writes a
/// method's label, so that a label such as `bm25|rm3` stays one cell instead of splitting the row.
fn markdown_cell(label: &str) -> String {
    label.replace('|', "\\|")
}

/// Escape LaTeX's special characters in text.
fn latex_escape(t: &str) -> String {
    let mut s = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '\\' => s.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                s.push('\\');
                s.push(c);
            }
            '~' => s.push_str("\\textasciitilde{}"),
            '^' => s.push_str("\\textasciicircum{}"),
            '*' => s.push_str("\\textasteriskcentered{}"),
            '−' => s.push_str("$-$"),
            _ => s.push(c),
        }
    }
    s
}
