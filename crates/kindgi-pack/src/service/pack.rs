//! The pack a service serves: the index read from disk, every entry bound to its compiled-in
//! handler, and every schema compiled once (a schema that does not compile is kept as its
//! error and reported per call — it is not a boot failure).

use kindgi_schema::{CompileError, CompileOptions, Mode, Side, Validator, ValidatorCache};
use kindgi_spec::pack_index::PackIndex;
use kindgi_spec::pack_protocol::{Info, InfoTool, V2};
use kindgi_tools::Handler;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::registry::{Evaluate, ModuleRegistry};

/// A compiled schema, or why it does not compile.
pub(crate) type Compiled = Result<Arc<Validator>, CompileError>;

/// One indexed tool, bound.
pub(crate) struct ToolSlot {
    pub id: Arc<str>,
    pub version: Option<String>,
    pub handler: Handler,
    pub input: Compiled,
    pub output: Compiled,
    /// The entry declares `pauses: true`: its handler may answer `pause`.
    pub pauses: bool,
}

/// One indexed check, bound.
pub(crate) struct CheckSlot {
    pub check_id: Arc<str>,
    pub evaluate: Evaluate,
    /// `None` when the guardrail has no `configSchema`.
    pub config: Option<Compiled>,
}

/// The index file as read: parsed, with the hash of its bytes.
#[derive(Debug, Clone)]
pub struct IndexFile {
    pub index: PackIndex,
    /// `sha256:<hex>` of the file's bytes.
    pub hash: String,
}

impl IndexFile {
    /// Reads and parses the index; a problem says what is wrong in the reference's words.
    pub fn read(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("Cannot read the pack index: {}: {e}", path.display()))?;
        Self::parse(&bytes)
    }

    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| format!("Cannot read the pack index: not JSON: {e}"))?;
        match value.get("v") {
            Some(v) if v.as_f64() == Some(1.0) => {}
            Some(v) => return Err(format!("Index envelope v{v} is not v1")),
            None => return Err("Index envelope vundefined is not v1".to_owned()),
        }
        let index: PackIndex = serde_json::from_value(value)
            .map_err(|e| format!("Cannot read the pack index: {e}"))?;
        let hash = format!("sha256:{}", hex::encode(Sha256::digest(bytes)));
        Ok(Self { index, hash })
    }
}

/// `Missing module: <path>` for every module path the binary does not have (each once).
pub fn missing_modules(index: &PackIndex, registry: &ModuleRegistry) -> Vec<String> {
    let paths = index.tools.iter().map(|t| t.module_path.as_str()).chain(
        index
            .guardrails
            .iter()
            .map(|g| g.check_module_path.as_str()),
    );
    let mut seen: Vec<&str> = Vec::new();
    for path in paths {
        if !registry.has_module(path) && !seen.contains(&path) {
            seen.push(path);
        }
    }
    seen.into_iter()
        .map(|p| format!("Missing module: {p}"))
        .collect()
}

/// Runs every load step (tools first, then checks, in index order) and checks that each
/// module defines what the index says it does. One problem per failure: `<id>: <message>`.
pub fn prewarm(index: &PackIndex, registry: &ModuleRegistry) -> Vec<String> {
    let mut problems = Vec::new();
    let mut loaded: Vec<*const ()> = Vec::new();
    for t in &index.tools {
        match registry.tool(&t.module_path, &t.id, t.version()) {
            None => problems.push(format!(
                "{}: module '{}' does not define tool \"{}\"{}",
                t.id,
                t.module_path,
                t.id,
                t.version()
                    .map(|v| format!(" version {v}"))
                    .unwrap_or_default()
            )),
            Some(tool) => {
                if let Some(load) = &tool.load {
                    let key = Arc::as_ptr(load) as *const ();
                    if loaded.contains(&key) {
                        continue;
                    }
                    loaded.push(key);
                    if let Err(message) = load() {
                        problems.push(format!("{}: {message}", t.id));
                    }
                }
            }
        }
    }
    for g in &index.guardrails {
        match registry.check(&g.check_module_path, g.check_id()) {
            None => problems.push(format!(
                "{}: check module '{}' does not define check \"{}\"",
                g.id,
                g.check_module_path,
                g.check_id()
            )),
            Some(check) => {
                if let Some(load) = &check.load {
                    if let Err(message) = load() {
                        problems.push(format!("{}: {message}", g.id));
                    }
                }
            }
        }
    }
    problems
}

/// The bound pack: handlers and validators by id, the info answer precomputed.
pub(crate) struct LoadedPack {
    pub pack_id: Arc<str>,
    pub artifact_version: Arc<str>,
    /// Tool entries by id, in index order.
    pub tools: HashMap<String, Vec<Arc<ToolSlot>>>,
    pub checks: HashMap<String, Arc<CheckSlot>>,
    pub info_body: bytes::Bytes,
}

impl LoadedPack {
    /// Binds every entry (call [`missing_modules`] and [`prewarm`] first: an entry the
    /// registry lacks is skipped here) and compiles every schema once.
    pub fn bind(file: &IndexFile, registry: &ModuleRegistry, missing_env: &[String]) -> Self {
        let cache = ValidatorCache::new();
        let input_opts = CompileOptions {
            mode: Mode::Pack,
            side: Side::Input,
        };
        let output_opts = CompileOptions {
            mode: Mode::Pack,
            side: Side::Output,
        };
        let index = &file.index;
        let mut tools: HashMap<String, Vec<Arc<ToolSlot>>> = HashMap::new();
        for t in &index.tools {
            let Some(registered) = registry.tool(&t.module_path, &t.id, t.version()) else {
                continue;
            };
            let slot = ToolSlot {
                id: Arc::from(t.id.as_str()),
                version: t.version().map(str::to_owned),
                handler: registered.handler.clone(),
                input: cache.get_or_compile(&t.input, input_opts),
                output: cache.get_or_compile(&t.output, output_opts),
                pauses: t.pauses(),
            };
            tools.entry(t.id.clone()).or_default().push(Arc::new(slot));
        }
        let mut checks = HashMap::new();
        for g in &index.guardrails {
            let Some(registered) = registry.check(&g.check_module_path, g.check_id()) else {
                continue;
            };
            let slot = CheckSlot {
                check_id: Arc::from(g.check_id()),
                evaluate: registered.evaluate.clone(),
                config: g
                    .config_schema
                    .as_ref()
                    .map(|s| cache.get_or_compile(s, output_opts)),
            };
            checks
                .entry(g.check_id().to_owned())
                .or_insert_with(|| Arc::new(slot));
        }
        let info = Info {
            protocol: V2,
            pack_id: index.pack_id.clone(),
            pack_version: index.pack_version.clone(),
            artifact_version: index.artifact_version.clone(),
            index_hash: Some(file.hash.clone()),
            tools: index
                .tools
                .iter()
                .map(|t| InfoTool {
                    id: t.id.clone(),
                    version: t.version().map(str::to_owned),
                })
                .collect(),
            checks: index
                .guardrails
                .iter()
                .map(|g| g.check_id().to_owned())
                .collect(),
            missing_env: Some(missing_env.to_vec()),
        };
        let info_body = serde_json::to_vec(&info).unwrap_or_else(|_| b"{}".to_vec());
        Self {
            pack_id: Arc::from(index.pack_id.as_str()),
            artifact_version: Arc::from(index.artifact_version.as_str()),
            tools,
            checks,
            info_body: bytes::Bytes::from(info_body),
        }
    }
}
