//! `cargo xtask download`: fetch (resumably), extract, verify and install a benchmark — atomically.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// One benchmark of `datasets/manifest.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    /// Short name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Official archive name.
    pub archive: String,
    /// `zip`, `rar` or `license`.
    pub format: String,
    /// Official page.
    pub page: String,
    /// Direct archive address, when established.
    pub url: Option<String>,
    /// Path of the fold folders inside the archive.
    pub root: String,
    /// Number of folds.
    pub folds: usize,
    /// SHA-256 of extracted files, relative to `root`.
    pub sha256: std::collections::BTreeMap<String, String>,
    /// License.
    pub license: String,
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

/// SHA-256 of a file, hex.
pub fn sha256_file(p: &Path) -> Result<String> {
    let mut f = File::open(p).with_context(|| p.display().to_string())?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Check a dataset folder: every fold has train/vali/test and every listed checksum matches.
pub fn verify(root: &Path, e: &Entry) -> Result<()> {
    for k in 1..=e.folds {
        for f in ["train.txt", "vali.txt", "test.txt"] {
            let p = root.join(format!("Fold{k}")).join(f);
            if !p.is_file() {
                bail!("{}: missing {}", e.name, p.display());
            }
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

/// Download `url` to `dest`, resuming a partial file with an HTTP Range request; fails on a short body.
pub fn fetch(url: &str, dest: &Path) -> Result<()> {
    let have = fs::metadata(dest).map(|m| m.len()).unwrap_or(0);
    let mut req = ureq::get(url);
    if have > 0 {
        req = req.set("Range", &format!("bytes={have}-"));
    }
    let resp = match req.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(416, _)) if have > 0 => return Ok(()), // already complete
        Err(e) => bail!("{url}: {e}"),
    };
    let resumed = resp.status() == 206;
    let len: Option<u64> = resp.header("Content-Length").and_then(|v| v.parse().ok());
    let total = len.map(|l| if resumed { l + have } else { l });
    let mut out = fs::OpenOptions::new()
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed)
        .open(dest)
        .with_context(|| dest.display().to_string())?;
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
            Err(e) => bail!(
                "{url}: connection broke after {got} bytes ({e}); rerun the same command to resume"
            ),
        };
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
        got += n as u64;
        bar.inc(n as u64);
    }
    bar.finish_and_clear();
    out.sync_all()?;
    if let Some(l) = len {
        if got < l {
            bail!(
                "{url}: truncated download ({got} of {l} bytes); rerun the same command to resume"
            );
        }
    }
    Ok(())
}

/// Extract an archive into `into`.
pub fn extract(archive: &Path, into: &Path) -> Result<()> {
    fs::create_dir_all(into)?;
    let name = archive.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".zip") {
        let f = File::open(archive)?;
        let mut z = zip::ZipArchive::new(f).map_err(|e| anyhow!("{}: not a readable zip archive ({e}); it may be truncated — delete it and download again", archive.display()))?;
        z.extract(into).map_err(|e| {
            anyhow!(
                "{}: extraction failed ({e}); the archive may be truncated or corrupt",
                archive.display()
            )
        })?;
        return Ok(());
    }
    // .rar (and anything else libarchive reads) through the system bsdtar.
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

/// Find the folder holding `Fold1` whose path ends with `root` (or any `Fold1` parent when `root` is empty).
fn locate(base: &Path, root: &str, depth: usize) -> Option<PathBuf> {
    if base.join("Fold1").is_dir()
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
        .find_map(|p| locate(&p, root, depth - 1))
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

/// Install `e` into `dir/NAME` from a local folder or archive (`from`), or from `url` (default: the manifest's).
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
    fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    let tmp = dir.join(format!(".tmp-{}-{}", e.name, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let result = (|| -> Result<PathBuf> {
        // A local folder is copied to tmp/root and used as the root as is; archives are searched for it.
        let mut copied = None;
        match (from, url.or(e.url.as_deref())) {
            (Some(src), _) if src.is_dir() => {
                // The folder itself (e.g. ../shared/datasets/MQ2008) or any parent holding the archive layout.
                let root = if src.join("Fold1").is_dir() { Some(src.to_path_buf()) } else { locate(src, &e.root, 4) };
                let root = root.ok_or_else(|| anyhow!("{}: no Fold1..Fold{} folders for {} found under it", src.display(), e.folds, e.name))?;
                copy_dir(&root, &tmp.join("root"))?;
                copied = Some(tmp.join("root"));
            }
            (Some(src), _) => extract(src, &tmp)?,
            (None, Some(u)) => {
                let partial_dir = dir.join(".partial");
                fs::create_dir_all(&partial_dir)?;
                let archive = partial_dir.join(&e.archive);
                fetch(u, &archive)?;
                extract(&archive, &tmp)?;
            }
            (None, None) => bail!(
                "{}: no direct download address is known for {}. Download it from {} (or any mirror), then run `cargo xtask download {} --from PATH/{}` (or pass --url URL)",
                e.name,
                e.archive,
                e.page,
                e.name,
                e.archive
            ),
        }
        let root = copied.or_else(|| locate(&tmp, &e.root, 5)).ok_or_else(|| {
            anyhow!(
                "{}: the archive holds no {} with Fold1..Fold{}",
                e.name,
                e.root,
                e.folds
            )
        })?;
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
            url: None,
            root: "TINY".into(),
            folds: 2,
            sha256: sums,
            license: "test".into(),
        };
        (buf.into_inner(), e)
    }

    /// Serve `body` on 127.0.0.1 for `requests` requests, honouring `Range: bytes=N-`.
    fn serve(body: Vec<u8>, requests: usize) -> (String, std::thread::JoinHandle<()>) {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}/TINY.zip", server.server_addr().to_ip().unwrap());
        let h = std::thread::spawn(move || {
            for _ in 0..requests {
                let Ok(Some(req)) = server.recv_timeout(std::time::Duration::from_secs(20)) else {
                    return;
                };
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
        (url, h)
    }

    #[test]
    fn downloads_resumes_verifies_and_installs_atomically() {
        let (zip_bytes, e) = tiny_dataset();
        let dir = tempfile::tempdir().unwrap();
        // A partial archive from an earlier, interrupted run: the download resumes from byte 100.
        fs::create_dir_all(dir.path().join(".partial")).unwrap();
        fs::write(dir.path().join(".partial/TINY.zip"), &zip_bytes[..100]).unwrap();
        let (url, h) = serve(zip_bytes.clone(), 1);
        let t = install(&e, dir.path(), None, Some(&url)).unwrap();
        h.join().unwrap();
        assert_eq!(t, dir.path().join("tiny"));
        verify(&t, &e).unwrap();
        assert_eq!(
            fs::read(dir.path().join(".partial/TINY.zip")).unwrap(),
            zip_bytes
        );
        // No temporary folder is left behind.
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|x| x.ok())
            .filter(|x| x.file_name().to_string_lossy().starts_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
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
    fn truncated_archive_is_rejected_and_nothing_is_installed() {
        let (zip_bytes, e) = tiny_dataset();
        let dir = tempfile::tempdir().unwrap();
        let (url, h) = serve(zip_bytes[..zip_bytes.len() / 2].to_vec(), 1);
        let err = install(&e, dir.path(), None, Some(&url))
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
    }

    #[test]
    fn wrong_checksum_is_rejected() {
        let (zip_bytes, mut e) = tiny_dataset();
        e.sha256.insert("Fold1/train.txt".into(), "0".repeat(64));
        let dir = tempfile::tempdir().unwrap();
        let (url, h) = serve(zip_bytes, 1);
        let err = install(&e, dir.path(), None, Some(&url))
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
    fn manifest_parses_and_knows_the_shared_sums() {
        let m = manifest().unwrap();
        let mq = m.iter().find(|e| e.name == "mq2008").unwrap();
        assert_eq!(mq.sha256.len(), 15);
        assert!(m.iter().any(|e| e.format == "license"));
    }
}
