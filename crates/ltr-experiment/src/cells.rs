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
