//! The Rust pack SDK: declare a pack's tools (the `kindgi-tools` authoring API), guardrail
//! checks ([`Check`]), agents and flows, each under a module path, and build ONE binary with
//! two commands:
//!
//! - `index [--artifact-version V] [--published-at T] [--variant NAME] [--out PATH]` writes
//!   the pack index (1.4.0) in canonical text — byte-identical for the same pins;
//! - `serve [--index P] [--module-root D] [--host H]` runs the pack service under the
//!   process contract.
//!
//! A tool declaring `pauses: true` may make its run wait for another system ([`pause`],
//! docs/pauses.md); its index entry carries `pauses: true`.
//!
//! A module path (`src/tools/echo.rs`) plays the part a file plays for a TypeScript or
//! Python pack: the index's `modulePath` names it, and `serve` binds each index entry to the
//! handler registered under that path (and the entry's id/version). An index naming a path
//! the binary lacks fails to boot with `Missing module: <path>`.
//!
//! ```no_run
//! use kindgi_pack::sdk::Pack;
//! fn main() -> std::process::ExitCode {
//!     kindgi_pack::sdk::main(|| Pack::new("acme", "1.0.0"))
//! }
//! ```

pub mod check;
pub mod pause;

use kindgi_spec::pack_index::{IndexAgent, IndexEnv, IndexFlow, IndexTool, PackIndex};
use kindgi_tools::Tool;
use serde::Serialize;
use serde_json::{Map, Value};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::service::registry::CheckContext;
pub use check::{Check, CheckBuilder};
pub use kindgi_spec::pack_protocol::CheckResult;
pub use pause::{PausingHandler, Reply, pause, wait_ticket};

use crate::service::registry::{LoadFn, ModuleRegistry, RegisteredCheck, RegisteredTool};

/// Why a pack definition or its index cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    #[error("Check \"{id}\" is invalid: {problem}")]
    Check { id: String, problem: String },
    #[error("Tool \"{id}\" cannot be indexed: {problem}")]
    Tool { id: String, problem: String },
    #[error("The {what} registered under '{module_path}' is invalid: {problem}")]
    Entry {
        what: &'static str,
        module_path: String,
        problem: String,
    },
    #[error("The pack index cannot be written: {0}")]
    Write(String),
}

/// The entry point of a pack binary: takes the service token out of the environment, then
/// builds the pack with `build` and runs the command line (`index` / `serve`). Prefer it to
/// [`Pack::main`]: the code that defines the pack's tools then never sees the token either.
/// Call it from a plain `fn main` (no async runtime, no threads started yet).
pub fn main(build: impl FnOnce() -> Pack) -> ExitCode {
    crate::service::process::stash_token();
    build().main()
}

/// The wire `ctx` of the tool call the current handler runs for — every field as sent,
/// `config`, `settings` and unknown ones included. `None` outside a pack service call.
pub fn call_context() -> Option<Arc<Map<String, Value>>> {
    crate::service::call::CALL_CONTEXT.try_with(Arc::clone).ok()
}

/// A tool registered under a module path.
#[derive(Clone)]
pub struct PackTool {
    module_path: String,
    tool: Tool,
    load: Option<LoadFn>,
    variants: Vec<String>,
}

impl std::fmt::Debug for PackTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackTool")
            .field("module_path", &self.module_path)
            .field("tool", &self.tool.id())
            .finish_non_exhaustive()
    }
}

impl PackTool {
    pub fn new(module_path: impl Into<String>, tool: Tool) -> Self {
        Self {
            module_path: module_path.into(),
            tool,
            load: None,
            variants: Vec::new(),
        }
    }

    /// A fallible step run once before the service listens (the analogue of importing the
    /// module); an `Err` refuses to boot with `<tool id>: <message>`.
    pub fn load<F>(mut self, load: F) -> Self
    where
        F: Fn() -> Result<(), String> + Send + Sync + 'static,
    {
        self.load = Some(Arc::new(load));
        self
    }

    /// Lists the tool only in the named index variant (`index --variant NAME`), not in the
    /// base index. `serve` binds it whichever index names it.
    pub fn only_in_variant(mut self, variant: impl Into<String>) -> Self {
        self.variants.push(variant.into());
        self
    }
}

/// A check registered under a module path.
#[derive(Clone, Debug)]
pub struct PackCheck {
    module_path: String,
    check: Check,
    variants: Vec<String>,
}

impl PackCheck {
    pub fn new(module_path: impl Into<String>, check: Check) -> Self {
        Self {
            module_path: module_path.into(),
            check,
            variants: Vec::new(),
        }
    }

    /// Lists the check only in the named index variant.
    pub fn only_in_variant(mut self, variant: impl Into<String>) -> Self {
        self.variants.push(variant.into());
        self
    }
}

/// A pack: what it contains and how it is indexed and served.
#[derive(Debug, Clone)]
pub struct Pack {
    pack_id: String,
    pack_version: String,
    artifact_version: Option<String>,
    published_at: Option<String>,
    tools: Vec<PackTool>,
    checks: Vec<PackCheck>,
    agents: Vec<(String, Result<Value, String>)>,
    flows: Vec<(String, Result<Value, String>)>,
    env: Option<IndexEnv>,
}

fn listed(variants: &[String], variant: Option<&str>) -> bool {
    variants.is_empty() || variant.is_some_and(|v| variants.iter().any(|x| x == v))
}

impl Pack {
    pub fn new(pack_id: impl Into<String>, pack_version: impl Into<String>) -> Self {
        Self {
            pack_id: pack_id.into(),
            pack_version: pack_version.into(),
            artifact_version: None,
            published_at: None,
            tools: Vec::new(),
            checks: Vec::new(),
            agents: Vec::new(),
            flows: Vec::new(),
            env: None,
        }
    }

    /// Default pins for `index` (the command's flags override them).
    pub fn pins(
        mut self,
        artifact_version: impl Into<String>,
        published_at: impl Into<String>,
    ) -> Self {
        self.artifact_version = Some(artifact_version.into());
        self.published_at = Some(published_at.into());
        self
    }

    /// Registers a tool under a module path.
    pub fn tool(self, module_path: impl Into<String>, tool: Tool) -> Self {
        self.add_tool(PackTool::new(module_path, tool))
    }

    pub fn add_tool(mut self, tool: PackTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers a check under a module path.
    pub fn check(self, module_path: impl Into<String>, check: Check) -> Self {
        self.add_check(PackCheck::new(module_path, check))
    }

    pub fn add_check(mut self, check: PackCheck) -> Self {
        self.checks.push(check);
        self
    }

    /// Declares an agent (a JSON object or a `kindgi-spec` agent): `modulePath` is set to
    /// `module_path`.
    pub fn agent(mut self, module_path: impl Into<String>, agent: impl Serialize) -> Self {
        self.agents.push((
            module_path.into(),
            serde_json::to_value(agent).map_err(|e| e.to_string()),
        ));
        self
    }

    /// Declares a flow (a JSON object or a `kindgi-spec` flow); `kernelPayloadVersion`
    /// defaults to 1 and `modulePath` is set to `module_path`.
    pub fn flow(mut self, module_path: impl Into<String>, flow: impl Serialize) -> Self {
        self.flows.push((
            module_path.into(),
            serde_json::to_value(flow).map_err(|e| e.to_string()),
        ));
        self
    }

    /// Env names the pack needs (`env.required`) and may use (`env.optional`).
    pub fn env(mut self, required: &[&str], optional: &[&str]) -> Self {
        self.env = Some(IndexEnv {
            required: required.iter().map(|s| (*s).to_owned()).collect(),
            optional: optional.iter().map(|s| (*s).to_owned()).collect(),
        });
        self
    }

    /// Every module the binary has (all tools and checks, whichever variant lists them).
    pub fn registry(&self) -> ModuleRegistry {
        let mut registry = ModuleRegistry::new();
        for t in &self.tools {
            registry.add_tool(
                t.module_path.clone(),
                RegisteredTool {
                    id: t.tool.id().to_owned(),
                    version: t.tool.version().to_owned(),
                    handler: t.tool.handler().clone(),
                    load: t.load.clone(),
                },
            );
        }
        for c in &self.checks {
            registry.add_check(
                c.module_path.clone(),
                RegisteredCheck {
                    check_id: c.check.check_id().to_owned(),
                    evaluate: c.check.evaluate.clone(),
                    load: c.check.load.clone(),
                },
            );
        }
        registry
    }

    /// The index for the base (`variant: None`) or a named variant, with the given pins.
    pub fn index(
        &self,
        artifact_version: &str,
        published_at: &str,
        variant: Option<&str>,
    ) -> Result<PackIndex, SdkError> {
        let mut index = PackIndex::new(
            &self.pack_id,
            &self.pack_version,
            artifact_version,
            published_at,
        );
        for t in self.tools.iter().filter(|t| listed(&t.variants, variant)) {
            index.tools.push(index_tool(t)?);
        }
        for c in self.checks.iter().filter(|c| listed(&c.variants, variant)) {
            let mut g = c.check.guardrail.clone();
            g.check_module_path = c.module_path.clone();
            index.guardrails.push(g);
        }
        for (module_path, agent) in &self.agents {
            index
                .agents
                .push(entry::<IndexAgent>("agent", module_path, agent, false)?);
        }
        for (module_path, flow) in &self.flows {
            index
                .flows
                .push(entry::<IndexFlow>("flow", module_path, flow, true)?);
        }
        index.env = self.env.clone();
        index.sort();
        Ok(index)
    }

    /// Runs the binary's command line (`index` or `serve`). Call it from a plain `fn main`
    /// (no async runtime, no threads started yet): `serve` edits the process environment
    /// before it starts its own runtime.
    pub fn main(self) -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        self.run(&args)
    }

    /// [`Pack::main`] with explicit arguments (without the program name).
    pub fn run(self, args: &[String]) -> ExitCode {
        match args.first().map(String::as_str) {
            Some("serve") => crate::service::process::serve_process(&self.registry(), &args[1..]),
            Some("index") => self.index_command(&args[1..]),
            _ => {
                eprintln!(
                    "usage: {} index [--artifact-version V] [--published-at T] [--variant NAME] [--out PATH]\n       \
                     {} serve [--index PATH] [--module-root DIR] [--host ADDR]",
                    self.pack_id, self.pack_id
                );
                ExitCode::from(2)
            }
        }
    }

    fn index_command(&self, args: &[String]) -> ExitCode {
        let mut artifact_version = self.artifact_version.clone();
        let mut published_at = self.published_at.clone();
        let mut variant = None;
        let mut out = None;
        let mut i = 0;
        while i < args.len() {
            let flag = args[i].as_str();
            let Some(value) = args.get(i + 1).cloned() else {
                eprintln!("{flag} needs a value");
                return ExitCode::from(2);
            };
            match flag {
                "--artifact-version" => artifact_version = Some(value),
                "--published-at" => published_at = Some(value),
                "--variant" => variant = Some(value),
                "--out" => out = Some(value),
                _ => {
                    eprintln!(
                        "unknown argument {flag} (expected --artifact-version, --published-at, --variant, --out)"
                    );
                    return ExitCode::from(2);
                }
            }
            i += 2;
        }
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let published_at = published_at.unwrap_or_else(|| crate::log::format_rfc3339_ms(now_ms));
        let artifact_version = artifact_version.unwrap_or_else(|| {
            let date: String = published_at
                .chars()
                .take(10)
                .filter(char::is_ascii_digit)
                .collect();
            format!("{date}.1")
        });
        let text = self
            .index(&artifact_version, &published_at, variant.as_deref())
            .and_then(|index| {
                index
                    .to_canonical_string()
                    .map_err(|e| SdkError::Write(e.to_string()))
            });
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(1);
            }
        };
        let written = match out {
            Some(path) => {
                std::fs::write(&path, text).map_err(|e| format!("Cannot write {path}: {e}"))
            }
            None => {
                use std::io::Write;
                std::io::stdout()
                    .write_all(text.as_bytes())
                    .map_err(|e| format!("Cannot write the index: {e}"))
            }
        };
        match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(1)
            }
        }
    }
}

/// The index keys a tool entry may have (`pack-index.schema.json` `$defs/tool`).
const INDEX_TOOL_KEYS: &[&str] = &[
    "id",
    "version",
    "description",
    "input",
    "output",
    "effects",
    "needs",
    "needsSpec",
    "sandbox",
    "limits",
    "network",
    "mutating",
    "needsApprovalWhenUnattended",
    // Kindgi's extensions of the 1.4.0 index (docs/pauses.md, docs/pack-sdk.md); each
    // written only when `true`.
    "pauses",
    "resultIsOutsideData",
    "spec",
];

fn index_tool(t: &PackTool) -> Result<IndexTool, SdkError> {
    let id = t.tool.id().to_owned();
    let manifest = serde_json::to_value(t.tool.manifest()).map_err(|e| SdkError::Tool {
        id: id.clone(),
        problem: e.to_string(),
    })?;
    let Value::Object(manifest) = manifest else {
        return Err(SdkError::Tool {
            id,
            problem: "its manifest is not an object".to_owned(),
        });
    };
    let mut entry: Map<String, Value> = manifest
        .into_iter()
        .filter(|(k, _)| INDEX_TOOL_KEYS.contains(&k.as_str()))
        .filter(|(k, v)| {
            !matches!(k.as_str(), "pauses" | "resultIsOutsideData") || *v == Value::Bool(true)
        })
        .collect();
    entry.insert("modulePath".into(), Value::from(t.module_path.clone()));
    serde_json::from_value(Value::Object(entry)).map_err(|e| SdkError::Tool {
        id,
        problem: e.to_string(),
    })
}

fn entry<T: serde::de::DeserializeOwned>(
    what: &'static str,
    module_path: &str,
    value: &Result<Value, String>,
    flow: bool,
) -> Result<T, SdkError> {
    let fail = |problem: String| SdkError::Entry {
        what,
        module_path: module_path.to_owned(),
        problem,
    };
    let value = value.as_ref().map_err(|e| fail(e.clone()))?;
    let Value::Object(map) = value else {
        return Err(fail("it is not a JSON object".to_owned()));
    };
    let mut map = map.clone();
    map.insert("modulePath".into(), Value::from(module_path));
    if flow {
        map.entry("kernelPayloadVersion").or_insert(Value::from(1));
    }
    serde_json::from_value(Value::Object(map)).map_err(|e| fail(e.to_string()))
}
