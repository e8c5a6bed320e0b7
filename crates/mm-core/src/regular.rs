//! Regular files only: opening a path for reading that can never block mm.
//!
//! `open()` of a FIFO waits for a writer, forever; a read of `/proc/kmsg` (a "regular" file to
//! `stat`) waits for the kernel's next message; a character device such as `/dev/zero` never
//! ends. Everything mm reads from paths a model, a folder or a session store names goes through
//! [`open`]: the file is opened with `O_NONBLOCK` (so that opening a FIFO returns at once), the
//! *opened* file is checked with `fstat` (no race with a swap between a check and the open), and
//! the flag is kept, so a pseudo-file that has nothing to read answers `EAGAIN` instead of
//! waiting. On a regular file `O_NONBLOCK` changes nothing.

use std::fs::{File, FileType, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use nix::fcntl::OFlag;

/// Opens `path` for reading if it is a regular file (a symlink is followed). Anything else is
/// an [`io::ErrorKind::InvalidInput`] error whose text names what it is (`it is a FIFO`).
pub(crate) fn open(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NONBLOCK.bits() | OFlag::O_NOCTTY.bits())
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        Ok(file)
    } else {
        Err(not_regular(kind))
    }
}

/// Reads a regular file whole, up to `max` bytes (more is an error: mm never holds an unbounded
/// file in memory).
pub(crate) fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it is larger than {}", size(max)),
        ));
    }
    Ok(bytes)
}

/// The error for a path that is not a regular file.
pub(crate) fn not_regular(kind: FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", what(kind)),
    )
}

/// What a file type is, in words: `a FIFO`, `a character device`, ….
pub(crate) fn what(kind: FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// `16 MiB`, `256 KiB`, `12 bytes`.
pub(crate) fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn fifo(dir: &Path, name: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .unwrap_or_else(|e| panic!("mkfifo: {e}"));
        path
    }

    #[test]
    fn a_fifo_is_refused_at_once_and_a_regular_file_read() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = fifo(dir.path(), "pipe");
        // Without O_NONBLOCK this open waits for a writer forever: run it on a thread.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(open(&path).map(|_| ()).map_err(|e| e.to_string()));
        });
        let answer = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("opening a FIFO blocked"));
        assert_eq!(answer, Err("it is a FIFO, not a regular file".to_string()));
        std::fs::write(dir.path().join("f"), "text").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(&dir.path().join("f"), 4).ok(), Some(b"text".to_vec()));
        let too_big = read(&dir.path().join("f"), 3).map_err(|e| e.to_string());
        assert_eq!(too_big, Err("it is larger than 3 bytes".to_string()));
        let dev = open(Path::new("/dev/null")).map_err(|e| e.to_string());
        assert_eq!(
            dev.err().as_deref(),
            Some("it is a character device, not a regular file")
        );
    }

    #[test]
    fn proc_kmsg_answers_at_once_instead_of_waiting() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: reading /proc/kmsg needs root");
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let result = open(Path::new("/proc/kmsg")).and_then(|mut f| {
                // Drain what is there; the read after the last message must not wait.
                let mut buf = vec![0; 1 << 16];
                loop {
                    if f.read(&mut buf)? == 0 {
                        return Ok(());
                    }
                }
            });
            let _ = tx.send(result.map_err(|e| e.kind()));
        });
        let answer = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("reading /proc/kmsg blocked"));
        assert!(
            matches!(
                answer,
                Err(io::ErrorKind::WouldBlock | io::ErrorKind::PermissionDenied) | Ok(())
            ),
            "{answer:?}"
        );
    }
}
