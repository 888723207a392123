//! Strict hyperparameter maps: typed getters with defaults, and an error for every unknown name.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use crate::error::{LtrError, Result};

/// `name=value` hyperparameters as given on the command line, read by a learner's `from_params`.
/// Names are case-insensitive and `_` equals `-`. Every name must be read; [`Params::finish`] reports the rest.
#[derive(Debug, Default)]
pub struct Params {
    map: BTreeMap<String, String>,
    used: RefCell<BTreeSet<String>>,
}

fn norm(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('_', "-")
}

impl Params {
    /// Build from `(name, value)` pairs.
    pub fn new<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Self {
            map: pairs
                .into_iter()
                .map(|(k, v)| (norm(k.as_ref()), v.as_ref().trim().to_string()))
                .collect(),
            used: RefCell::new(BTreeSet::new()),
        }
    }
    /// The raw map (normalised names).
    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.map
    }
    /// The value of `name` parsed as `T`, or `None` if absent.
    pub fn opt<T: FromStr>(&self, name: &str) -> Result<Option<T>> {
        let key = norm(name);
        self.used.borrow_mut().insert(key.clone());
        match self.map.get(&key) {
            None => Ok(None),
            Some(v) => v.parse::<T>().map(Some).map_err(|_| {
                LtrError::param(
                    name,
                    format!(
                        "`{v}` is not a valid {}",
                        std::any::type_name::<T>()
                            .rsplit("::")
                            .next()
                            .unwrap_or("value")
                    ),
                )
            }),
        }
    }
    /// The value of `name` parsed as `T`, or `default`.
    pub fn get<T: FromStr>(&self, name: &str, default: T) -> Result<T> {
        Ok(self.opt(name)?.unwrap_or(default))
    }
    /// A float that must lie in `[lo, hi]`.
    pub fn float_in(&self, name: &str, default: f64, lo: f64, hi: f64) -> Result<f64> {
        let v: f64 = self.get(name, default)?;
        if !(lo..=hi).contains(&v) || v.is_nan() {
            return Err(LtrError::param(
                name,
                format!(
                    "{} is outside [{}, {}]",
                    compact_number(v),
                    compact_number(lo),
                    compact_number(hi)
                ),
            ));
        }
        Ok(v)
    }
    /// A whole number that must lie in `[lo, hi]`.
    pub fn int_in(&self, name: &str, default: usize, lo: usize, hi: usize) -> Result<usize> {
        let v: usize = self.get(name, default)?;
        if !(lo..=hi).contains(&v) {
            return Err(LtrError::param(
                name,
                format!("{v} is outside [{lo}, {hi}]"),
            ));
        }
        Ok(v)
    }
    /// One of a fixed set of words.
    pub fn choice(&self, name: &str, default: &str, choices: &[&str]) -> Result<String> {
        let v: String = self.get(name, default.to_string())?;
        let v = v.to_ascii_lowercase();
        if !choices.contains(&v.as_str()) {
            return Err(LtrError::param(
                name,
                format!("`{v}` is not one of {}", choices.join(", ")),
            ));
        }
        Ok(v)
    }
    /// A boolean (`true/false/1/0/yes/no`).
    pub fn flag(&self, name: &str, default: bool) -> Result<bool> {
        let v: Option<String> = self.opt(name)?;
        match v.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes" | "on") => Ok(true),
            Some("false" | "0" | "no" | "off") => Ok(false),
            Some(other) => Err(LtrError::param(
                name,
                format!("`{other}` is not a boolean (true/false)"),
            )),
        }
    }
    /// Fail if any given name was never read, listing the names that were.
    pub fn finish(&self, algorithm: &str) -> Result<()> {
        let used = self.used.borrow();
        let unknown: Vec<&String> = self.map.keys().filter(|k| !used.contains(*k)).collect();
        if let Some(u) = unknown.first() {
            let known: Vec<&str> = used.iter().map(String::as_str).collect();
            return Err(LtrError::param(
                u.as_str(),
                format!(
                    "unknown parameter for `{algorithm}`; known: {}",
                    known.join(", ")
                ),
            ));
        }
        Ok(())
    }
    /// The given names never read, in name order.
    pub fn unread(&self) -> Vec<String> {
        let used = self.used.borrow();
        self.map
            .keys()
            .filter(|k| !used.contains(*k))
            .cloned()
            .collect()
    }
    /// Every name a learner asked for so far (given or not), in name order.
    pub fn read_names(&self) -> Vec<String> {
        self.used.borrow().iter().cloned().collect()
    }
    /// The normalised values actually read (for recording in the model file).
    pub fn effective(&self) -> BTreeMap<String, String> {
        self.map.clone()
    }
}

/// A number as a person writes it in a message: plain when moderate, with an exponent when very large or small.
pub fn compact_number(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-4) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
