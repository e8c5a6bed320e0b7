//! `write_file`: creates or replaces a file, atomically (see [`super::write_atomic_with`]).

use super::{Answer, FileTool, Job, Written, done, refuse, write_atomic};
use crate::args::{ParamSpec, ParamType};

pub(super) fn tool() -> FileTool {
    FileTool::new(
        "write_file",
        "Create or overwrite a file.",
        vec![
            ParamSpec::new("path", ParamType::String, None, true),
            ParamSpec::new("content", ParamType::String, None, true),
        ],
        false,
        write,
    )
}

fn write(job: &Job) -> Answer {
    let shown = job.str("path");
    let content = job.str("content");
    match write_atomic(&job.path("path"), content.as_bytes()) {
        Ok(written) => done(format!(
            "Wrote {} bytes to {shown} ({}).",
            content.len(),
            match written {
                Written::Created => "new file",
                Written::Replaced => "replaced",
            }
        )),
        Err(e) => refuse(format!("{shown} was not written: {e}")),
    }
}
