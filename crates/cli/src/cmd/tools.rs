//! `kindgi tools`: `check` works on files; `list`, `get`, `versions`, `get-version` (see
//! `registry`) and `register` (see `tools_remote`) talk to a running API.
//!
//! `kindgi tools check FILE... [--json] [--production]` validates tool manifests exactly as
//! `POST /v1/tools` does. Exit 0 when every manifest is valid, 1 when any is invalid (a file
//! that is not JSON is an invalid manifest, with its problem at path `""`), 2 when a file
//! cannot be read.

use anyhow::Context as _;
use kindgi_spec::validate::{ManifestCheck, Problem, validate_manifest};
use kindgi_tools::engine::ToolSchemaEngine;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

use super::tools_remote;

#[derive(Debug, clap::Subcommand)]
pub enum ToolsCommand {
    /// Validate tool manifests (JSON files) as the API does when they are registered.
    Check(CheckArgs),
    /// Register a tool manifest (FILE) on a running API.
    Register(tools_remote::RegisterArgs),
    #[command(flatten)]
    Read(super::registry::ReadCommand),
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Manifest files (JSON), one tool each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print `[{"file", "valid", "problems": [{"path", "message"}]}]` instead of text.
    #[arg(long)]
    pub json: bool,
    /// Check as a production server does: a `filesystem` code artifact is refused.
    #[arg(long)]
    pub production: bool,
}

pub fn run(command: ToolsCommand, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    match command {
        ToolsCommand::Check(args) => check(args),
        ToolsCommand::Register(args) => Ok(runtime.block_on(tools_remote::register(args))),
        ToolsCommand::Read(c) => Ok(runtime.block_on(super::registry::run("tools", c))),
    }
}

/// One file's verdict, as `--json` prints it.
#[derive(Debug, Serialize)]
struct FileReport {
    file: String,
    valid: bool,
    problems: Vec<Problem>,
    #[serde(skip)]
    tool: Option<String>,
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    // Read every file first: a file that cannot be read is a usage error, reported before
    // any verdict is printed.
    let mut texts = Vec::with_capacity(args.files.len());
    for file in &args.files {
        let text = std::fs::read(file)
            .with_context(|| format!("cannot read manifest file {}", file.display()))?;
        texts.push(text);
    }

    let engine = ToolSchemaEngine::new();
    let check = ManifestCheck {
        production: args.production,
        has_handler: None,
    };
    let reports: Vec<FileReport> = args
        .files
        .iter()
        .zip(&texts)
        .map(|(file, text)| {
            let file = file.display().to_string();
            let raw: Value = match serde_json::from_slice(text) {
                Ok(raw) => raw,
                Err(e) => {
                    return FileReport {
                        file,
                        valid: false,
                        problems: vec![Problem::new(
                            "",
                            format!("is not JSON ({e}): a manifest is one JSON object"),
                        )],
                        tool: None,
                    };
                }
            };
            match validate_manifest(&raw, &check, &engine) {
                Ok(manifest) => FileReport {
                    file,
                    valid: true,
                    problems: Vec::new(),
                    tool: Some(format!("{}@{}", manifest.id, manifest.version)),
                },
                Err(problems) => FileReport {
                    file,
                    valid: false,
                    problems,
                    tool: None,
                },
            }
        })
        .collect();

    if args.json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print_human(&reports);
    }
    let all_valid = reports.iter().all(|r| r.valid);
    Ok(if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_human(reports: &[FileReport]) {
    for report in reports {
        if report.valid {
            let tool = report.tool.as_deref().unwrap_or("");
            println!("ok       {}  ({tool})", report.file);
        } else {
            let n = report.problems.len();
            let plural = if n == 1 { "" } else { "s" };
            println!("invalid  {}  ({n} problem{plural})", report.file);
            for problem in &report.problems {
                println!("    {problem}");
            }
        }
    }
    let invalid = reports.iter().filter(|r| !r.valid).count();
    println!("{} valid, {invalid} invalid", reports.len() - invalid);
}
