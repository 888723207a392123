//! Shared harness for the fuzz targets: every reader under test takes a path, so each input is written to a
//! per-process scratch file in `/dev/shm` (memory, not disk) and the reader is pointed at it.

use std::path::PathBuf;

/// A scratch file path unique to this process, with `name` as its file name's tail.
pub fn scratch(name: &str) -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("ltr-fuzz-{}-{name}", std::process::id()))
}

/// Write `bytes` to the scratch file `name` and return its path.
pub fn write_scratch(name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch(name);
    std::fs::write(&p, bytes).expect("scratch file writable");
    p
}

/// Every error must say where: the file's name must appear in its message.
pub fn assert_names_file(message: &str, path: &std::path::Path) {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    assert!(
        message.contains(name),
        "error does not name the file {name}: {message}"
    );
}
