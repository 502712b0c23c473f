//! `kindgi init <pack-name> --template=rust`: scaffolds a Rust pack — three tools (read-only,
//! typed, mutating with an effect), a guardrail check, an agent with approval gates and a
//! flow, the counterpart of the official CLI's `sample` template (docs/cli.md).
//!
//! The files are templates compiled into this binary (`crates/cli/templates/rust/`), with
//! the pack id, the crate name and the path of the Kindgi checkout the SDK crates come from
//! filled in (the crates are not on crates.io: `--kindgi-source` names a checkout, else the
//! one this binary was built from). The official templates (TypeScript, Python, Java, Scala)
//! are the official CLI's: `kindgi init` here says so and how to run it.

use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The templates this CLI has.
const TEMPLATES: &[&str] = &["rust"];
/// The official CLI's templates, made by it (`uvx --from kindgi-cli kindgi init`).
const OFFICIAL_TEMPLATES: &[&str] = &[
    "minimal",
    "sample",
    "woocommerce",
    "drupal",
    "python",
    "java",
    "scala",
];

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The pack id: dot-separated lowercase segments (`acme.shop`).
    pub pack_name: String,
    /// The starter: `rust` (tools, a guardrail, an agent and a flow, in Rust).
    #[arg(long, default_value = "rust")]
    pub template: String,
    /// Where to scaffold. Default: the pack name's last dot segment under the current folder.
    #[arg(long)]
    pub path: Option<PathBuf>,
    /// Write into a non-empty folder, replacing the template's files there.
    #[arg(long)]
    pub force: bool,
    /// The Kindgi checkout the pack's SDK crates come from (default: the one this binary
    /// was built from).
    #[arg(long)]
    pub kindgi_source: Option<PathBuf>,
}

/// Each template file: where it goes, and its text.
const FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../templates/rust/Cargo.toml.tmpl"),
    ),
    (
        "README.md",
        include_str!("../../templates/rust/README.md.tmpl"),
    ),
    (
        ".gitignore",
        include_str!("../../templates/rust/gitignore.tmpl"),
    ),
    (
        "src/main.rs",
        include_str!("../../templates/rust/src/main.rs.tmpl"),
    ),
    (
        "src/checks.rs",
        include_str!("../../templates/rust/src/checks.rs.tmpl"),
    ),
    (
        "src/flows.rs",
        include_str!("../../templates/rust/src/flows.rs.tmpl"),
    ),
    (
        "src/tools/mod.rs",
        include_str!("../../templates/rust/src/tools/mod.rs.tmpl"),
    ),
    (
        "src/tools/greet.rs",
        include_str!("../../templates/rust/src/tools/greet.rs.tmpl"),
    ),
    (
        "src/tools/echo.rs",
        include_str!("../../templates/rust/src/tools/echo.rs.tmpl"),
    ),
    (
        "src/tools/save_note.rs",
        include_str!("../../templates/rust/src/tools/save_note.rs.tmpl"),
    ),
];

/// Why a pack name is not a pack id, or `None`.
fn pack_name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 64 {
        return Some("it must be 1 to 64 characters".into());
    }
    for segment in name.split('.') {
        let ok = segment.starts_with(|c: char| c.is_ascii_lowercase())
            && segment
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !ok {
            return Some(format!(
                "segment {segment:?} must start with a-z and hold only a-z, 0-9 and '-'"
            ));
        }
    }
    None
}

/// The checkout this binary was built from, when it is still there.
fn built_from() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?.parent()?;
    root.join("crates/kindgi-pack/Cargo.toml")
        .is_file()
        .then(|| root.to_owned())
}

fn fill(text: &str, pack_id: &str, crate_name: &str, root: &Path) -> String {
    text.replace("__PACK_ID__", pack_id)
        .replace("__CRATE__", crate_name)
        .replace(
            "__KINDGI_CRATES__",
            &root.join("crates").display().to_string(),
        )
        .replace("__KINDGI_ROOT__", &root.display().to_string())
}

pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    if !TEMPLATES.contains(&args.template.as_str()) {
        let official = OFFICIAL_TEMPLATES.contains(&args.template.as_str());
        eprintln!(
            "kindgi init: template {:?} is not one this CLI makes; it makes {}.{}",
            args.template,
            TEMPLATES.join(", "),
            if official {
                " The official templates come from the official CLI: `uvx --from kindgi-cli kindgi init --template=…`; `kindgi dev` here runs the TypeScript and Python ones (docs/dev.md)."
            } else {
                ""
            }
        );
        return Ok(ExitCode::from(2));
    }
    if let Some(problem) = pack_name_problem(&args.pack_name) {
        eprintln!(
            "kindgi init: {:?} is not a pack id: {problem} (e.g. acme.shop)",
            args.pack_name
        );
        return Ok(ExitCode::from(2));
    }
    let root = match args.kindgi_source.clone().or_else(built_from) {
        Some(r) => {
            std::fs::canonicalize(&r).with_context(|| format!("--kindgi-source {}", r.display()))?
        }
        None => bail!(
            "the Kindgi checkout this binary was built from is gone: pass --kindgi-source=DIR (a checkout holding crates/kindgi-pack)"
        ),
    };
    if !root.join("crates/kindgi-pack/Cargo.toml").is_file() {
        bail!(
            "{} holds no crates/kindgi-pack: --kindgi-source must name a Kindgi checkout",
            root.display()
        );
    }
    let last = args.pack_name.rsplit('.').next().unwrap_or(&args.pack_name);
    let dir = args.path.clone().unwrap_or_else(|| PathBuf::from(last));
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    if occupied && !args.force {
        eprintln!(
            "kindgi init: {} is not empty; pass --force to write the template's files there",
            dir.display()
        );
        return Ok(ExitCode::from(2));
    }
    let crate_name = args.pack_name.replace('.', "-");
    for (rel, text) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, fill(text, &args.pack_name, &crate_name, &root))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!(
        "Created the Rust pack {} in {} (template rust).\n\nNext:\n  cd {}\n  kindgi dev\n  kindgi runs start --flow={}.echo-flow --input='{{\"name\":\"Ada\"}}' --dry-run",
        args.pack_name,
        dir.display(),
        dir.display(),
        args.pack_name
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_ids_are_checked() {
        assert_eq!(pack_name_problem("acme.shop"), None);
        assert_eq!(pack_name_problem("my-pack"), None);
        assert!(pack_name_problem("Acme").is_some());
        assert!(pack_name_problem("acme..shop").is_some());
        assert!(pack_name_problem("").is_some());
        assert!(pack_name_problem("9lives").is_some());
    }

    #[test]
    fn every_placeholder_is_filled() {
        for (rel, text) in FILES {
            let out = fill(text, "acme.shop", "acme-shop", Path::new("/k"));
            assert!(!out.contains("__"), "{rel} keeps a placeholder");
        }
    }
}
