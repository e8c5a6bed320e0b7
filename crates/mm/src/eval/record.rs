//! `mm eval-record PROGRAM ARGS…`: the recording wrapper an eval puts in place of each tool's
//! program. Appends `{"program", "argv"}` (one JSON line) to `$MM_EVAL_LOG`, then becomes the
//! real program with the same arguments, so the model reads its real output.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// Records and runs; returns only when the program cannot be started (exit code 127).
pub fn run(program: &OsString, args: &[OsString]) -> u8 {
    if let Some(log) = std::env::var_os("MM_EVAL_LOG").filter(|l| !l.is_empty()) {
        let name = Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let argv: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = serde_json::json!({"program": name, "argv": argv});
        // One short write with O_APPEND: lines of parallel calls do not interleave.
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "no child: the recording wrapper becomes the program (exec), in its group"
    )]
    let error = std::process::Command::new(program).args(args).exec();
    eprintln!(
        "mm eval-record: cannot run {}: {error}",
        Path::new(program).display()
    );
    127
}
