//! Checkpointed results: one JSON file per cell, written atomically, so a killed run resumes with nothing that
//! finished recomputed. `cargo xtask reproduce` and `ltr experiment` share this store.

use std::path::PathBuf;

use serde::{de::DeserializeOwned, Serialize};

/// A folder of cells, each computed at most once.
#[derive(Debug, Clone)]
pub struct Cells {
    dir: PathBuf,
}

/// Whether a cell was just computed or read back from an earlier run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellOrigin {
    /// Computed by this call.
    Computed,
    /// Read from the store.
    Stored,
}

impl Cells {
    /// A cell store in `dir` (created on the first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The folder of the store.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The file of `key`: the key with every character other than ASCII letters, digits, `-` and `.` made `_`.
    pub fn path(&self, key: &str) -> PathBuf {
        let name: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.dir.join(format!("{name}.json"))
    }

    /// The value of `key`, computed by `f` only when not already stored.
    pub fn get<T: Serialize + DeserializeOwned, E>(
        &self,
        key: &str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<std::io::Error>,
    {
        self.get_with_origin(key, f).map(|(v, _)| v)
    }

    /// [`Cells::get`], also saying whether the value was computed now or read back.
    pub fn get_with_origin<T: Serialize + DeserializeOwned, E>(
        &self,
        key: &str,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, CellOrigin), E>
    where
        E: From<std::io::Error>,
    {
        let path = self.path(key);
        if let Ok(text) = std::fs::read_to_string(&path) {
            if let Ok(v) = serde_json::from_str(&text) {
                return Ok((v, CellOrigin::Stored));
            }
            tracing::warn!("{}: unreadable cell, recomputing", path.display());
        }
        let v = f()?;
        let text = serde_json::to_string(&v).map_err(std::io::Error::other)?;
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", self.dir.display())))?;
        ltr_data::write_atomic(&path, |w| w.write_all(text.as_bytes()))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok((v, CellOrigin::Computed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_computed_once_and_survive_a_killed_write() {
        let dir = tempfile::tempdir().unwrap();
        let cells = Cells::new(dir.path().join("cells"));
        let mut calls = 0;
        let mut cell = |key: &str, v: f64| {
            cells
                .get::<f64, std::io::Error>(key, || {
                    calls += 1;
                    Ok(v)
                })
                .unwrap()
        };
        assert_eq!(cell("a/b c", 1.5), 1.5);
        // A finished cell is never recomputed, whatever the new closure would say.
        assert_eq!(cell("a/b c", 9.0), 1.5);
        // What a SIGKILL in the middle of a write leaves: the temporary file only (the rename never happened) —
        // it is ignored; and a cell file that is not valid JSON (written by something else) is recomputed.
        std::fs::write(dir.path().join("cells/.k.json.tmp-99999"), "{\"trunc").unwrap();
        std::fs::write(dir.path().join("cells/j.json"), "{\"trunc").unwrap();
        assert_eq!(cell("k", 2.0), 2.0);
        assert_eq!(cell("j", 3.0), 3.0);
        assert_eq!(cell("j", 4.0), 3.0);
        let _ = cell;
        assert_eq!(calls, 3);
        // Keys are sanitised into one flat file name each.
        assert!(dir.path().join("cells/a_b_c.json").is_file());
        let (v, origin) = cells
            .get_with_origin::<f64, std::io::Error>("j", || Ok(0.0))
            .unwrap();
        assert_eq!((v, origin), (3.0, CellOrigin::Stored));
    }
}
