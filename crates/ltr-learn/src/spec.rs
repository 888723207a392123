//! One definition per parameter ([`ParamSpec`]) feeds parsing ([`SpecReader`]), `ltr algorithms` and its JSON,
//! the Python classes and the docs — ripgrep's `Flag` idea: a default or a range is written once.

use ltr_core::{LtrError, Params, Result};
use serde::Serialize;

/// The values a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Allowed {
    /// One of these words.
    Choice {
        /// The words.
        values: &'static [&'static str],
    },
    /// A whole number in `[min, max]`.
    Int {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
    },
    /// A real number in `[min, max]`.
    Float {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// A positive number, or the word `default` for SVMlight's 1/mean‖x‖².
    CValue,
    /// `true` or `false` (also 1/0, yes/no, on/off).
    Bool,
    /// Free text of the form described in the doc.
    Text,
}

impl std::fmt::Display for Allowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Allowed::Choice { values } => f.write_str(&values.join("|")),
            Allowed::Int { min, max } => write!(f, "integer in [{min}, {max}]"),
            Allowed::Float { min, max } => write!(f, "number in [{min:e}, {max:e}]"),
            Allowed::CValue => f.write_str("positive number | default"),
            Allowed::Bool => f.write_str("true|false"),
            Allowed::Text => f.write_str("text"),
        }
    }
}

/// One hyperparameter of one algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ParamSpec {
    /// Name as given to `--param NAME=V`.
    pub name: &'static str,
    /// Default value as text (empty: unset; a sentence in parentheses when it depends on other settings).
    pub default: &'static str,
    /// Accepted values.
    pub allowed: Allowed,
    /// What it does.
    pub doc: &'static str,
    /// The setting under which it is read (`None`: always), e.g. `step=global` for `rate`.
    pub when: Option<&'static str>,
}

impl ParamSpec {
    /// A parameter read under every setting.
    pub const fn new(
        name: &'static str,
        default: &'static str,
        allowed: Allowed,
        doc: &'static str,
    ) -> Self {
        Self {
            name,
            default,
            allowed,
            doc,
            when: None,
        }
    }
    /// A parameter read only under `setting` (`name=value`).
    pub const fn when(mut self, setting: &'static str) -> Self {
        self.when = Some(setting);
        self
    }
}

/// Shorthands for the spec tables.
pub(crate) const fn choice(values: &'static [&'static str]) -> Allowed {
    Allowed::Choice { values }
}
pub(crate) const fn int(min: u64, max: u64) -> Allowed {
    Allowed::Int { min, max }
}
pub(crate) const fn float(min: f64, max: f64) -> Allowed {
    Allowed::Float { min, max }
}

/// Reads [`Params`] through an algorithm's specs: defaults and ranges come from the spec, so they are written once.
/// Asking for a name the specs do not list is a programming error (the registry's tests catch it).
#[derive(Debug)]
pub struct SpecReader<'a> {
    params: &'a Params,
    specs: &'static [&'static [ParamSpec]],
}

impl<'a> SpecReader<'a> {
    /// Read `params` by the spec groups of one algorithm.
    pub fn new(params: &'a Params, specs: &'static [&'static [ParamSpec]]) -> Self {
        Self { params, specs }
    }
    fn all(&self) -> impl Iterator<Item = &'static ParamSpec> {
        self.specs.iter().flat_map(|g| g.iter())
    }
    /// The underlying parameters.
    pub fn params(&self) -> &'a Params {
        self.params
    }
    fn spec(&self, name: &str) -> &'static ParamSpec {
        self.all()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("parameter `{name}` is read but has no ParamSpec"))
    }
    /// A whole number, default and range from the spec.
    pub fn int(&self, name: &str) -> Result<usize> {
        let s = self.spec(name);
        let Allowed::Int { min, max } = s.allowed else {
            panic!("`{name}` is not an integer parameter")
        };
        let default = s.default.parse().expect("integer default");
        self.params.int_in(
            name,
            default,
            min as usize,
            max.min(usize::MAX as u64) as usize,
        )
    }
    /// A real number, default and range from the spec.
    pub fn float(&self, name: &str) -> Result<f64> {
        let s = self.spec(name);
        let Allowed::Float { min, max } = s.allowed else {
            panic!("`{name}` is not a real parameter")
        };
        let default = s.default.parse().expect("real default");
        self.params.float_in(name, default, min, max)
    }
    /// A real number without a default (`None` when not given), range from the spec.
    pub fn opt_float(&self, name: &str) -> Result<Option<f64>> {
        let s = self.spec(name);
        let Allowed::Float { min, max } = s.allowed else {
            panic!("`{name}` is not a real parameter")
        };
        match self.params.opt::<f64>(name)? {
            None => Ok(None),
            Some(v) if (min..=max).contains(&v) => Ok(Some(v)),
            Some(v) => Err(LtrError::param(
                name,
                format!(
                    "{} is outside [{}, {}]",
                    ltr_core::compact_number(v),
                    ltr_core::compact_number(min),
                    ltr_core::compact_number(max)
                ),
            )),
        }
    }
    /// A whole number without a default (`None` when not given), range from the spec.
    pub fn opt_int(&self, name: &str) -> Result<Option<usize>> {
        let s = self.spec(name);
        let Allowed::Int { min, max } = s.allowed else {
            panic!("`{name}` is not an integer parameter")
        };
        match self.params.opt::<usize>(name)? {
            None => Ok(None),
            Some(v) if (min as usize..=max as usize).contains(&v) => Ok(Some(v)),
            Some(v) => Err(LtrError::param(
                name,
                format!("{v} is outside [{min}, {max}]"),
            )),
        }
    }
    /// One of the spec's words, with the spec's default.
    pub fn choice(&self, name: &str) -> Result<String> {
        let default = self.spec(name).default;
        self.choice_or(name, default)
    }
    /// One of the spec's words, with a default that depends on other settings.
    pub fn choice_or(&self, name: &str, default: &str) -> Result<String> {
        let Allowed::Choice { values } = self.spec(name).allowed else {
            panic!("`{name}` is not a choice parameter")
        };
        self.params.choice(name, default, values)
    }
    /// A boolean with the spec's default.
    pub fn flag(&self, name: &str) -> Result<bool> {
        let s = self.spec(name);
        assert_eq!(
            s.allowed,
            Allowed::Bool,
            "`{name}` is not a boolean parameter"
        );
        self.params.flag(name, s.default == "true")
    }
    /// Free text (`None` when not given).
    pub fn text(&self, name: &str) -> Result<Option<String>> {
        self.spec(name);
        self.params.opt(name)
    }
    /// Free text, the spec's default when not given.
    pub fn text_or_default(&self, name: &str) -> Result<String> {
        let default = self.spec(name).default;
        Ok(self
            .params
            .opt(name)?
            .unwrap_or_else(|| default.to_string()))
    }
    /// Every given `PREFIX-key=value` except the names in `except`, as `(key, value)` with the prefix removed
    /// (the sigmoid's `seed-KEY` parameters for its seed algorithm); they count as read.
    pub fn prefixed(&self, prefix: &str, except: &[&str]) -> Result<Vec<(String, String)>> {
        let keys: Vec<String> = self
            .params
            .as_map()
            .keys()
            .filter(|k| k.starts_with(prefix) && !except.contains(&k.as_str()))
            .cloned()
            .collect();
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v: String = self.params.opt(&k)?.unwrap_or_default();
            out.push((k[prefix.len()..].to_string(), v));
        }
        Ok(out)
    }
    /// Fail on any name given but never read, naming the algorithm and its parameters.
    pub fn finish(&self, algorithm: &str) -> Result<()> {
        let Some(name) = self.params.unread().into_iter().next() else {
            return Ok(());
        };
        Err(match self.all().find(|s| s.name == name) {
            Some(s) => LtrError::param(
                &name,
                format!(
                    "not used by `{algorithm}` with these settings{}",
                    s.when
                        .map(|w| format!(" (only with {w})"))
                        .unwrap_or_default()
                ),
            ),
            None => self.unknown(algorithm, &name),
        })
    }
    /// Fail on a given name that no spec lists — neither a parameter's name nor `PREFIX-…` under a `PREFIX-KEY`
    /// spec — without reading anything: the part of [`SpecReader::finish`]'s check that needs no data, so that a
    /// misspelt name is reported before gigabytes are read. A name a setting leaves unread passes here and is
    /// reported by `finish`.
    pub fn check_known(&self, algorithm: &str) -> Result<()> {
        let listed = |name: &str| {
            self.all().any(|s| {
                s.name == name
                    || s.name
                        .strip_suffix("KEY")
                        .is_some_and(|prefix| name.starts_with(prefix))
            })
        };
        match self.params.as_map().keys().find(|n| !listed(n)) {
            Some(name) => Err(self.unknown(algorithm, name)),
            None => Ok(()),
        }
    }
    fn unknown(&self, algorithm: &str, name: &str) -> LtrError {
        LtrError::param(
            name,
            format!(
                "unknown parameter for `{algorithm}`; known: {}",
                self.all()
                    .filter(|s| !s.name.ends_with("KEY"))
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }
}
