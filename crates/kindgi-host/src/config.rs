//! [`HostConfig`]: everything a host is built from — the database, where it listens, the
//! serving limits, the packs ([`PackSource`]) and MCP servers ([`McpServer`]) whose tools it
//! registers, and the model. `kindgi server` fills it from flags and a `--config FILE`
//! ([`ConfigFile`], JSON); `kindgi dev` from its pack folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kindgi_runtime::ModelProvider;
use kindgi_runtime::agent::hitl::HitlSpec;
use kindgi_tools::egress::AllowedRange;
use serde::Deserialize;

use crate::error::HostError;

/// The tenant packs and MCP servers are registered for when none is named.
pub const DEFAULT_TENANT: &str = kindgi_runtime::runtime::DEFAULT_TENANT;
/// How long a stop waits for in-flight runs to store their journals before it aborts them
/// (they are left to resume on the next start either way; see `Runtime::shutdown`).
pub const RUN_STOP_GRACE: Duration = Duration::from_secs(5);
/// The largest `--config` file read (1 MiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Where a pack's code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackSource {
    /// A deployed pack service (another host, over http or https) and the index its build
    /// wrote: the service's `/v1/info` names its tools but carries no schemas, agents or
    /// flows, so those come from `index`. The token is read from the environment variable
    /// `token_env` when the host starts; its value is never kept in the configuration.
    Remote {
        url: String,
        token_env: String,
        index: PathBuf,
        tenant: String,
    },
    /// A pack folder the host builds, indexes and supervises, as `kindgi dev` does.
    Folder {
        dir: PathBuf,
        tenant: String,
        /// Rebuild and reload when its files change.
        watch: bool,
        /// Build a Rust pack with `--release`.
        release: bool,
    },
}

impl PackSource {
    /// The tenant the pack's tools, agents and flows are registered for.
    pub fn tenant(&self) -> &str {
        match self {
            PackSource::Remote { tenant, .. } | PackSource::Folder { tenant, .. } => tenant,
        }
    }

    /// What the pack is, for messages (its URL or folder).
    pub fn label(&self) -> String {
        match self {
            PackSource::Remote { url, .. } => url.clone(),
            PackSource::Folder { dir, .. } => dir.display().to_string(),
        }
    }
}

/// An MCP server whose tools are registered (`mcp+stdio://…`, `mcp+http(s)://…`,
/// `mcp+sse(s)://…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub endpoint: String,
    pub tenant: String,
}

/// What a host is built from.
#[derive(Clone)]
pub struct HostConfig {
    /// A SQLite file path (created if missing), `sqlite:PATH`, or a `postgres://` URL.
    pub database: String,
    /// Address to listen on (port 0 picks a free one).
    pub listen: String,
    pub limits: kindgi_serve::Limits,
    pub packs: Vec<PackSource>,
    pub mcp: Vec<McpServer>,
    /// The model provider; `None` reads `KINDGI_MODEL…` (`kindgi_runtime::model::from_env`).
    pub model: Option<Arc<dyn ModelProvider>>,
    /// How a supervised pack service boots and restarts.
    pub supervisor: kindgi_dev::supervisor::SupervisorConfig,
    /// See [`RUN_STOP_GRACE`].
    pub run_stop_grace: Duration,
    /// The registries take no writes through the API (`kindgi dev`: the pack's files are
    /// the truth; `409 registry-read-only`).
    pub read_only_registry: bool,
    /// The env this host serves (`/v1/env`, `/v1/secrets`, tool calls' values).
    pub served_env: String,
    /// The key secrets are sealed with at rest; `None`: secret writes are refused with how to
    /// set one (`kindgi dev` keeps one in `.kindgi/secrets.key`).
    pub secrets_key: Option<kindgi_store::seal::SealKey>,
    /// A pack folder whose env files (`.env`, `.env.local`, `.kindgi/secrets.env`) supply
    /// the secrets the store does not hold (`kindgi dev`, and a runtime.env with
    /// `KINDGI_SECRETS_BACKEND=dotenv`; [`crate::dotenv`]).
    pub secrets_dotenv: Option<crate::dotenv::DotenvSource>,
    /// The key audit bundles are signed with (`KINDGI_EXPORT_SIGNING_KEY`); `None`: `404
    /// signing-not-configured`.
    pub export_signer: Option<std::sync::Arc<kindgi_api::export_signing::ExportSigner>>,
    /// `POST /v1/mcp/endpoints` may register `stdio` endpoints (commands run on this host).
    pub allow_stdio_mcp: bool,
    /// The addresses a tenant's definitions may make this host connect to (http tools and
    /// their redirects, MCP endpoints registered through the API). Open by default (`kindgi
    /// dev`); `kindgi server` refuses private and internal ones except `egress.allowPrivate`
    /// / `--allow-private-egress`. The packs and MCP servers configured here are not held
    /// to it.
    pub egress: kindgi_tools::egress::EgressPolicy,
    /// Per tenant name, the `hitl` floor every agent's approval gates are held to (only
    /// stricter: runtime.md §4; docs/approvals.md).
    pub tenant_hitl: BTreeMap<String, HitlSpec>,
    /// The caps on open run streams and on unwritten answer bytes ([`crate::caps`]).
    pub caps: crate::caps::Caps,
}

impl std::fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostConfig")
            .field("listen", &self.listen)
            .field("packs", &self.packs)
            .field("mcp", &self.mcp)
            .finish_non_exhaustive()
    }
}

impl HostConfig {
    /// A host over `database` listening on `listen`, with default limits and nothing
    /// registered.
    pub fn new(database: impl Into<String>, listen: impl Into<String>) -> Self {
        Self {
            database: database.into(),
            listen: listen.into(),
            limits: kindgi_serve::Limits::default(),
            packs: Vec::new(),
            mcp: Vec::new(),
            model: None,
            supervisor: kindgi_dev::supervisor::SupervisorConfig::from_env(false),
            run_stop_grace: RUN_STOP_GRACE,
            read_only_registry: false,
            served_env: kindgi_api::routes::values::DEFAULT_SERVED_ENV.to_owned(),
            secrets_key: None,
            secrets_dotenv: None,
            export_signer: None,
            allow_stdio_mcp: false,
            egress: kindgi_tools::egress::EgressPolicy::open(),
            tenant_hitl: BTreeMap::new(),
            caps: crate::caps::Caps::default(),
        }
    }
}

/// The `--config FILE` of `kindgi server` (JSON). Every field is optional; flags given on
/// the command line win over `listen` and `database`, and their packs and MCP servers come
/// after the file's. Relative paths are relative to the file's folder.
///
/// ```json
/// {"listen": "0.0.0.0:7070", "database": "postgres://…",
///  "packs": [{"url": "https://orders-pack.run.app", "tokenEnv": "ORDERS_PACK_TOKEN",
///             "index": "orders/index.json", "tenant": "acme"},
///            {"dir": "packs/billing", "watch": false}],
///  "mcp": [{"endpoint": "mcp+stdio://npx -y @modelcontextprotocol/server-everything"}],
///  "tenantHitl": {"acme": {"tools": {"acme.refund": "always_ask"}, "maxTimeoutMs": 3600000,
///                          "minReviewerRole": "senior"}},
///  "egress": {"allowPrivate": ["10.20.0.0/16"]},
///  "limits": {"maxStreamsPerKey": 16, "maxStreamsPerTenant": 64, "maxStreams": 256,
///             "bodyBudgetBytes": 268435456}}
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigFile {
    pub listen: Option<String>,
    pub database: Option<String>,
    #[serde(default)]
    pub packs: Vec<ConfigPack>,
    #[serde(default)]
    pub mcp: Vec<ConfigMcp>,
    /// Per tenant, its `hitl` policy (`{tools?, maxTimeoutMs?, minReviewerRole?}`).
    #[serde(default)]
    pub tenant_hitl: BTreeMap<String, serde_json::Value>,
    /// What a tenant's definitions may reach besides public addresses.
    #[serde(default)]
    pub egress: ConfigEgress,
    /// The caps on open run streams and unwritten answer bytes (the flags win;
    /// [`crate::caps::resolve`]).
    #[serde(default)]
    pub limits: crate::caps::ConfigLimits,
}

/// The `egress` of a [`ConfigFile`]: `allowPrivate`, CIDR ranges tenants' definitions may
/// reach although they are private or internal (as `--allow-private-egress`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigEgress {
    #[serde(default)]
    pub allow_private: Vec<String>,
}

/// One pack of a [`ConfigFile`]: `url` + `tokenEnv` + `index`, or `dir`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigPack {
    pub url: Option<String>,
    pub token_env: Option<String>,
    pub index: Option<PathBuf>,
    pub dir: Option<PathBuf>,
    pub tenant: Option<String>,
    pub watch: Option<bool>,
    pub release: Option<bool>,
}

/// One MCP server of a [`ConfigFile`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigMcp {
    pub endpoint: String,
    pub tenant: Option<String>,
}

impl ConfigFile {
    /// Reads and checks `path` (at most [`MAX_CONFIG_BYTES`]).
    pub fn read(path: &Path) -> Result<ConfigFile, HostError> {
        let bad = |message: String| HostError::Config {
            path: path.to_owned(),
            message,
        };
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(bad(format!(
                "it is {} bytes, over the {MAX_CONFIG_BYTES} byte limit",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| bad(format!("not a valid configuration: {e}")))
    }

    /// The file's packs, checked, with relative paths resolved against `base`.
    pub fn pack_sources(&self, path: &Path, base: &Path) -> Result<Vec<PackSource>, HostError> {
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_owned()
            } else {
                base.join(p)
            }
        };
        let mut out = Vec::new();
        for (i, p) in self.packs.iter().enumerate() {
            let bad = |message: String| HostError::Config {
                path: path.to_owned(),
                message: format!("packs[{i}]: {message}"),
            };
            let tenant = p.tenant.clone().unwrap_or_else(|| DEFAULT_TENANT.into());
            check_tenant(&tenant).map_err(&bad)?;
            match (&p.url, &p.dir) {
                (Some(url), None) => {
                    let token_env = p
                        .token_env
                        .clone()
                        .ok_or_else(|| bad("a pack with a `url` needs `tokenEnv` (the name of the environment variable holding its token)".into()))?;
                    let index = p.index.as_deref().map(resolve).ok_or_else(|| {
                        bad(
                            "a pack with a `url` needs `index` (the index file its build wrote)"
                                .into(),
                        )
                    })?;
                    if p.watch.is_some() || p.release.is_some() {
                        return Err(bad(
                            "`watch` and `release` apply to a pack folder (`dir`) only".into(),
                        ));
                    }
                    out.push(PackSource::Remote {
                        url: url.clone(),
                        token_env,
                        index,
                        tenant,
                    });
                }
                (None, Some(dir)) => {
                    if p.token_env.is_some() || p.index.is_some() {
                        return Err(bad(
                            "`tokenEnv` and `index` apply to a pack service (`url`) only".into(),
                        ));
                    }
                    out.push(PackSource::Folder {
                        dir: resolve(dir),
                        tenant,
                        watch: p.watch.unwrap_or(false),
                        release: p.release.unwrap_or(false),
                    });
                }
                (Some(_), Some(_)) => {
                    return Err(bad("give either `url` or `dir`, not both".into()));
                }
                (None, None) => {
                    return Err(bad(
                        "give `url` (a pack service) or `dir` (a pack folder)".into()
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The file's tenant `hitl` policies, checked: every problem of every tenant's is named.
    pub fn tenant_hitl(&self, path: &Path) -> Result<BTreeMap<String, HitlSpec>, HostError> {
        let mut out = BTreeMap::new();
        let mut problems = Vec::new();
        for (tenant, spec) in &self.tenant_hitl {
            if let Err(e) = check_tenant(tenant) {
                problems.push(format!("tenantHitl.{tenant}: {e}"));
                continue;
            }
            match HitlSpec::from_value(spec) {
                Ok(s) => {
                    out.insert(tenant.clone(), s);
                }
                Err(issues) => problems.extend(
                    issues
                        .iter()
                        .map(|i| format!("tenantHitl.{tenant}{}: {}", i.path, i.message)),
                ),
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(HostError::Config {
                path: path.to_owned(),
                message: problems.join("; "),
            })
        }
    }

    /// The file's `egress.allowPrivate` ranges, checked: every bad one is named.
    pub fn allowed_egress(&self, path: &Path) -> Result<Vec<AllowedRange>, HostError> {
        let mut out = Vec::new();
        let mut problems = Vec::new();
        for (i, text) in self.egress.allow_private.iter().enumerate() {
            match text.parse::<AllowedRange>() {
                Ok(range) => out.push(range),
                Err(e) => problems.push(format!("egress.allowPrivate[{i}]: {e}")),
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(HostError::Config {
                path: path.to_owned(),
                message: problems.join("; "),
            })
        }
    }

    /// The file's MCP servers.
    pub fn mcp_servers(&self, path: &Path) -> Result<Vec<McpServer>, HostError> {
        self.mcp
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let tenant = m.tenant.clone().unwrap_or_else(|| DEFAULT_TENANT.into());
                check_tenant(&tenant).map_err(|message| HostError::Config {
                    path: path.to_owned(),
                    message: format!("mcp[{i}]: {message}"),
                })?;
                Ok(McpServer {
                    endpoint: m.endpoint.clone(),
                    tenant,
                })
            })
            .collect()
    }
}

/// A tenant id: 1–128 characters of `A-Z a-z 0-9 - _ .`.
pub fn check_tenant(tenant: &str) -> Result<(), String> {
    let ok = !tenant.is_empty()
        && tenant.len() <= 128
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tenant {:?} is not a tenant id (1–128 characters of A-Z, a-z, 0-9, '-', '_', '.')",
            tenant.chars().take(140).collect::<String>()
        ))
    }
}

/// The variables of a pack's `.kindgi/dev/runtime.env`, as the official `kindgi dev
/// --runtime-url` writes them for "a runtime you run yourself": present when
/// `KINDGI_SEED_USER_ID` is set (`KINDGI_API_TOKEN` alone is our CLI's key variable). Read in one place ([`DevRuntimeEnv::from_vars`]); the token
/// is a secret, so `Debug` masks it.
#[derive(Clone, PartialEq, Eq)]
pub struct DevRuntimeEnv {
    /// `KINDGI_API_TOKEN`: the dev token the official CLI sends as its bearer; adopted as a
    /// tenant admin's key of [`Self::tenant`] for the person [`Self::seed_user`].
    pub token: String,
    /// `KINDGI_TENANT_ID`.
    pub tenant: String,
    /// `KINDGI_SEED_USER_ID`.
    pub seed_user: String,
    /// `KINDGI_API_HOST` (default 127.0.0.1) and `KINDGI_API_PORT`: where to listen.
    pub listen: Option<String>,
    /// `KINDGI_PACK_DIR`: the pack folder (its `.kindgi/dev/index.json` names the
    /// primitives the pack service serves).
    pub pack_dir: PathBuf,
    /// `KINDGI_PACK_SERVICE_URL`: the pack service the official dev supervises
    /// (operator-provided, so loopback is allowed).
    pub pack_service_url: String,
    /// `KINDGI_SECRETS_BACKEND=dotenv`: secrets also come from env files, in
    /// `KINDGI_SECRETS_DOTENV_DIR` (default: the pack folder), the app's files named by
    /// `KINDGI_SECRETS_DOTENV_FILES` (comma-separated; default `.env,.env.local`).
    pub dotenv_secrets: Option<crate::dotenv::DotenvSource>,
}

/// The variable holding the pack service's token (`KINDGI_PACK_SERVICE_TOKEN`): the host
/// reads it when it starts the pack ([`PackSource::Remote::token_env`]).
pub const PACK_SERVICE_TOKEN_VAR: &str = "KINDGI_PACK_SERVICE_TOKEN";

impl std::fmt::Debug for DevRuntimeEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevRuntimeEnv")
            .field("token", &"***")
            .field("tenant", &self.tenant)
            .field("seed_user", &self.seed_user)
            .field("listen", &self.listen)
            .field("pack_dir", &self.pack_dir)
            .field("pack_service_url", &self.pack_service_url)
            .field("dotenv_secrets", &self.dotenv_secrets)
            .finish()
    }
}

impl DevRuntimeEnv {
    /// Reads the contract from `var` (the process environment: `|n| std::env::var(n).ok()`).
    /// `Ok(None)` without `KINDGI_SEED_USER_ID`; every other problem names its variable.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<DevRuntimeEnv>, HostError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        // `KINDGI_SEED_USER_ID` is what marks the file: `KINDGI_API_TOKEN` alone is also the
        // variable our own CLI reads its key from, which must not change how a server starts.
        if get("KINDGI_SEED_USER_ID").is_none() {
            return Ok(None);
        }
        let need = |name: &'static str| {
            get(name).ok_or(HostError::EnvVar {
                var: name,
                message: "not set, and KINDGI_SEED_USER_ID is: start the server with every variable of the pack's .kindgi/dev/runtime.env".into(),
            })
        };
        let token = need("KINDGI_API_TOKEN")?;
        let tenant = need("KINDGI_TENANT_ID")?;
        check_tenant(&tenant).map_err(|message| HostError::EnvVar {
            var: "KINDGI_TENANT_ID",
            message,
        })?;
        let seed_user = need("KINDGI_SEED_USER_ID")?;
        let pack_dir = PathBuf::from(need("KINDGI_PACK_DIR")?);
        let pack_service_url = need("KINDGI_PACK_SERVICE_URL")?;
        if !(pack_service_url.starts_with("http://") || pack_service_url.starts_with("https://")) {
            return Err(HostError::EnvVar {
                var: "KINDGI_PACK_SERVICE_URL",
                message: format!("{pack_service_url:?} is not an http(s) URL"),
            });
        }
        need(PACK_SERVICE_TOKEN_VAR)?;
        let backend = get("KINDGI_SECRETS_BACKEND");
        if let Some(backend) = &backend
            && backend != "dotenv"
        {
            return Err(HostError::EnvVar {
                var: "KINDGI_SECRETS_BACKEND",
                message: format!("{backend:?} is not served here: only \"dotenv\""),
            });
        }
        let listen = match get("KINDGI_API_PORT") {
            Some(port) => {
                let port: u16 = port.trim().parse().map_err(|_| HostError::EnvVar {
                    var: "KINDGI_API_PORT",
                    message: format!("{port:?} is not a port number"),
                })?;
                let host = get("KINDGI_API_HOST").unwrap_or_else(|| "127.0.0.1".into());
                Some(format!("{host}:{port}"))
            }
            None => None,
        };
        let dotenv_secrets = backend.map(|_| {
            let dir =
                get("KINDGI_SECRETS_DOTENV_DIR").map_or_else(|| pack_dir.clone(), PathBuf::from);
            let mut source = crate::dotenv::DotenvSource::pack(dir);
            if let Some(files) = get("KINDGI_SECRETS_DOTENV_FILES") {
                source.local_files = files
                    .split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            source
        });
        Ok(Some(DevRuntimeEnv {
            token,
            tenant,
            seed_user,
            listen,
            pack_dir,
            pack_service_url,
            dotenv_secrets,
        }))
    }

    /// The pack service as a [`PackSource::Remote`] of the tenant, its index the one the
    /// official dev wrote in the pack folder.
    pub fn pack_source(&self) -> PackSource {
        PackSource::Remote {
            url: self.pack_service_url.clone(),
            token_env: PACK_SERVICE_TOKEN_VAR.to_owned(),
            index: self.pack_dir.join(".kindgi").join("dev").join("index.json"),
            tenant: self.tenant.clone(),
        }
    }
}

#[cfg(test)]
mod runtime_env_tests {
    use super::*;

    fn vars(extra: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let mut all: BTreeMap<String, String> = [
            ("KINDGI_SEED_USER_ID", "u1"),
            ("KINDGI_API_TOKEN", "tok"),
            ("KINDGI_TENANT_ID", "default"),
            ("KINDGI_PACK_DIR", "/packs/p"),
            ("KINDGI_PACK_SERVICE_URL", "http://127.0.0.1:9"),
            ("KINDGI_PACK_SERVICE_TOKEN", "pt"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        for (k, v) in extra {
            all.insert((*k).to_owned(), (*v).to_owned());
        }
        move |n| all.get(n).cloned()
    }

    #[test]
    fn the_dotenv_backend_reads_its_folder_and_files() {
        let env = DevRuntimeEnv::from_vars(vars(&[])).unwrap().unwrap();
        assert_eq!(env.dotenv_secrets, None, "no backend named: the store only");
        let env = DevRuntimeEnv::from_vars(vars(&[("KINDGI_SECRETS_BACKEND", "dotenv")]))
            .unwrap()
            .unwrap();
        assert_eq!(
            env.dotenv_secrets,
            Some(crate::dotenv::DotenvSource::pack(PathBuf::from("/packs/p")))
        );
        let env = DevRuntimeEnv::from_vars(vars(&[
            ("KINDGI_SECRETS_BACKEND", "dotenv"),
            ("KINDGI_SECRETS_DOTENV_DIR", "/app"),
            ("KINDGI_SECRETS_DOTENV_FILES", ".env, .env.development,"),
        ]))
        .unwrap()
        .unwrap();
        let source = env.dotenv_secrets.unwrap();
        assert_eq!(source.dir, PathBuf::from("/app"));
        assert_eq!(source.local_files, vec![".env", ".env.development"]);
        let err = DevRuntimeEnv::from_vars(vars(&[("KINDGI_SECRETS_BACKEND", "vault")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("KINDGI_SECRETS_BACKEND"), "{err}");
    }
}
