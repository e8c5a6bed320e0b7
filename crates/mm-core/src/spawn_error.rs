//! How a program that could not be started is worded, for the model and the user (a leaf: the
//! process runner and the sandbox helper both say it).

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A spawn failure, worded for the model and the user: which program, and why.
pub(crate) fn spawn_error(program: &OsStr, cwd: &Path, e: io::Error) -> io::Error {
    let is_path = program.as_bytes().contains(&b'/');
    let resolved = cwd.join(Path::new(program));
    let program = name(program);
    let reason = match e.kind() {
        io::ErrorKind::NotFound if !is_path => "no such program on PATH".to_string(),
        io::ErrorKind::NotFound if resolved.exists() => {
            "its interpreter (the #! line) was not found".to_string()
        }
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => {
            "permission denied (is it an executable file?)".to_string()
        }
        _ => e.to_string(),
    };
    io::Error::new(e.kind(), format!("cannot run {program}: {reason}"))
}

pub(crate) fn name(program: &OsStr) -> String {
    program.to_string_lossy().into_owned()
}
