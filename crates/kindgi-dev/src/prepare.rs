//! Build and index a pack: what runs before its service starts, and again on every reload.
//! Output goes to `<pack>/.kindgi/` (the index) and, for Rust, cargo's target dir.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use kindgi_spec::pack_index::PackIndex;
use tokio::process::Command;

use crate::detect::PackKind;
use crate::error::DevError;
use crate::typescript;

/// How to start a built pack's service, and what its index says.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The service command (program and arguments before the `--index …` the supervisor adds).
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The index file the service is started with.
    pub index_path: PathBuf,
    pub index: PackIndex,
    /// Where the index's module paths resolve, when not the pack folder (a TypeScript pack's
    /// build tree, crate::ts_build).
    pub module_root: Option<PathBuf>,
}

impl Prepared {
    /// The command line, for messages.
    pub fn command_line(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Where `kindgi dev` keeps its state inside the pack folder.
pub fn state_dir(pack_dir: &Path) -> PathBuf {
    pack_dir.join(".kindgi")
}

/// The last `max` lines of a command's output (what a build error needs).
fn tail(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max);
    lines[start..].join("\n")
}

async fn run(
    dir: &Path,
    program: &Path,
    args: &[String],
) -> Result<(bool, String, String), DevError> {
    let mut cmd = Command::new(program);
    // Builds and indexers run pack code (build scripts, module imports): never with the
    // runtime's own keys (crate::pack_env).
    for name in crate::pack_env::reserved_names() {
        cmd.env_remove(name);
    }
    let output = cmd
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|source| DevError::Spawn {
            command: program.display().to_string(),
            dir: dir.to_owned(),
            source,
        })?;
    Ok((
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

/// Builds (Rust) and indexes the pack in `dir`, writing `.kindgi/index.json`.
/// `release`: build a Rust pack with `cargo build --release`.
pub async fn prepare(dir: &Path, kind: &PackKind, release: bool) -> Result<Prepared, DevError> {
    let state = state_dir(dir);
    std::fs::create_dir_all(&state).map_err(|source| DevError::Io {
        what: "cannot create",
        path: state.clone(),
        source,
    })?;
    // The folder holds the dev database (run inputs, outputs, key hashes): owner only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).map_err(
            |source| DevError::Io {
                what: "cannot restrict",
                path: state.clone(),
                source,
            },
        )?;
    }
    let index_path = state.join("index.json");
    let mut module_root = None;
    let (program, args) = match kind {
        PackKind::Rust => {
            let exe = cargo_build(dir, release).await?;
            progress(&format!("indexing ({} index)", exe.display()));
            let args = vec![
                "index".to_owned(),
                "--out".to_owned(),
                index_path.display().to_string(),
            ];
            let (ok, out, err) = run(dir, &exe, &args).await?;
            if !ok {
                return Err(DevError::Index {
                    dir: dir.to_owned(),
                    command: format!("{} index", exe.display()),
                    output: tail(&format!("{out}{err}"), 40),
                });
            }
            (exe, vec!["serve".to_owned()])
        }
        PackKind::Python { python } => {
            progress(&format!(
                "indexing ({} -m kindgi.pack index)",
                python.display()
            ));
            let args = vec![
                "-m".to_owned(),
                "kindgi.pack".to_owned(),
                "index".to_owned(),
                "--pack-dir".to_owned(),
                dir.display().to_string(),
                "--output".to_owned(),
                index_path.display().to_string(),
            ];
            let (ok, out, err) = run(dir, python, &args).await?;
            if !ok {
                let mut output = tail(&format!("{out}{err}"), 40);
                output.push_str(python_hint(&err));
                return Err(DevError::Index {
                    dir: dir.to_owned(),
                    command: format!("{} -m kindgi.pack index", python.display()),
                    output,
                });
            }
            report_file_errors(&out);
            (
                python.clone(),
                vec!["-m".into(), "kindgi.pack".into(), "serve".into()],
            )
        }
        PackKind::TypeScript { node, runtime } => {
            // Parsing and writing every source file is blocking work: off the async workers.
            let (owned_dir, owned_runtime) = (dir.to_owned(), runtime.clone());
            let build =
                tokio::task::spawn_blocking(move || typescript_build(&owned_dir, &owned_runtime))
                    .await
                    .map_err(|e| DevError::Transform {
                        path: dir.to_owned(),
                        message: format!("the TypeScript build stopped: {e}"),
                    })??;
            typescript_index(&build, node, runtime, &index_path).await?;
            module_root = Some(build);
            (
                node.clone(),
                vec![typescript::service_main(runtime).display().to_string()],
            )
        }
    };
    let index = read_index(&index_path)?;
    Ok(Prepared {
        program,
        args,
        index_path,
        index,
        module_root,
    })
}

/// What to do when the Python that indexed the pack has no official SDK: a bare
/// `ModuleNotFoundError` does not say how to pick another Python (the error's command names
/// the one used).
fn python_hint(stderr: &str) -> &'static str {
    if stderr.contains("No module named 'kindgi'") || stderr.contains("No module named kindgi") {
        "\nhint: this Python has no official Kindgi SDK. Install it there (`pip install kindgi==0.1.10`), \
         or point `kindgi dev` at a Python that has it: KINDGI_PYTHON=/path/to/venv/bin/python \
         (else a .venv in the pack folder or above it is used, else python3)."
    } else {
        ""
    }
}

/// Transforms the pack's TypeScript into its build tree (crate::ts_build) and, when no
/// `node_modules` of the pack's has `@kindgi/*`, links the kindgi-cli wheel's into it.
fn typescript_build(dir: &Path, runtime: &Path) -> Result<PathBuf, DevError> {
    let build = crate::ts_build::build_dir(dir);
    progress(&format!(
        "transforming TypeScript (oxc, into {})",
        build.display()
    ));
    let built = crate::ts_build::build(dir)?;
    report_built(&built);
    if typescript::own_runtime(dir).is_none() {
        // runtime is `<node_modules>/@kindgi/handler-runtime`.
        if let Some(modules) = runtime.parent().and_then(Path::parent) {
            progress(&format!(
                "the pack has no node_modules/@kindgi: using the kindgi-cli wheel's packages in {}",
                modules.display()
            ));
            crate::ts_build::link_node_modules(dir, modules)?;
        }
    }
    Ok(build)
}

/// One progress line: how many files a TypeScript build wrote.
fn report_built(built: &crate::ts_build::Built) {
    progress(&format!(
        "built {} TypeScript files, copied {} others",
        built.transformed, built.copied
    ));
}

/// How long `node --version` may take.
const NODE_VERSION_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// Checks the Node, then runs the official TypeScript indexer (`kindgi-index --pack-dir DIR
/// --output INDEX`) on the pack's build tree `dir` (JavaScript, crate::ts_build).
async fn typescript_index(
    dir: &Path,
    node: &Path,
    runtime: &Path,
    index_path: &Path,
) -> Result<(), DevError> {
    let version_arg = ["--version".to_owned()];
    let asked = run(dir, node, &version_arg);
    // A `node` that does not answer is killed (the child is dropped) rather than waited on.
    let Ok(answer) = tokio::time::timeout(NODE_VERSION_BUDGET, asked).await else {
        return Err(DevError::BadPack {
            dir: dir.to_owned(),
            message: format!(
                "`{} --version` did not answer within {} s",
                node.display(),
                NODE_VERSION_BUDGET.as_secs()
            ),
        });
    };
    let (ok, out, err) = answer?;
    let version = typescript::NodeVersion::parse(&out).filter(|_| ok);
    let Some(version) = version else {
        return Err(DevError::BadPack {
            dir: dir.to_owned(),
            message: format!(
                "`{} --version` did not print a Node version: {}",
                node.display(),
                tail(&format!("{out}{err}"), 5)
            ),
        });
    };
    let config = typescript::config_file(dir);
    if let Some(message) = typescript::node_problem(version, config.as_deref()) {
        return Err(DevError::BadPack {
            dir: dir.to_owned(),
            message,
        });
    }
    let indexer = typescript::indexer_main(runtime);
    progress(&format!(
        "indexing (Node {version}, {} --pack-dir …)",
        indexer.display()
    ));
    let args = vec![
        indexer.display().to_string(),
        "--pack-dir".to_owned(),
        dir.display().to_string(),
        "--output".to_owned(),
        index_path.display().to_string(),
    ];
    let (ok, out, err) = run(dir, node, &args).await?;
    if !ok {
        return Err(DevError::Index {
            dir: dir.to_owned(),
            command: format!("{} {} --pack-dir …", node.display(), indexer.display()),
            output: tail(&format!("{err}{out}"), 40),
        });
    }
    report_file_errors(&out);
    Ok(())
}

/// The Python and TypeScript indexers report files they could not import in their JSON
/// summary and still succeed; show each, since the tools they define are missing from the index.
fn report_file_errors(stdout: &str) {
    let Ok(summary) = serde_json::from_str::<serde_json::Value>(stdout) else {
        return;
    };
    for e in summary["fileErrors"].as_array().into_iter().flatten() {
        let file = e["filePath"].as_str().unwrap_or("?");
        let message = e["message"].as_str().unwrap_or("");
        progress(&format!("indexer: {file} was left out: {message}"));
    }
}

/// Reads and parses a pack index.
pub fn read_index(path: &Path) -> Result<PackIndex, DevError> {
    let text = std::fs::read_to_string(path).map_err(|source| DevError::Io {
        what: "cannot read the pack index",
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| DevError::BadIndex {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// `cargo build` in `dir`; the executable of the package whose manifest is `dir/Cargo.toml`.
async fn cargo_build(dir: &Path, release: bool) -> Result<PathBuf, DevError> {
    let cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("cargo"));
    progress(&format!(
        "building ({} build, in {})",
        cargo.display(),
        dir.display()
    ));
    let manifest = dir.join("Cargo.toml");
    let mut args = vec![
        "build".to_owned(),
        "--manifest-path".to_owned(),
        manifest.display().to_string(),
        "--message-format=json-render-diagnostics".to_owned(),
    ];
    if release {
        args.push("--release".to_owned());
    }
    let (ok, out, err) = run(dir, &cargo, &args).await?;
    if !ok {
        return Err(DevError::Build {
            dir: dir.to_owned(),
            command: "cargo build".into(),
            output: tail(&err, 60),
        });
    }
    let mut exe = None;
    for line in out.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let same = msg["manifest_path"]
            .as_str()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .zip(std::fs::canonicalize(&manifest).ok())
            .is_some_and(|(a, b)| a == b);
        if let (true, Some(path)) = (same, msg["executable"].as_str()) {
            exe = Some(PathBuf::from(path));
        }
    }
    exe.ok_or_else(|| DevError::Build {
        dir: dir.to_owned(),
        command: "cargo build".into(),
        output: "the build produced no executable for this package: a Rust pack is a binary whose main calls kindgi_pack::sdk::Pack::main".into(),
    })
}

/// One progress line on stderr.
pub fn progress(what: &str) {
    eprintln!("kindgi dev: {what}");
}
