//! The versioned, tenant-scoped tool registry: the [`ToolRegistry`] trait, its in-memory
//! implementation [`MemoryRegistry`], and agent-side resolution ([`resolve_agent_tool`]).
//!
//! Entries are immutable `(tenant, id, version)` manifests. Registering an existing
//! `(id, version)` again is refused (`duplicate-tool-version`), whatever the manifest, as in
//! the reference. A version can be *unregistered* (tombstoned) and *reinstated*; an
//! unregistered version is still served by its exact version ([`ToolRegistry::get_version`])
//! but never by [`ToolRegistry::get`] (latest) or by a range ([`ToolRegistry::resolve`]).
//! Ranges use npm semantics ([`crate::semver`]).
//!
//! The persistent implementation (SQLite/PostgreSQL) is `kindgi_store::tools::StoreRegistry`;
//! both pass the same behavioural tests. Records carry the manifest as canonical JSON text
//! ([`ToolRecord::manifest_json`]) so an API can send a stored manifest without re-encoding.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use kindgi_spec::ToolManifest;
use serde_json::json;

use crate::BoxFuture;
use crate::semver::{Range, Version};

#[cfg(feature = "testing")]
pub mod conformance;

/// The project a tool belongs to when the caller names none.
pub const DEFAULT_PROJECT: &str = "default";

/// One stored version of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRecord {
    pub tool_id: String,
    pub version: String,
    pub project_id: String,
    /// The manifest as compact JSON (the schema's fields only, no handler).
    pub manifest_json: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Set while the version is unregistered (tombstoned).
    pub unregistered_at: Option<i64>,
}

impl ToolRecord {
    /// Decode the manifest.
    pub fn manifest(&self) -> Result<ToolManifest, serde_json::Error> {
        serde_json::from_str(&self.manifest_json)
    }

    pub fn is_unregistered(&self) -> bool {
        self.unregistered_at.is_some()
    }
}

/// One version in a version listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionEntry {
    pub version: String,
    pub created_at: i64,
    pub unregistered_at: Option<i64>,
}

/// How to register.
#[derive(Debug, Clone, Default)]
pub struct RegisterOptions {
    /// The owning project; [`DEFAULT_PROJECT`] when `None`. All versions of an id must be
    /// published in the same project.
    pub project_id: Option<String>,
    /// Register the version already unregistered (reachable only by exact version).
    pub retired: bool,
}

/// A page request for [`ToolRegistry::list`].
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// Page size (callers clamp it; the registry takes it as given, at least 1).
    pub limit: usize,
    /// Return ids strictly after this one (the previous page's last id).
    pub after: Option<String>,
    /// Only ids containing this text.
    pub name: Option<String>,
}

/// One page of tools: the latest active version of each id, ordered by id.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    pub items: Vec<ToolRecord>,
    pub has_more: bool,
}

/// A successful range resolution.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub record: ToolRecord,
    pub resolved_version: String,
}

/// A registry outcome that is not success. `code()` and the `Display` text match the
/// reference's registry errors.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("No tool registered with id \"{id}\"")]
    ToolNotFound { id: String },
    #[error("Tool \"{id}\" has no version \"{version}\" registered")]
    VersionNotFound { id: String, version: String },
    #[error("Tool \"{id}\" has no registered version: every version is unregistered")]
    ToolGone { id: String },
    #[error("Tool \"{id}@{version}\" is already registered")]
    DuplicateVersion { id: String, version: String },
    #[error("Tool \"{id}\" belongs to another project; publish its versions there")]
    ProjectMismatch { id: String },
    #[error("Tool \"{id}\" version \"{version}\" is not a valid version: {reason}")]
    InvalidVersion {
        id: String,
        version: String,
        reason: String,
    },
    #[error("Version range \"{range}\" for tool \"{id}\" is not a valid semver range")]
    InvalidRange { id: String, range: String },
    #[error("Tool \"{id}\" has no version satisfying \"{range}\" (available: {})", available.join(", "))]
    Unresolvable {
        id: String,
        range: String,
        available: Vec<String>,
    },
    #[error("tool registry storage failed: {0}")]
    Storage(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl RegistryError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::ToolNotFound { .. } => "tool-not-found",
            RegistryError::VersionNotFound { .. } => "tool-version-not-found",
            RegistryError::ToolGone { .. } => "tool-gone",
            RegistryError::DuplicateVersion { .. } => "duplicate-tool-version",
            RegistryError::ProjectMismatch { .. } => "tool-project-mismatch",
            RegistryError::InvalidVersion { .. } => "invalid-tool-definition",
            RegistryError::InvalidRange { .. } => "invalid-version-range",
            RegistryError::Unresolvable { .. } => "tool-version-unresolvable",
            RegistryError::Storage(_) => "internal-server-error",
        }
    }

    /// The error's fields, for an error envelope's `details`.
    pub fn details(&self) -> serde_json::Value {
        match self {
            RegistryError::ToolNotFound { id }
            | RegistryError::ToolGone { id }
            | RegistryError::ProjectMismatch { id } => {
                json!({ "toolId": id })
            }
            RegistryError::VersionNotFound { id, version }
            | RegistryError::DuplicateVersion { id, version }
            | RegistryError::InvalidVersion { id, version, .. } => {
                json!({ "toolId": id, "version": version })
            }
            RegistryError::InvalidRange { id, range } => json!({ "toolId": id, "range": range }),
            RegistryError::Unresolvable {
                id,
                range,
                available,
            } => {
                json!({ "toolId": id, "range": range, "availableVersions": available })
            }
            RegistryError::Storage(_) => json!({}),
        }
    }
}

/// The registry contract, shared by the in-memory and the persistent implementations.
/// Every call is scoped to one tenant; another tenant's tools are invisible (not found).
pub trait ToolRegistry: Send + Sync {
    /// Add `(manifest.id, manifest.version)`.
    fn register<'a>(
        &'a self,
        tenant: &'a str,
        manifest: &'a ToolManifest,
        options: RegisterOptions,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>>;

    /// The highest active version. `ToolNotFound` if the id was never registered,
    /// `ToolGone` if every version is unregistered.
    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>>;

    /// An exact version, unregistered ones included.
    fn get_version<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>>;

    /// The versions of an id, highest first; unregistered ones only when asked.
    /// `ToolNotFound` if the id was never registered.
    fn versions<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        include_unregistered: bool,
    ) -> BoxFuture<'a, Result<Vec<VersionEntry>, RegistryError>>;

    /// A page of tools (the latest active version of each id with one), ordered by id.
    fn list<'a>(
        &'a self,
        tenant: &'a str,
        query: ListQuery,
    ) -> BoxFuture<'a, Result<ListPage, RegistryError>>;

    /// Tombstone a version (idempotent). `VersionNotFound` if there is no such version.
    fn unregister<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<(), RegistryError>>;

    /// Undo [`ToolRegistry::unregister`]; returns whether the version was tombstoned.
    fn reinstate<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<bool, RegistryError>>;

    /// Resolve an npm range (or, with `None`, the latest version, prereleases included)
    /// over the active versions.
    fn resolve<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        range: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Resolved, RegistryError>> {
        Box::pin(async move {
            let versions = self.versions(tenant, id, false).await?;
            let chosen = pick_from_sorted(id, versions.iter().map(|v| v.version.as_str()), range)?
                .to_owned();
            let record = self.get_version(tenant, id, &chosen).await?;
            Ok(Resolved {
                record,
                resolved_version: chosen,
            })
        })
    }
}

/// Resolve `range` over `versions` (highest first, as [`ToolRegistry::versions`] returns
/// them): the first satisfying one is the highest. Errors carry the reference's messages.
pub fn pick_from_sorted<'a, I>(
    id: &str,
    versions: I,
    range: Option<&str>,
) -> Result<&'a str, RegistryError>
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    let unresolvable = |range: &str| RegistryError::Unresolvable {
        id: id.to_owned(),
        range: range.to_owned(),
        available: versions.clone().into_iter().map(str::to_owned).collect(),
    };
    match range {
        None => versions
            .clone()
            .into_iter()
            .next()
            .ok_or_else(|| unresolvable("*")),
        Some(r) => {
            let parsed = Range::parse(r).map_err(|_| RegistryError::InvalidRange {
                id: id.to_owned(),
                range: r.to_owned(),
            })?;
            versions
                .clone()
                .into_iter()
                .find(|v| Version::parse(v).is_ok_and(|v| parsed.satisfies(&v)))
                .ok_or_else(|| unresolvable(r))
        }
    }
}

/// Check a version for the registry: strict SemVer without build metadata (build metadata
/// does not order, so it could not tell two entries apart).
pub fn check_version(id: &str, version: &str) -> Result<Version, RegistryError> {
    let invalid = |reason: String| RegistryError::InvalidVersion {
        id: id.to_owned(),
        version: version.to_owned(),
        reason,
    };
    let v = Version::parse(version).map_err(|e| invalid(e.reason.to_owned()))?;
    if !v.build.is_empty() {
        return Err(invalid(
            "build metadata is not allowed in a tool version".to_owned(),
        ));
    }
    Ok(v)
}

/// The canonical JSON text of a manifest.
pub fn manifest_json(manifest: &ToolManifest) -> Result<String, RegistryError> {
    serde_json::to_string(manifest).map_err(|e| RegistryError::Storage(Box::new(e)))
}

/// Milliseconds since the Unix epoch.
fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[derive(Debug, Default)]
struct ToolEntry {
    project_id: String,
    /// Keyed by version precedence, so iteration in reverse is highest first.
    versions: BTreeMap<Version, ToolRecord>,
}

impl ToolEntry {
    fn latest_active(&self) -> Option<&ToolRecord> {
        self.versions
            .values()
            .rev()
            .find(|r| r.unregistered_at.is_none())
    }
}

type Tenants = HashMap<String, BTreeMap<String, ToolEntry>>;

/// An in-memory [`ToolRegistry`] (tests, embedded use, `kindgi dev`). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct MemoryRegistry {
    tenants: Arc<RwLock<Tenants>>,
}

impl MemoryRegistry {
    pub fn new() -> MemoryRegistry {
        MemoryRegistry::default()
    }

    fn read<T>(&self, f: impl FnOnce(&Tenants) -> T) -> T {
        // A poisoned lock only means another thread panicked mid-call; the maps stay valid.
        let guard = self.tenants.read().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    fn write<T>(&self, f: impl FnOnce(&mut Tenants) -> T) -> T {
        let mut guard = self.tenants.write().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    fn register_now(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
        options: RegisterOptions,
    ) -> Result<ToolRecord, RegistryError> {
        let id = manifest.id.as_str();
        let version = check_version(id, &manifest.version)?;
        let json = manifest_json(manifest)?;
        let project = options
            .project_id
            .unwrap_or_else(|| DEFAULT_PROJECT.to_owned());
        self.write(|t| {
            let tools = t.entry(tenant.to_owned()).or_default();
            if let Some(entry) = tools.get(id) {
                if entry.versions.contains_key(&version) {
                    return Err(RegistryError::DuplicateVersion {
                        id: id.to_owned(),
                        version: manifest.version.clone(),
                    });
                }
                if entry.project_id != project {
                    return Err(RegistryError::ProjectMismatch { id: id.to_owned() });
                }
            }
            let now = now_millis();
            let record = ToolRecord {
                tool_id: id.to_owned(),
                version: manifest.version.clone(),
                project_id: project.clone(),
                manifest_json: json,
                created_at: now,
                unregistered_at: options.retired.then_some(now),
            };
            let entry = tools.entry(id.to_owned()).or_insert_with(|| ToolEntry {
                project_id: project,
                versions: BTreeMap::new(),
            });
            entry.versions.insert(version, record.clone());
            Ok(record)
        })
    }

    fn with_version<T>(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        f: impl FnOnce(&mut ToolRecord) -> T,
    ) -> Result<T, RegistryError> {
        let not_found = || RegistryError::VersionNotFound {
            id: id.to_owned(),
            version: version.to_owned(),
        };
        let Ok(v) = Version::parse(version) else {
            return Err(not_found());
        };
        self.write(|t| {
            let entry = t
                .get_mut(tenant)
                .and_then(|tools| tools.get_mut(id))
                .ok_or_else(|| RegistryError::ToolNotFound { id: id.to_owned() })?;
            let record = entry
                .versions
                .get_mut(&v)
                .filter(|r| r.version == version)
                .ok_or_else(not_found)?;
            Ok(f(record))
        })
    }
}

impl ToolRegistry for MemoryRegistry {
    fn register<'a>(
        &'a self,
        tenant: &'a str,
        manifest: &'a ToolManifest,
        options: RegisterOptions,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        let result = self.register_now(tenant, manifest, options);
        Box::pin(async move { result })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        let result = self.read(|t| {
            let entry = t
                .get(tenant)
                .and_then(|tools| tools.get(id))
                .ok_or_else(|| RegistryError::ToolNotFound { id: id.to_owned() })?;
            entry
                .latest_active()
                .cloned()
                .ok_or_else(|| RegistryError::ToolGone { id: id.to_owned() })
        });
        Box::pin(async move { result })
    }

    fn get_version<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        let result = self.read(|t| {
            let entry = t
                .get(tenant)
                .and_then(|tools| tools.get(id))
                .ok_or_else(|| RegistryError::ToolNotFound { id: id.to_owned() })?;
            Version::parse(version)
                .ok()
                .and_then(|v| entry.versions.get(&v))
                .filter(|r| r.version == version)
                .cloned()
                .ok_or_else(|| RegistryError::VersionNotFound {
                    id: id.to_owned(),
                    version: version.to_owned(),
                })
        });
        Box::pin(async move { result })
    }

    fn versions<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        include_unregistered: bool,
    ) -> BoxFuture<'a, Result<Vec<VersionEntry>, RegistryError>> {
        let result = self.read(|t| {
            let entry = t
                .get(tenant)
                .and_then(|tools| tools.get(id))
                .ok_or_else(|| RegistryError::ToolNotFound { id: id.to_owned() })?;
            Ok(entry
                .versions
                .values()
                .rev()
                .filter(|r| include_unregistered || r.unregistered_at.is_none())
                .map(|r| VersionEntry {
                    version: r.version.clone(),
                    created_at: r.created_at,
                    unregistered_at: r.unregistered_at,
                })
                .collect())
        });
        Box::pin(async move { result })
    }

    fn list<'a>(
        &'a self,
        tenant: &'a str,
        query: ListQuery,
    ) -> BoxFuture<'a, Result<ListPage, RegistryError>> {
        let limit = query.limit.max(1);
        let page = self.read(|t| {
            let Some(tools) = t.get(tenant) else {
                return ListPage::default();
            };
            let start = match &query.after {
                Some(after) => std::ops::Bound::Excluded(after.clone()),
                None => std::ops::Bound::Unbounded,
            };
            let mut items = Vec::new();
            let mut has_more = false;
            for (id, entry) in tools.range::<String, _>((start, std::ops::Bound::Unbounded)) {
                if query.name.as_deref().is_some_and(|n| !id.contains(n)) {
                    continue;
                }
                let Some(latest) = entry.latest_active() else {
                    continue;
                };
                if items.len() == limit {
                    has_more = true;
                    break;
                }
                items.push(latest.clone());
            }
            ListPage { items, has_more }
        });
        Box::pin(async move { Ok(page) })
    }

    fn unregister<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        let result = self.with_version(tenant, id, version, |r| {
            if r.unregistered_at.is_none() {
                r.unregistered_at = Some(now_millis());
            }
        });
        Box::pin(async move { result })
    }

    fn reinstate<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<bool, RegistryError>> {
        let result = self.with_version(tenant, id, version, |r| r.unregistered_at.take().is_some());
        Box::pin(async move { result })
    }

    fn resolve<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        range: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Resolved, RegistryError>> {
        // One read lock, walking the versions from the highest: the first match is the answer.
        let result = self.read(|t| {
            let entry = t
                .get(tenant)
                .and_then(|tools| tools.get(id))
                .ok_or_else(|| RegistryError::ToolNotFound { id: id.to_owned() })?;
            let parsed = match range {
                Some(r) => Some(Range::parse(r).map_err(|_| RegistryError::InvalidRange {
                    id: id.to_owned(),
                    range: r.to_owned(),
                })?),
                None => None,
            };
            let mut active = entry
                .versions
                .iter()
                .rev()
                .filter(|(_, r)| r.unregistered_at.is_none());
            let found = match &parsed {
                None => active.next(),
                Some(p) => active.find(|(v, _)| p.satisfies(v)),
            };
            match found {
                Some((_, r)) => Ok(Resolved {
                    record: r.clone(),
                    resolved_version: r.version.clone(),
                }),
                None => Err(RegistryError::Unresolvable {
                    id: id.to_owned(),
                    range: range.unwrap_or("*").to_owned(),
                    available: entry
                        .versions
                        .values()
                        .rev()
                        .filter(|r| r.unregistered_at.is_none())
                        .map(|r| r.version.clone())
                        .collect(),
                }),
            }
        });
        Box::pin(async move { result })
    }
}

/// An agent turn's failure to resolve one of its `tools[]`.
#[derive(Debug, thiserror::Error)]
pub enum AgentToolError {
    /// HTTP 400 `unresolved-tool`.
    #[error("Tool \"{tool_id}\" declared by agent \"{agent_id}\" is not registered")]
    UnresolvedTool { agent_id: String, tool_id: String },
    /// HTTP 422 `tool-version-unresolvable` (an invalid range or no satisfying version).
    #[error("{message}")]
    VersionUnresolvable {
        tool_id: String,
        requested_range: String,
        available_versions: Option<Vec<String>>,
        message: String,
    },
    #[error(transparent)]
    Registry(RegistryError),
}

impl AgentToolError {
    pub fn code(&self) -> &'static str {
        match self {
            AgentToolError::UnresolvedTool { .. } => "unresolved-tool",
            AgentToolError::VersionUnresolvable { .. } => "tool-version-unresolvable",
            AgentToolError::Registry(e) => e.code(),
        }
    }

    /// The HTTP status the reference maps the code to.
    pub fn http_status(&self) -> u16 {
        match self {
            AgentToolError::UnresolvedTool { .. } => 400,
            AgentToolError::VersionUnresolvable { .. } => 422,
            AgentToolError::Registry(_) => 500,
        }
    }
}

/// Resolve an agent's `tools[i] = {id, version}` as an agent turn does: `pin` (the exact
/// version a resumed turn started with) wins over the declared range; a pinned version that
/// is gone fails rather than running another version.
pub async fn resolve_agent_tool(
    registry: &dyn ToolRegistry,
    tenant: &str,
    agent_id: &str,
    tool_id: &str,
    range: &str,
    pin: Option<&str>,
) -> Result<Resolved, AgentToolError> {
    let requested = pin.unwrap_or(range);
    match registry.resolve(tenant, tool_id, Some(requested)).await {
        Ok(r) => Ok(r),
        Err(RegistryError::ToolNotFound { .. }) => Err(AgentToolError::UnresolvedTool {
            agent_id: agent_id.to_owned(),
            tool_id: tool_id.to_owned(),
        }),
        Err(e @ RegistryError::InvalidRange { .. }) => Err(AgentToolError::VersionUnresolvable {
            tool_id: tool_id.to_owned(),
            requested_range: requested.to_owned(),
            available_versions: None,
            message: e.to_string(),
        }),
        Err(ref e @ RegistryError::Unresolvable { ref available, .. }) => {
            Err(AgentToolError::VersionUnresolvable {
                tool_id: tool_id.to_owned(),
                requested_range: requested.to_owned(),
                available_versions: Some(available.clone()),
                message: e.to_string(),
            })
        }
        Err(e) => Err(AgentToolError::Registry(e)),
    }
}
