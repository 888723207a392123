//! `cargo xtask download`: fetch (resumably, from the first working source), check, extract, verify and install a
//! benchmark — atomically.
//!
//! Sources come from `datasets/manifest.json` in order (current official address, then established mirrors, then
//! the historical official address) unless `--url` names one. A source that is unreachable, answers with an error
//! status or a web page instead of the archive, or serves an archive whose checksum differs from the manifest's is
//! skipped for the next; a transfer that breaks midway stops the run and keeps the partial file, which the next run
//! resumes from the same source. Nothing is installed until every extracted file listed in the manifest has the
//! expected SHA-256.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// One download address of an archive.
#[derive(Debug, Clone, Deserialize)]
pub struct Source {
    /// Direct archive address.
    pub url: String,
    /// `official`, `mirror` or `historical` (an official address that may have been retired).
    pub kind: String,
}

/// One benchmark of `datasets/manifest.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    /// Short name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Official archive name.
    pub archive: String,
    /// `zip`, `rar`, `tar.gz` or `license` (needs an agreement: never fetched unless `--url`/`--from` is given).
    pub format: String,
    /// Official page.
    pub page: String,
    /// Direct archive addresses, tried in order.
    #[serde(default)]
    pub sources: Vec<Source>,
    /// SHA-256 of the archive, when established.
    #[serde(default)]
    pub archive_sha256: Option<String>,
    /// MD5 of the archive, when only that is published.
    #[serde(default)]
    pub archive_md5: Option<String>,
    /// Path of the data folder inside the archive.
    pub root: String,
    /// Number of folds (`Fold1..FoldK/{train,vali,test}.txt`); 0 for other layouts, described by `files`.
    pub folds: usize,
    /// Files a complete copy holds when it has no folds, relative to `root`.
    #[serde(default)]
    pub files: Vec<String>,
    /// SHA-256 of extracted files, relative to `root`.
    pub sha256: std::collections::BTreeMap<String, String>,
    /// License.
    pub license: String,
}

impl Entry {
    /// Every file a complete copy must hold, relative to the data folder.
    pub fn required_files(&self) -> Vec<String> {
        let mut v: Vec<String> = (1..=self.folds)
            .flat_map(|k| ["train.txt", "vali.txt", "test.txt"].map(|f| format!("Fold{k}/{f}")))
            .collect();
        v.extend(self.files.iter().cloned());
        v
    }
}

#[derive(Deserialize)]
struct Manifest {
    datasets: Vec<Entry>,
}

/// The manifest compiled into xtask.
pub fn manifest() -> Result<Vec<Entry>> {
    let m: Manifest = serde_json::from_str(include_str!("../../../../datasets/manifest.json"))
        .context("datasets/manifest.json")?;
    Ok(m.datasets)
}

fn hash_file<D: Digest>(p: &Path) -> Result<String> {
    let mut f = File::open(p).with_context(|| p.display().to_string())?;
    let mut h = D::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// SHA-256 of a file, hex.
pub fn sha256_file(p: &Path) -> Result<String> {
    hash_file::<Sha256>(p)
}

/// Check an archive file against the manifest's archive checksums (when it has any).
pub fn verify_archive(archive: &Path, e: &Entry) -> Result<()> {
    if let Some(want) = &e.archive_sha256 {
        let got = sha256_file(archive)?;
        if !got.eq_ignore_ascii_case(want) {
            bail!("{}: archive SHA-256 mismatch: got {got}, expected {want} (corrupt, truncated or a different release)", archive.display());
        }
    }
    if let Some(want) = &e.archive_md5 {
        let got = hash_file::<md5::Md5>(archive)?;
        if !got.eq_ignore_ascii_case(want) {
            bail!("{}: archive MD5 mismatch: got {got}, expected {want} (corrupt, truncated or a different release)", archive.display());
        }
    }
    Ok(())
}

/// Check a dataset folder: every required file is there and every listed checksum matches.
pub fn verify(root: &Path, e: &Entry) -> Result<()> {
    for rel in e.required_files() {
        let p = root.join(&rel);
        if !p.is_file() {
            bail!("{}: missing {}", e.name, p.display());
        }
    }
    for (rel, want) in &e.sha256 {
        let p = root.join(rel);
        let got =
            sha256_file(&p).with_context(|| format!("{}: missing {}", e.name, p.display()))?;
        if &got != want {
            bail!("{}: checksum mismatch for {rel}: got {got}, expected {want} (corrupt or different release)", e.name);
        }
    }
    Ok(())
}

/// Why a download failed: the source is of no use (try another), or the transfer broke (resume it later).
#[derive(Debug)]
pub enum FetchError {
    /// Unreachable, an error status, a web page instead of the archive: the next source may work.
    Unavailable(String),
    /// The transfer started and broke; the partial file is kept for the next run to resume.
    Interrupted(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Unavailable(m) | FetchError::Interrupted(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FetchError {}

/// Download `url` to `dest`, resuming a partial file with an HTTP Range request; fails on a short body.
pub fn fetch(url: &str, dest: &Path) -> std::result::Result<(), FetchError> {
    let unavailable = |m: String| FetchError::Unavailable(format!("{url}: {m}"));
    let have = fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    let mut req = ureq::get(url);
    if have > 0 {
        req = req.set("Range", &format!("bytes={have}-"));
    }
    let resp = match req.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(416, _)) if have > 0 => return Ok(()), // already complete
        Err(ureq::Error::Status(code, r)) => {
            return Err(unavailable(format!("HTTP {code} {}", r.status_text())))
        }
        Err(ureq::Error::Transport(t)) => {
            return Err(unavailable(match t.message() {
                Some(m) => format!("{}: {m}", t.kind()),
                None => t.kind().to_string(),
            }))
        }
    };
    if resp.content_type().eq_ignore_ascii_case("text/html") {
        return Err(unavailable(
            "answered with a web page instead of the archive (the address has probably moved)"
                .into(),
        ));
    }
    let resumed = resp.status() == 206;
    let len: Option<u64> = resp.header("Content-Length").and_then(|v| v.parse().ok());
    let total = len.map(|l| if resumed { l + have } else { l });
    let io = |e: std::io::Error| FetchError::Interrupted(format!("{}: {e}", dest.display()));
    let mut out = fs::OpenOptions::new()
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed)
        .open(dest)
        .map_err(io)?;
    let bar = indicatif::ProgressBar::new(total.unwrap_or(0));
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )
        .expect("template"),
    );
    bar.set_position(if resumed { have } else { 0 });
    let mut reader = resp.into_reader();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                return Err(FetchError::Interrupted(format!(
                "{url}: connection broke after {got} bytes ({e}); rerun the same command to resume"
            )))
            }
        };
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).map_err(io)?;
        got += n as u64;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    out.sync_all().map_err(io)?;
    if let Some(l) = len {
        if got < l {
            return Err(FetchError::Interrupted(format!(
                "{url}: truncated download ({got} of {l} bytes); rerun the same command to resume"
            )));
        }
    }
    Ok(())
}

/// Extract an archive into `into`: `.zip` with the `zip` crate, `.rar` with `unrar` (rarlab's library, built from
/// source), `.tar.gz`/`.tgz`/`.tar` with `tar` + `flate2`; anything else through the system `bsdtar`.
pub fn extract(archive: &Path, into: &Path) -> Result<()> {
    fs::create_dir_all(into)?;
    let name = archive.to_string_lossy().to_ascii_lowercase();
    let corrupt = |e: &dyn std::fmt::Display| {
        anyhow!(
            "{}: extraction failed ({e}); the archive may be truncated or corrupt — delete it and download again",
            archive.display()
        )
    };
    if name.ends_with(".zip") {
        let f = File::open(archive)?;
        let mut z = zip::ZipArchive::new(f).map_err(|e| anyhow!("{}: not a readable zip archive ({e}); it may be truncated — delete it and download again", archive.display()))?;
        return z.extract(into).map_err(|e| corrupt(&e));
    }
    if name.ends_with(".rar") {
        return extract_rar(archive, into);
    }
    if name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar") {
        let f = std::io::BufReader::new(File::open(archive)?);
        let reader: Box<dyn Read> = if name.ends_with(".tar") {
            Box::new(f)
        } else {
            Box::new(flate2::read::GzDecoder::new(f))
        };
        // `unpack` refuses entries that would land outside `into`.
        return tar::Archive::new(reader)
            .unpack(into)
            .map_err(|e| corrupt(&e));
    }
    let out = std::process::Command::new("bsdtar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .output()
        .map_err(|e| anyhow!("cannot run bsdtar to extract {} ({e}); install it with `apt-get install libarchive-tools`", archive.display()))?;
    if !out.status.success() {
        bail!(
            "{}: bsdtar failed: {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Extract every file of a RAR archive under `into`, refusing paths that would leave it.
fn extract_rar(archive: &Path, into: &Path) -> Result<()> {
    let fail = |e: unrar::error::UnrarError| {
        anyhow!(
            "{}: not a readable RAR archive ({e}); it may be truncated or corrupt — delete it and download again",
            archive.display()
        )
    };
    let mut a = unrar::Archive::new(archive)
        .open_for_processing()
        .map_err(fail)?;
    while let Some(h) = a.read_header().map_err(fail)? {
        let rel = h.entry().filename.clone();
        if !rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            bail!(
                "{}: refusing the entry {} (it would be written outside the extraction folder)",
                archive.display(),
                rel.display()
            );
        }
        a = if h.entry().is_file() {
            let dest = into.join(&rel);
            if let Some(parent) = dest.parent() {
                fs::create_dir_all(parent)?;
            }
            h.extract_to(&dest).map_err(fail)?
        } else {
            h.skip().map_err(fail)?
        };
    }
    Ok(())
}

/// Find the data folder under `base`: the one whose path ends with `root` and holds the first required file.
fn locate(base: &Path, root: &str, first: &str, depth: usize) -> Option<PathBuf> {
    if base.join(first).is_file()
        && (root.is_empty() || base.ends_with(root) || base.ends_with(Path::new(root).file_name()?))
    {
        return Some(base.to_path_buf());
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(base)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .find_map(|p| locate(&p, root, first, depth - 1))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        let t = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &t)?;
        } else {
            fs::copy(e.path(), &t).with_context(|| format!("copy {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// Fetch the archive of `e` into `partial_dir` from the first source that delivers a checked archive.
///
/// A sidecar file `ARCHIVE.source` records where the partial file came from, so a resumed transfer never appends
/// one server's bytes to another's.
fn fetch_archive(e: &Entry, partial_dir: &Path, urls: &[String]) -> Result<PathBuf> {
    fs::create_dir_all(partial_dir)?;
    let archive = partial_dir.join(&e.archive);
    let sidecar = partial_dir.join(format!("{}.source", e.archive));
    // Resume from the source of an earlier partial transfer first.
    let previous = fs::read_to_string(&sidecar).ok();
    let mut order: Vec<&String> = urls
        .iter()
        .filter(|u| Some(u.as_str()) == previous.as_deref())
        .collect();
    order.extend(
        urls.iter()
            .filter(|u| Some(u.as_str()) != previous.as_deref()),
    );
    let mut failures = Vec::new();
    for url in order {
        if fs::read_to_string(&sidecar).ok().as_deref() != Some(url.as_str()) {
            let _ = fs::remove_file(&archive);
            fs::write(&sidecar, url)?;
        }
        println!("{}: fetching {url}", e.name);
        match fetch(url, &archive) {
            Ok(()) => {}
            Err(FetchError::Interrupted(m)) => bail!("{m}"),
            Err(FetchError::Unavailable(m)) => {
                eprintln!("  skipped: {m}");
                failures.push(m);
                let _ = fs::remove_file(&archive);
                let _ = fs::remove_file(&sidecar);
                continue;
            }
        }
        match verify_archive(&archive, e) {
            Ok(()) => return Ok(archive),
            Err(err) => {
                eprintln!("  rejected: {err:#}");
                failures.push(format!("{url}: {err:#}"));
                let _ = fs::remove_file(&archive);
                let _ = fs::remove_file(&sidecar);
            }
        }
    }
    bail!(
        "{}: no source delivered {}:\n  - {}\nDownload it from {} (or any mirror), then run `cargo xtask download {} --from PATH/{}` (or pass --url URL)",
        e.name,
        e.archive,
        failures.join("\n  - "),
        e.page,
        e.name,
        e.archive
    )
}

/// Install `e` into `dir/NAME` from a local folder or archive (`from`), or from `url` (default: the manifest's
/// sources, in order).
pub fn install(e: &Entry, dir: &Path, from: Option<&Path>, url: Option<&str>) -> Result<PathBuf> {
    let target = dir.join(&e.name);
    if target.is_dir() && verify(&target, e).is_ok() {
        println!(
            "{} is already installed and verified at {}",
            e.name,
            target.display()
        );
        return Ok(target);
    }
    let required = e.required_files();
    let first = required
        .first()
        .ok_or_else(|| anyhow!("{}: the manifest lists no files to install", e.name))?
        .clone();
    let urls: Vec<String> = match url {
        Some(u) => vec![u.to_string()],
        None => e.sources.iter().map(|s| s.url.clone()).collect(),
    };
    fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    let tmp = dir.join(format!(".tmp-{}-{}", e.name, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let result = (|| -> Result<PathBuf> {
        // A local folder is copied to tmp/root and used as the root as is; archives are searched for it.
        let mut copied = None;
        match from {
            Some(src) if src.is_dir() => {
                // The folder itself (e.g. ../shared/datasets/MQ2008) or any parent holding the archive layout.
                let root = if src.join(&first).is_file() { Some(src.to_path_buf()) } else { locate(src, &e.root, &first, 4) };
                let root = root.ok_or_else(|| anyhow!("{}: no {} layout ({first}, …) found under it", src.display(), e.name))?;
                copy_dir(&root, &tmp.join("root"))?;
                copied = Some(tmp.join("root"));
            }
            Some(src) => {
                verify_archive(src, e)?;
                extract(src, &tmp)?
            }
            None if urls.is_empty() => bail!(
                "{}: no direct download address is known for {}. Download it from {} (or any mirror), then run `cargo xtask download {} --from PATH/{}` (or pass --url URL)",
                e.name,
                e.archive,
                e.page,
                e.name,
                e.archive
            ),
            None => {
                let archive = fetch_archive(e, &dir.join(".partial"), &urls)?;
                if e.archive_sha256.is_none() {
                    println!(
                        "{}: archive SHA-256 {} (not in the manifest yet)",
                        e.name,
                        sha256_file(&archive)?
                    );
                }
                if let Err(err) = extract(&archive, &tmp) {
                    // An archive that cannot be read is of no use to a resumed run either.
                    let _ = fs::remove_file(&archive);
                    let _ = fs::remove_file(dir.join(".partial").join(format!("{}.source", e.archive)));
                    return Err(err);
                }
            }
        }
        let root = copied
            .or_else(|| locate(&tmp, &e.root, &first, 5))
            .ok_or_else(|| anyhow!("{}: the archive holds no {} with {first}", e.name, e.root))?;
        verify(&root, e)?;
        if target.exists() {
            fs::remove_dir_all(&target)?;
        }
        fs::rename(&root, &target).with_context(|| format!("rename into {}", target.display()))?;
        Ok(target.clone())
    })();
    let _ = fs::remove_dir_all(&tmp);
    let t = result?;
    println!("{} installed and verified at {}", e.name, t.display());
    Ok(t)
}
