//! The file or folder a call touches, as consent sees it.
//!
//! A path is matched against rules only once it is resolved the way the kernel will resolve it:
//! relative to the working folder, `.` and `..` applied, every symlink of the part that exists
//! followed. So `notes/../../x` is not "in notes", `./secret.txt` and `sub/../secret.txt` are
//! `secret.txt`, and a link inside the folder that points out of it is outside.

use std::path::{Component, Path, PathBuf};

/// A call's path, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The path as rules see it: relative to the working folder when inside it (`notes/a.txt`,
    /// `.` for the folder itself), else absolute (`/etc/shadow`).
    pub shown: String,
    /// Whether it is the working folder or inside it.
    pub inside: bool,
}

impl Target {
    /// Resolves `raw` (as a model wrote it) against the working folder `cwd`.
    pub fn resolve(cwd: &Path, raw: &str) -> Self {
        // No file has a NUL in its path: such a call fails, and is never taken to be inside.
        if raw.contains('\0') {
            return Self {
                shown: raw.to_string(),
                inside: false,
            };
        }
        let root = std::fs::canonicalize(cwd).unwrap_or_else(|_| normalize(cwd));
        let path = Path::new(raw);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            cwd.join(path)
        };
        let resolved = resolve(&joined);
        match resolved.strip_prefix(&root) {
            Ok(rest) => {
                let rest = rest.to_string_lossy();
                Self {
                    shown: if rest.is_empty() {
                        ".".into()
                    } else {
                        rest.into_owned()
                    },
                    inside: true,
                }
            }
            Err(_) => Self {
                shown: resolved.to_string_lossy().into_owned(),
                inside: false,
            },
        }
    }
}

/// `path` (absolute) as the kernel would resolve it: the longest prefix that exists is
/// canonicalized (symlinks followed, `..` applied on the real folders), the rest is normalized
/// without the file system (`..` drops the previous component).
fn resolve(path: &Path) -> PathBuf {
    let components: Vec<Component<'_>> = path.components().collect();
    for cut in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..cut].iter().collect();
        if let Ok(real) = std::fs::canonicalize(&prefix) {
            let rest: PathBuf = components[cut..].iter().collect();
            return normalize(&real.join(rest));
        }
    }
    normalize(path)
}

/// `.` dropped, `..` applied to the previous component (never above the root).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_resolved_before_rules_see_them() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cwd = dir.path().join("project");
        std::fs::create_dir_all(cwd.join("notes")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(cwd.join("sub")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/etc", cwd.join("etc-link")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(cwd.join("secret.txt"), "s").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("secret.txt", cwd.join("alias"))
            .unwrap_or_else(|e| panic!("{e}"));
        let real = std::fs::canonicalize(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let outside = |name: &str| Target {
            shown: real.join(name).to_string_lossy().into_owned(),
            inside: false,
        };
        let inside = |shown: &str| Target {
            shown: shown.into(),
            inside: true,
        };
        let cases = [
            ("notes/a.txt", inside("notes/a.txt")),
            ("./secret.txt", inside("secret.txt")),
            ("sub/../secret.txt", inside("secret.txt")),
            ("nowhere/../secret.txt", inside("secret.txt")),
            ("alias", inside("secret.txt")),
            (".", inside(".")),
            ("", inside(".")),
            ("notes/../../ESCAPED.txt", outside("ESCAPED.txt")),
            ("nowhere/../../ESCAPED.txt", outside("ESCAPED.txt")),
            ("..", outside("")),
            (
                "etc-link/passwd",
                Target {
                    shown: "/etc/passwd".into(),
                    inside: false,
                },
            ),
            (
                "/etc/shadow",
                Target {
                    shown: "/etc/shadow".into(),
                    inside: false,
                },
            ),
        ];
        for (raw, want) in cases {
            let mut want = want;
            if want.shown.ends_with('/') {
                want.shown.pop();
            }
            assert_eq!(Target::resolve(&cwd, raw), want, "{raw:?}");
        }
        let abs = cwd.join("notes/x").to_string_lossy().into_owned();
        assert_eq!(Target::resolve(&cwd, &abs), inside("notes/x"));
    }
}
