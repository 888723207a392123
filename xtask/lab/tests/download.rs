//! Tests of the downloader (`xtask_lab::download`) against servers on 127.0.0.1: resume, fallback, checksums,
//! archives.

use std::fs::{self, File};
use std::io::{Cursor, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};
use xtask_lab::download::{install, manifest, verify, Entry, Source};

fn tiny_dataset() -> (Vec<u8>, Entry) {
    let mut buf = Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default();
    let mut sums = std::collections::BTreeMap::new();
    for k in 1..=2 {
        for f in ["train.txt", "vali.txt", "test.txt"] {
            let body = format!(
                "{} qid:{k} 1:0.5 2:0.25 #docid = D{k}{f}\n0 qid:{k} 1:0.1 2:0.75 #docid = E{k}\n",
                k % 2
            );
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
    let gz =
        flate2::write::GzEncoder::new(File::create(&archive).unwrap(), flate2::Compression::fast());
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
