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
    let m: Manifest = serde_json::from_str(include_str!("../../datasets/manifest.json"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn tiny_dataset() -> (Vec<u8>, Entry) {
        let mut buf = Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default();
        let mut sums = std::collections::BTreeMap::new();
        for k in 1..=2 {
            for f in ["train.txt", "vali.txt", "test.txt"] {
                let body = format!("{} qid:{k} 1:0.5 2:0.25 #docid = D{k}{f}\n0 qid:{k} 1:0.1 2:0.75 #docid = E{k}\n", k % 2);
                z.start_file(format!("TINY/Fold{k}/{f}"), opts).unwrap();
                z.write_all(body.as_bytes()).unwrap();
                sums.insert(
                    format!("Fold{k}/{f}"),
                    format!("{:x}", Sha256::digest(body.as_bytes())),
                );
            }
        }
        z.finish().unwrap();
        let e = Entry {
            name: "tiny".into(),
            title: "tiny".into(),
            archive: "TINY.zip".into(),
            format: "zip".into(),
            page: "http://127.0.0.1/".into(),
            sources: Vec::new(),
            archive_sha256: None,
            archive_md5: None,
            root: "TINY".into(),
            folds: 2,
            files: Vec::new(),
            sha256: sums,
            license: "test".into(),
        };
        (buf.into_inner(), e)
    }

    /// Serve `body` on 127.0.0.1 for `requests` requests, honouring `Range: bytes=N-`. The path `/missing` answers
    /// 404 and `/page` a web page, as retired addresses do.
    fn serve(body: Vec<u8>, requests: usize) -> (String, std::thread::JoinHandle<()>) {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let base = format!("http://{}", server.server_addr().to_ip().unwrap());
        let h = std::thread::spawn(move || {
            for _ in 0..requests {
                let Ok(Some(req)) = server.recv_timeout(std::time::Duration::from_secs(20)) else {
                    return;
                };
                if req.url() == "/missing" {
                    let _ = req.respond(tiny_http::Response::empty(404));
                    continue;
                }
                if req.url() == "/page" {
                    let html =
                        tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8")
                            .unwrap();
                    let _ = req.respond(
                        tiny_http::Response::from_string("<html>moved</html>").with_header(html),
                    );
                    continue;
                }
                let start = req
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Range"))
                    .and_then(|h| {
                        h.value
                            .as_str()
                            .strip_prefix("bytes=")?
                            .trim_end_matches('-')
                            .parse::<usize>()
                            .ok()
                    });
                let resp = match start {
                    Some(s) => tiny_http::Response::from_data(body[s.min(body.len())..].to_vec())
                        .with_status_code(206),
                    None => tiny_http::Response::from_data(body.clone()),
                };
                let _ = req.respond(resp);
            }
        });
        (base, h)
    }

    /// Sources at `base/PATH` for each path, in order.
    fn sources(base: &str, paths: &[&str]) -> Vec<Source> {
        paths
            .iter()
            .map(|p| Source {
                url: format!("{base}/{p}"),
                kind: "mirror".into(),
            })
            .collect()
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .filter_map(|x| x.ok())
            .map(|x| x.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".tmp"))
            .collect()
    }

    #[test]
    fn downloads_resumes_verifies_and_installs_atomically() {
        let (zip_bytes, e) = tiny_dataset();
        let dir = tempfile::tempdir().unwrap();
        let (base, h) = serve(zip_bytes.clone(), 1);
        let url = format!("{base}/TINY.zip");
        // A partial archive from an earlier, interrupted run of the same source: the download resumes from byte 100.
        fs::create_dir_all(dir.path().join(".partial")).unwrap();
        fs::write(dir.path().join(".partial/TINY.zip"), &zip_bytes[..100]).unwrap();
        fs::write(dir.path().join(".partial/TINY.zip.source"), &url).unwrap();
        let t = install(&e, dir.path(), None, Some(&url)).unwrap();
        h.join().unwrap();
        assert_eq!(t, dir.path().join("tiny"));
        verify(&t, &e).unwrap();
        assert_eq!(
            fs::read(dir.path().join(".partial/TINY.zip")).unwrap(),
            zip_bytes
        );
        assert!(
            leftovers(dir.path()).is_empty(),
            "no temporary folder is left behind"
        );
        // A local copy (the installed folder `tiny`, not named like the manifest root `TINY`) installs with the same
        // verification.
        let dir2 = tempfile::tempdir().unwrap();
        install(&e, dir2.path(), Some(&t), None).unwrap();
        verify(&dir2.path().join("tiny"), &e).unwrap();
        // A local copy with a corrupted file is refused.
        fs::write(t.join("Fold2/test.txt"), "0 qid:1 1:1\n").unwrap();
        let dir3 = tempfile::tempdir().unwrap();
        assert!(install(&e, dir3.path(), Some(&t), None)
            .unwrap_err()
            .to_string()
            .contains("checksum mismatch"));
    }

    #[test]
    fn a_broken_transfer_keeps_its_bytes_and_the_rerun_resumes() {
        use std::io::{BufRead, BufReader};
        let (zip_bytes, e) = tiny_dataset();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/TINY.zip", listener.local_addr().unwrap());
        let body = zip_bytes.clone();
        let server = std::thread::spawn(move || {
            let mut ranges = Vec::new();
            for round in 0..2 {
                let (mut conn, _) = listener.accept().unwrap();
                let mut range = None;
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line.trim().is_empty() {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                        range = v.trim().trim_end_matches('-').parse::<usize>().ok();
                    }
                }
                ranges.push(range);
                if round == 0 {
                    // Promise the whole archive, send 100 bytes, hang up.
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                    conn.write_all(head.as_bytes()).unwrap();
                    conn.write_all(&body[..100]).unwrap();
                } else {
                    let from = range.unwrap_or(0);
                    let head = format!(
                        "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\n\r\n",
                        body.len() - from
                    );
                    conn.write_all(head.as_bytes()).unwrap();
                    conn.write_all(&body[from..]).unwrap();
                }
            }
            ranges
        });
        let dir = tempfile::tempdir().unwrap();
        let err = format!(
            "{:#}",
            install(&e, dir.path(), None, Some(&url)).unwrap_err()
        );
        assert!(err.contains("rerun the same command to resume"), "{err}");
        assert_eq!(
            fs::read(dir.path().join(".partial/TINY.zip")).unwrap(),
            zip_bytes[..100]
        );
        assert!(!dir.path().join("tiny").exists());
        // The rerun asks for the rest only and installs.
        install(&e, dir.path(), None, Some(&url)).unwrap();
        assert_eq!(server.join().unwrap(), vec![None, Some(100)]);
        assert_eq!(
            fs::read(dir.path().join(".partial/TINY.zip")).unwrap(),
            zip_bytes
        );
    }

    #[test]
    fn a_partial_file_from_another_source_is_not_resumed() {
        let (zip_bytes, e) = tiny_dataset();
        let dir = tempfile::tempdir().unwrap();
        let (base, h) = serve(zip_bytes.clone(), 1);
        fs::create_dir_all(dir.path().join(".partial")).unwrap();
        // 100 bytes of something else, fetched from a different address.
        fs::write(dir.path().join(".partial/TINY.zip"), [0xAAu8; 100]).unwrap();
        fs::write(
            dir.path().join(".partial/TINY.zip.source"),
            "http://elsewhere.invalid/TINY.zip",
        )
        .unwrap();
        install(&e, dir.path(), None, Some(&format!("{base}/TINY.zip"))).unwrap();
        h.join().unwrap();
        assert_eq!(
            fs::read(dir.path().join(".partial/TINY.zip")).unwrap(),
            zip_bytes
        );
    }

    #[test]
    fn dead_and_moved_sources_fall_through_to_a_working_mirror() {
        let (zip_bytes, mut e) = tiny_dataset();
        e.archive_sha256 = Some(format!("{:x}", Sha256::digest(&zip_bytes)));
        let (base, h) = serve(zip_bytes, 3);
        e.sources = sources(&base, &["missing", "page", "TINY.zip"]);
        let dir = tempfile::tempdir().unwrap();
        let t = install(&e, dir.path(), None, None).unwrap();
        h.join().unwrap();
        verify(&t, &e).unwrap();
    }

    #[test]
    fn every_source_failing_names_each_reason_and_installs_nothing() {
        let (zip_bytes, mut e) = tiny_dataset();
        let (base, h) = serve(zip_bytes, 2);
        e.sources = sources(&base, &["missing", "page"]);
        let dir = tempfile::tempdir().unwrap();
        let err = format!("{:#}", install(&e, dir.path(), None, None).unwrap_err());
        h.join().unwrap();
        assert!(err.contains("HTTP 404"), "{err}");
        assert!(err.contains("web page instead of the archive"), "{err}");
        assert!(err.contains("--from"), "{err}");
        assert!(!dir.path().join("tiny").exists());
    }

    #[test]
    fn archive_checksum_mismatch_is_rejected_and_the_bad_file_removed() {
        let (zip_bytes, mut e) = tiny_dataset();
        e.archive_sha256 = Some("0".repeat(64));
        let (base, h) = serve(zip_bytes, 1);
        let dir = tempfile::tempdir().unwrap();
        let err = format!(
            "{:#}",
            install(&e, dir.path(), None, Some(&format!("{base}/TINY.zip"))).unwrap_err()
        );
        h.join().unwrap();
        assert!(err.contains("archive SHA-256 mismatch"), "{err}");
        assert!(!dir.path().join(".partial/TINY.zip").exists());
        assert!(!dir.path().join("tiny").exists());
        // An MD5 (the only sum some mirrors publish) is checked the same way, for local archives too.
        let (zip_bytes, mut e) = tiny_dataset();
        let archive = dir.path().join("TINY.zip");
        fs::write(&archive, &zip_bytes).unwrap();
        e.archive_md5 = Some("f".repeat(32));
        let err = format!(
            "{:#}",
            install(&e, dir.path(), Some(&archive), None).unwrap_err()
        );
        assert!(err.contains("archive MD5 mismatch"), "{err}");
        e.archive_md5 = Some(format!("{:x}", md5::Md5::digest(&zip_bytes)));
        install(&e, dir.path(), Some(&archive), None).unwrap();
    }

    /// A RAR 4 archive with `files` stored uncompressed (method 0x30), built per RARLAB's technote: the marker
    /// block, the archive header, one file header + data per file, the end block. Header CRCs are the low 16 bits
    /// of the CRC-32 of the header from its type byte on.
    fn stored_rar(files: &[(String, Vec<u8>)]) -> Vec<u8> {
        fn crc32(b: &[u8]) -> u32 {
            let mut c = flate2::Crc::new();
            c.update(b);
            c.sum()
        }
        fn block(out: &mut Vec<u8>, body: &[u8]) {
            // `body` starts at HEAD_TYPE; HEAD_CRC covers it.
            out.extend_from_slice(&(crc32(body) as u16).to_le_bytes());
            out.extend_from_slice(body);
        }
        let mut out = b"Rar!\x1a\x07\x00".to_vec();
        let mut main = vec![0x73];
        main.extend_from_slice(&0u16.to_le_bytes()); // flags
        main.extend_from_slice(&13u16.to_le_bytes()); // header size
        main.extend_from_slice(&[0; 6]); // reserved
        block(&mut out, &main);
        for (name, data) in files {
            let mut h = vec![0x74];
            h.extend_from_slice(&0x8000u16.to_le_bytes()); // LONG_BLOCK: data follows
            h.extend_from_slice(&(32 + name.len() as u16).to_le_bytes());
            h.extend_from_slice(&(data.len() as u32).to_le_bytes()); // packed size
            h.extend_from_slice(&(data.len() as u32).to_le_bytes()); // unpacked size
            h.push(3); // host OS: Unix
            h.extend_from_slice(&crc32(data).to_le_bytes());
            h.extend_from_slice(&((40u32 << 25) | (1 << 21) | (1 << 16)).to_le_bytes()); // 2020-01-01, DOS time
            h.push(20); // version needed: 2.0
            h.push(0x30); // method: store
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0o100644u32.to_le_bytes()); // attributes
            h.extend_from_slice(name.as_bytes());
            block(&mut out, &h);
            out.extend_from_slice(data);
        }
        let mut end = vec![0x7b];
        end.extend_from_slice(&0x4000u16.to_le_bytes());
        end.extend_from_slice(&7u16.to_le_bytes());
        block(&mut out, &end);
        out
    }

    /// The tiny dataset's files as (archive path, bytes), with the entry that describes them.
    fn tiny_files() -> (Vec<(String, Vec<u8>)>, Entry) {
        let (zip_bytes, e) = tiny_dataset();
        let mut z = zip::ZipArchive::new(Cursor::new(zip_bytes)).unwrap();
        let files = (0..z.len())
            .map(|i| {
                let mut f = z.by_index(i).unwrap();
                let mut b = Vec::new();
                f.read_to_end(&mut b).unwrap();
                (f.name().to_string(), b)
            })
            .collect();
        (files, e)
    }

    #[test]
    fn rar_archives_extract_verify_and_install() {
        let (files, mut e) = tiny_files();
        e.archive = "TINY.rar".into();
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("TINY.rar");
        let rar = stored_rar(&files);
        fs::write(&archive, &rar).unwrap();
        let t = install(&e, &dir.path().join("data"), Some(&archive), None).unwrap();
        verify(&t, &e).unwrap();
        // One flipped data byte: the file CRC no longer matches and nothing is installed.
        let mut bad = rar.clone();
        let at = bad.len() - 20;
        bad[at] ^= 0x55;
        fs::write(&archive, &bad).unwrap();
        let err = format!(
            "{:#}",
            install(&e, &dir.path().join("data2"), Some(&archive), None).unwrap_err()
        );
        assert!(
            err.contains("not a readable RAR archive (File CRC error)"),
            "{err}"
        );
        assert!(!dir.path().join("data2/tiny").exists());
        // A RAR served over HTTP goes the same way as a zip.
        let (base, h) = serve(rar, 1);
        let dir3 = tempfile::tempdir().unwrap();
        install(&e, dir3.path(), None, Some(&format!("{base}/TINY.rar"))).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn tar_gz_archives_extract_verify_and_install() {
        let (files, mut e) = tiny_files();
        e.archive = "tiny.tar.gz".into();
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("tiny.tar.gz");
        let gz = flate2::write::GzEncoder::new(
            File::create(&archive).unwrap(),
            flate2::Compression::fast(),
        );
        let mut t = tar::Builder::new(gz);
        for (name, data) in &files {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            t.append_data(&mut h, name, data.as_slice()).unwrap();
        }
        t.into_inner().unwrap().finish().unwrap();
        let t = install(&e, &dir.path().join("data"), Some(&archive), None).unwrap();
        verify(&t, &e).unwrap();
    }

    #[test]
    fn truncated_archive_is_rejected_and_nothing_is_installed() {
        let (zip_bytes, e) = tiny_dataset();
        let dir = tempfile::tempdir().unwrap();
        let (base, h) = serve(zip_bytes[..zip_bytes.len() / 2].to_vec(), 1);
        let err = install(&e, dir.path(), None, Some(&format!("{base}/TINY.zip")))
            .unwrap_err()
            .to_string();
        h.join().unwrap();
        assert!(
            err.contains("truncated") || err.contains("not a readable zip"),
            "{err}"
        );
        assert!(
            !dir.path().join("tiny").exists(),
            "a half dataset must never look installed"
        );
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn wrong_checksum_is_rejected() {
        let (zip_bytes, mut e) = tiny_dataset();
        e.sha256.insert("Fold1/train.txt".into(), "0".repeat(64));
        let dir = tempfile::tempdir().unwrap();
        let (base, h) = serve(zip_bytes, 1);
        let err = install(&e, dir.path(), None, Some(&format!("{base}/TINY.zip")))
            .unwrap_err()
            .to_string();
        h.join().unwrap();
        assert!(
            err.contains("checksum mismatch") && err.contains("Fold1/train.txt"),
            "{err}"
        );
        assert!(!dir.path().join("tiny").exists());
    }

    #[test]
    fn layouts_without_folds_install_by_their_file_list() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("istella-copy/full");
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("train.txt"), "1 qid:1 1:0.5\n").unwrap();
        fs::write(src.join("test.txt"), "0 qid:2 1:0.5\n").unwrap();
        let (_, mut e) = tiny_dataset();
        e.folds = 0;
        e.root = String::new();
        e.files = vec!["full/train.txt".into(), "full/test.txt".into()];
        e.sha256 = [(
            "full/test.txt".to_string(),
            format!("{:x}", Sha256::digest(b"0 qid:2 1:0.5\n")),
        )]
        .into();
        let t = install(
            &e,
            &dir.path().join("data"),
            Some(&dir.path().join("istella-copy")),
            None,
        )
        .unwrap();
        assert!(t.join("full/train.txt").is_file());
        fs::remove_file(src.join("train.txt")).unwrap();
        let err = install(
            &e,
            &dir.path().join("data2"),
            Some(&dir.path().join("istella-copy")),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("layout"), "{err}");
    }

    #[test]
    fn manifest_parses_and_knows_the_established_sums() {
        let m = manifest().unwrap();
        let get = |n: &str| m.iter().find(|e| e.name == n).unwrap();
        assert_eq!(get("mq2008").sha256.len(), 15);
        assert_eq!(get("ohsumed").sha256.len(), 15);
        assert_eq!(get("mslr-web10k").sha256.len(), 15);
        assert_eq!(get("mslr-web30k").sha256.len(), 15);
        assert!(get("mslr-web10k").archive_sha256.is_some());
        assert!(m.iter().any(|e| e.format == "license"));
        for e in &m {
            // Every downloadable benchmark has at least one address; every address is http(s) with a known kind.
            assert!(e.format == "license" || !e.sources.is_empty(), "{}", e.name);
            for s in &e.sources {
                assert!(
                    s.url.starts_with("http://") || s.url.starts_with("https://"),
                    "{}",
                    s.url
                );
                assert!(
                    ["official", "mirror", "historical"].contains(&s.kind.as_str()),
                    "{}",
                    s.kind
                );
            }
            for sum in e.sha256.values().chain(e.archive_sha256.iter()) {
                assert!(
                    sum.len() == 64 && sum.chars().all(|c| c.is_ascii_hexdigit()),
                    "{sum}"
                );
            }
            // LETOR folds rotate: Fold k's validation file is Fold k−1's test file (the sums must agree).
            if e.folds == 5 && e.sha256.len() == 15 {
                for k in 2..=5 {
                    assert_eq!(
                        e.sha256[&format!("Fold{k}/vali.txt")],
                        e.sha256[&format!("Fold{}/test.txt", k - 1)],
                        "{} fold {k}",
                        e.name
                    );
                }
            }
        }
    }
}
