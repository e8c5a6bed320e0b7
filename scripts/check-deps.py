#!/usr/bin/env python3
"""Dependencies that are declared and never used, and direct dependencies at two versions.

For each crate of the workspace, every `[dependencies]` entry must be named in the crate's
`src/` (`name::`, `use name`, `name!`), and every `[dev-dependencies]` entry in its tests,
benches, examples or `src/`. Every dependency of the workspace table must resolve to one version
in Cargo.lock. Exits 1 with the list when one does not hold (run by scripts/test.sh).
"""
import collections
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def rust_text(crate: pathlib.Path, folders) -> str:
    return "\n".join(
        f.read_text(errors="replace")
        for d in folders
        if (crate / d).is_dir()
        for f in (crate / d).rglob("*.rs")
    )


def used(name: str, text: str) -> bool:
    ident = re.escape(name.replace("-", "_"))
    return re.search(rf"(?<![\w:]){ident}(::|!|\s+as\b)|\buse\s+{ident}\b", text) is not None


def main() -> int:
    problems = []
    for manifest in sorted(ROOT.glob("crates/*/Cargo.toml")):
        crate = manifest.parent
        toml = tomllib.loads(manifest.read_text())
        src = rust_text(crate, ["src"])
        everything = src + rust_text(crate, ["tests", "benches", "examples"])
        for table, text in (("dependencies", src), ("dev-dependencies", everything)):
            for name, spec in toml.get(table, {}).items():
                real = spec.get("package", name) if isinstance(spec, dict) else name
                if not used(real, text):
                    problems.append(f"{manifest.relative_to(ROOT)}: [{table}] {name} is never used")
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    versions = collections.defaultdict(set)
    for package in lock["package"]:
        versions[package["name"]].add(package["version"])
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["dependencies"]
    for name in workspace:
        if len(versions[name]) > 1:
            problems.append(f"Cargo.lock: {name} at {len(versions[name])} versions: {sorted(versions[name])}")
    for problem in problems:
        print(problem)
    print(f"check-deps: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
