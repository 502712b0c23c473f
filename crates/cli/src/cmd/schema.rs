//! `kindgi schema validate --schema SCHEMA.json INSTANCE.json [--mode pack|mcp]
//! [--side input|output] [--json]`: validates an instance exactly as the runtime validates a
//! tool's input or output (pack: Draft 2020-12 strict; mcp: the dialect `$schema` declares;
//! the input side fills `default`s).
//!
//! Exit 0 valid, 1 invalid, 2 the schema does not compile or a file cannot be used.
//! `--json` prints `{"compiles", "valid", "issues", "instanceAfter", "compileError"?}`.

use anyhow::Context as _;
use kindgi_schema::{CompileOptions, Issue, Mode, Side};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum SchemaCommand {
    /// Validate a JSON instance against a JSON Schema, as the runtime does.
    Validate(ValidateArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Draft 2020-12, strict (a pack tool's schemas).
    Pack,
    /// The dialect `$schema` declares, not strict (an MCP server's tool).
    Mcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    /// A tool's input: `default`s are filled in.
    Input,
    /// A tool's output: nothing is filled in.
    Output,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The JSON Schema file.
    #[arg(long, value_name = "SCHEMA.json")]
    pub schema: PathBuf,
    /// The JSON instance file.
    #[arg(value_name = "INSTANCE.json")]
    pub instance: PathBuf,
    #[arg(long, value_enum, default_value = "pack")]
    pub mode: ModeArg,
    #[arg(long, value_enum, default_value = "input")]
    pub side: SideArg,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    compiles: bool,
    valid: bool,
    issues: Vec<Issue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance_after: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compile_error: Option<String>,
}

pub fn run(command: SchemaCommand) -> anyhow::Result<ExitCode> {
    match command {
        SchemaCommand::Validate(args) => validate(args),
    }
}

fn read_json(path: &Path, what: &str) -> anyhow::Result<Value> {
    let text = std::fs::read(path)
        .with_context(|| format!("cannot read {what} file {}", path.display()))?;
    serde_json::from_slice(&text)
        .with_context(|| format!("{what} file {} is not JSON", path.display()))
}

fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let schema = read_json(&args.schema, "schema")?;
    let mut instance = read_json(&args.instance, "instance")?;
    let options = CompileOptions {
        mode: match args.mode {
            ModeArg::Pack => Mode::Pack,
            ModeArg::Mcp => Mode::Mcp,
        },
        side: match args.side {
            SideArg::Input => Side::Input,
            SideArg::Output => Side::Output,
        },
    };

    let validator = match kindgi_tools::engine::compile_tool_schema(&schema, options) {
        Ok(validator) => validator,
        Err(e) => {
            if args.json {
                let report = Report {
                    compiles: false,
                    valid: false,
                    issues: Vec::new(),
                    instance_after: None,
                    compile_error: Some(e.message.clone()),
                };
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                eprintln!(
                    "kindgi: the schema {} does not compile: {}",
                    args.schema.display(),
                    e.message
                );
            }
            return Ok(ExitCode::from(2));
        }
    };

    let issues = match validator.validate_in_place(&mut instance) {
        Ok(()) => Vec::new(),
        Err(issues) => issues.into(),
    };
    let valid = issues.is_empty();
    if args.json {
        let report = Report {
            compiles: true,
            valid,
            issues,
            instance_after: Some(instance),
            compile_error: None,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if valid {
        println!("valid    {}", args.instance.display());
    } else {
        let n = issues.len();
        println!(
            "invalid  {}  ({n} issue{})",
            args.instance.display(),
            if n == 1 { "" } else { "s" }
        );
        for issue in &issues {
            let at = if issue.instance_path().is_empty() {
                "(root)"
            } else {
                issue.instance_path()
            };
            println!(
                "    {at}: {} ({} at {})",
                issue.message(),
                issue.keyword(),
                issue.schema_path()
            );
        }
    }
    Ok(if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
