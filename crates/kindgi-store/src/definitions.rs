//! The definitions registry: flows, agents and guardrails, tenant-scoped, in one table.
//!
//! `definitions` holds one immutable row per `(tenant, kind, id, version)`: the definition
//! as JSON text exactly as published, the project that owns the id (`NULL` for items a
//! host put in from a pack, which have none), server-set `annotations` (a JSON object such
//! as a flow's `pins`/`pinsDigest`, kept apart so the definition still parses as itself),
//! the `source` that put it there (`api`, or e.g. `pack:/path` under `kindgi dev`) and
//! `unregistered_at` for tombstones. Guardrails are unversioned: their version is `""`.
//!
//! Exact versions never change, so callers (the runtime's lookup) may cache what
//! [`Definitions::get_flow`]/[`Definitions::get_agent`] return for an exact version.
//! Versions are ordered by semver in Rust (npm rules, prereleases included, as the tool
//! registry does), ids bytewise (`COLLATE "C"` on PostgreSQL, SQLite's default on SQLite),
//! so list cursors mean the same on both backends. Every statement is written once
//! ([`crate::on_pool!`]).
//!
//! [`Definitions`] is also core's [`DefinitionSource`] port: the runtime's fallback behind
//! its in-memory catalogues reads flows, agents and guardrails from here as JSON.

use async_trait::async_trait;
use kindgi_core::ports::DefinitionSource;
use kindgi_tools::semver::{Version, latest_version};
use serde_json::Value;
use sqlx::Row as _;

use crate::{Database, StoreError, now_millis};

const SQLITE: &[&str] = &["CREATE TABLE IF NOT EXISTS definitions (
        tenant          TEXT NOT NULL,
        kind            TEXT NOT NULL,
        def_id          TEXT NOT NULL,
        version         TEXT NOT NULL,
        project_id      TEXT,
        definition      TEXT NOT NULL,
        annotations     TEXT,
        source          TEXT NOT NULL,
        created_at      BIGINT NOT NULL,
        unregistered_at BIGINT,
        PRIMARY KEY (tenant, kind, def_id, version)
    )"];

const POSTGRES: &[&str] = &["CREATE TABLE IF NOT EXISTS definitions (
        tenant          TEXT COLLATE \"C\" NOT NULL,
        kind            TEXT COLLATE \"C\" NOT NULL,
        def_id          TEXT COLLATE \"C\" NOT NULL,
        version         TEXT COLLATE \"C\" NOT NULL,
        project_id      TEXT,
        definition      TEXT NOT NULL,
        annotations     TEXT,
        source          TEXT NOT NULL,
        created_at      BIGINT NOT NULL,
        unregistered_at BIGINT,
        PRIMARY KEY (tenant, kind, def_id, version)
    )"];

/// Create the `definitions` table (idempotent). Called by [`Database::migrate`].
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("definitions", SQLITE, POSTGRES).await
}

/// The source of an item published through the API.
pub const SOURCE_API: &str = "api";

// The record and its kind are core's (the definition-source port's records).
pub use kindgi_core::definition::{DefinitionKind, DefinitionRecord};

/// A stored definition that does not parse (core's error) as the store's.
fn corrupt(e: kindgi_core::StorageError) -> StoreError {
    match e {
        kindgi_core::StorageError::Corrupt { what, reason, .. } => {
            StoreError::Corrupt { what, reason }
        }
        other => StoreError::Corrupt {
            what: "a definition".into(),
            reason: other.to_string(),
        },
    }
}

/// A version to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDefinition {
    pub id: String,
    /// `""` for guardrails.
    pub version: String,
    pub project_id: Option<String>,
    pub definition: Value,
    pub annotations: Option<Value>,
    pub source: String,
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// `(id, version)` is registered already.
    #[error("{} \"{id}\" version \"{version}\" is already registered", kind.as_str())]
    AlreadyRegistered {
        kind: DefinitionKind,
        id: String,
        version: String,
    },
    /// The id's versions live in another project.
    #[error("{} \"{id}\" belongs to another project", kind.as_str())]
    ProjectMismatch {
        kind: DefinitionKind,
        id: String,
        /// The owning project (`None`: a pack item).
        owner: Option<String>,
    },
    /// A put named an existing `(id, version)` with another definition.
    #[error("{} \"{id}\" version \"{version}\" is registered with another definition; versions never change", kind.as_str())]
    VersionTaken {
        kind: DefinitionKind,
        id: String,
        version: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What [`Definitions::latest`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Latest {
    /// The highest active version.
    Active(DefinitionRecord),
    /// Registered, but every version is unregistered: the highest one.
    Gone(DefinitionRecord),
    /// Never registered.
    NotFound,
}

/// A list request: ids after `after`, starting with `prefix`, `limit` of them.
#[derive(Debug, Clone, Default)]
pub struct ListDefinitions {
    pub limit: usize,
    pub after: Option<String>,
    pub prefix: Option<String>,
    /// Also ids whose every version is unregistered (as their highest version).
    pub include_retired: bool,
}

/// A page of [`Definitions::list`]: one record per id, ordered by id.
#[derive(Debug, Clone, Default)]
pub struct DefinitionPage {
    pub items: Vec<DefinitionRecord>,
    pub has_more: bool,
}

/// What a put did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    Inserted,
    /// The identical `(id, version, definition)` was there already.
    Unchanged,
    /// Another definition was there, and was replaced (only [`crate::tools::StoreRegistry::put_tool`]).
    Replaced,
}

const COLUMNS: &str =
    "def_id, version, project_id, definition, annotations, source, created_at, unregistered_at";

macro_rules! record_from_row {
    ($kind:expr, $row:expr) => {{
        let row = $row;
        let op = StoreError::query("definitions.decode");
        DefinitionRecord {
            kind: $kind,
            id: row.try_get("def_id").map_err(op)?,
            version: row
                .try_get("version")
                .map_err(StoreError::query("definitions.decode"))?,
            project_id: row
                .try_get("project_id")
                .map_err(StoreError::query("definitions.decode"))?,
            definition_json: row
                .try_get("definition")
                .map_err(StoreError::query("definitions.decode"))?,
            annotations_json: row
                .try_get("annotations")
                .map_err(StoreError::query("definitions.decode"))?,
            source: row
                .try_get("source")
                .map_err(StoreError::query("definitions.decode"))?,
            created_at: row
                .try_get("created_at")
                .map_err(StoreError::query("definitions.decode"))?,
            unregistered_at: row
                .try_get("unregistered_at")
                .map_err(StoreError::query("definitions.decode"))?,
        }
    }};
}

/// The definitions registry over a [`Database`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Definitions {
    db: Database,
}

impl Definitions {
    pub fn new(db: Database) -> Definitions {
        Definitions { db }
    }

    /// Publish a new version: refused when `(id, version)` exists
    /// ([`DefinitionError::AlreadyRegistered`]) or the id belongs to another project.
    pub async fn publish(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        new: &NewDefinition,
    ) -> Result<DefinitionRecord, DefinitionError> {
        match self.insert(tenant, kind, new).await? {
            Ok(record) => Ok(record),
            Err(_) => Err(DefinitionError::AlreadyRegistered {
                kind,
                id: new.id.clone(),
                version: new.version.clone(),
            }),
        }
    }

    /// Store a version a host serves (e.g. a pack's file under `kindgi dev`): idempotent
    /// for an identical `(id, version, definition)`; another definition under an existing
    /// version is [`DefinitionError::VersionTaken`]. An unregistered identical version is
    /// left as it is.
    pub async fn put(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        new: &NewDefinition,
    ) -> Result<PutOutcome, DefinitionError> {
        match self.insert(tenant, kind, new).await? {
            Ok(_) => Ok(PutOutcome::Inserted),
            Err(existing) => {
                let same = existing.definition().map_err(corrupt)? == new.definition;
                if same {
                    Ok(PutOutcome::Unchanged)
                } else {
                    Err(DefinitionError::VersionTaken {
                        kind,
                        id: new.id.clone(),
                        version: new.version.clone(),
                    })
                }
            }
        }
    }

    /// [`Definitions::put`] of a flow definition (its `id` and `version` are read from it),
    /// with no project.
    pub async fn put_flow(
        &self,
        tenant: &str,
        definition: &Value,
        source: &str,
    ) -> Result<PutOutcome, DefinitionError> {
        self.put_definition(tenant, DefinitionKind::Flow, definition, source)
            .await
    }

    /// [`Definitions::put`] of an agent definition, with no project.
    pub async fn put_agent(
        &self,
        tenant: &str,
        definition: &Value,
        source: &str,
    ) -> Result<PutOutcome, DefinitionError> {
        self.put_definition(tenant, DefinitionKind::Agent, definition, source)
            .await
    }

    /// [`Definitions::put`] of a guardrail definition (unversioned), with no project.
    pub async fn put_guardrail(
        &self,
        tenant: &str,
        definition: &Value,
        source: &str,
    ) -> Result<PutOutcome, DefinitionError> {
        self.put_definition(tenant, DefinitionKind::Guardrail, definition, source)
            .await
    }

    async fn put_definition(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        definition: &Value,
        source: &str,
    ) -> Result<PutOutcome, DefinitionError> {
        let field = |name: &str| {
            definition
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let id = field("id").ok_or_else(|| StoreError::Corrupt {
            what: format!("{} definition", kind.as_str()),
            reason: "it has no string `id`".into(),
        })?;
        let version = match kind {
            DefinitionKind::Guardrail => String::new(),
            _ => field("version").ok_or_else(|| StoreError::Corrupt {
                what: format!("{} {id}", kind.as_str()),
                reason: "it has no string `version`".into(),
            })?,
        };
        let new = NewDefinition {
            id,
            version,
            project_id: None,
            definition: definition.clone(),
            annotations: None,
            source: source.to_owned(),
        };
        self.put(tenant, kind, &new).await
    }

    /// Delete every row `source` put in for `tenant` (a host reloading a pack clears what
    /// it served before). Returns how many rows went.
    pub async fn remove_source(&self, tenant: &str, source: &str) -> Result<u64, StoreError> {
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query("DELETE FROM definitions WHERE tenant = $1 AND source = $2")
                .bind(tenant)
                .bind(source)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("definitions.remove_source"))
    }

    /// Insert in one transaction, after the project check. `Ok(Err(existing))`: the
    /// `(id, version)` is there already.
    async fn insert(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        new: &NewDefinition,
    ) -> Result<Result<DefinitionRecord, DefinitionRecord>, DefinitionError> {
        let op = "definitions.insert";
        let record = DefinitionRecord {
            kind,
            id: new.id.clone(),
            version: new.version.clone(),
            project_id: new.project_id.clone(),
            definition_json: new.definition.to_string(),
            annotations_json: new.annotations.as_ref().map(Value::to_string),
            source: new.source.clone(),
            created_at: now_millis(),
            unregistered_at: None,
        };
        let (owner, inserted) = crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(op))?;
            let owner = sqlx::query(
                "SELECT project_id FROM definitions WHERE tenant = $1 AND kind = $2 AND def_id = $3 LIMIT 1",
            )
            .bind(tenant)
            .bind(kind.as_str())
            .bind(&record.id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::query(op))?
            .map(|row| row.try_get::<Option<String>, _>("project_id"))
            .transpose()
            .map_err(StoreError::query(op))?;
            if owner.as_ref().is_some_and(|o| *o != record.project_id) {
                return Err(DefinitionError::ProjectMismatch {
                    kind,
                    id: record.id.clone(),
                    owner: owner.flatten(),
                });
            }
            let inserted = sqlx::query(
                "INSERT INTO definitions (tenant, kind, def_id, version, project_id, definition, annotations, source, created_at, unregistered_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL) ON CONFLICT DO NOTHING",
            )
            .bind(tenant)
            .bind(kind.as_str())
            .bind(&record.id)
            .bind(&record.version)
            .bind(&record.project_id)
            .bind(&record.definition_json)
            .bind(&record.annotations_json)
            .bind(&record.source)
            .bind(record.created_at)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::query(op))?
            .rows_affected();
            tx.commit().await.map_err(StoreError::query(op))?;
            Ok::<_, DefinitionError>((owner, inserted))
        })?;
        let _ = owner;
        if inserted == 1 {
            return Ok(Ok(record));
        }
        match self
            .get_version(tenant, kind, &new.id, &new.version)
            .await?
        {
            Some(existing) => Ok(Err(existing)),
            // Deleted between the two statements (a host clearing its source): try again
            // would race the same way; report it as registered.
            None => Err(DefinitionError::AlreadyRegistered {
                kind,
                id: new.id.clone(),
                version: new.version.clone(),
            }),
        }
    }

    /// One exact version, unregistered ones included.
    pub async fn get_version(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        id: &str,
        version: &str,
    ) -> Result<Option<DefinitionRecord>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM definitions WHERE tenant = $1 AND kind = $2 AND def_id = $3 AND version = $4"
            ))
            .bind(tenant)
            .bind(kind.as_str())
            .bind(id)
            .bind(version)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("definitions.get_version"))?;
            match row {
                None => Ok(None),
                Some(row) => Ok(Some(record_from_row!(kind, row))),
            }
        })
    }

    /// Every version of an id, unregistered ones included, in semver order (ascending).
    /// Empty when the id was never registered.
    pub async fn versions(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        id: &str,
    ) -> Result<Vec<DefinitionRecord>, StoreError> {
        let mut records: Vec<DefinitionRecord> = crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM definitions WHERE tenant = $1 AND kind = $2 AND def_id = $3"
            ))
            .bind(tenant)
            .bind(kind.as_str())
            .bind(id)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("definitions.versions"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(record_from_row!(kind, row));
            }
            Ok::<_, StoreError>(out)
        })?;
        sort_semver(&mut records);
        Ok(records)
    }

    /// The highest active version of an id, or whether it is gone or unknown.
    pub async fn latest(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        id: &str,
    ) -> Result<Latest, StoreError> {
        Ok(pick_latest(self.versions(tenant, kind, id).await?))
    }

    /// A page of ids (bytewise order), each as its highest active version — or, with
    /// `include_retired`, its highest version when none is active.
    pub async fn list(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        query: &ListDefinitions,
    ) -> Result<DefinitionPage, StoreError> {
        let limit = query.limit.max(1);
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let after = query.after.clone().unwrap_or_default();
        let prefix = query.prefix.clone().unwrap_or_default();
        let mut ids: Vec<String> = crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(
                "SELECT DISTINCT def_id FROM definitions
                 WHERE tenant = $1 AND kind = $2 AND def_id > $3 AND substr(def_id, 1, length($4)) = $4
                   AND ($5 OR unregistered_at IS NULL)
                 ORDER BY def_id LIMIT $6",
            )
            .bind(tenant)
            .bind(kind.as_str())
            .bind(&after)
            .bind(&prefix)
            .bind(query.include_retired)
            .bind(fetch)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("definitions.list"))?;
            rows.iter()
                .map(|r| r.try_get::<String, _>("def_id"))
                .collect::<Result<Vec<_>, _>>()
                .map_err(StoreError::query("definitions.list"))
        })?;
        let has_more = ids.len() > limit;
        ids.truncate(limit);
        let mut items = Vec::with_capacity(ids.len());
        for id in ids {
            match self.latest(tenant, kind, &id).await? {
                Latest::Active(r) => items.push(r),
                Latest::Gone(r) if query.include_retired => items.push(r),
                // Unregistered or removed between the two reads: skip it.
                Latest::Gone(_) | Latest::NotFound => {}
            }
        }
        Ok(DefinitionPage { items, has_more })
    }

    /// Tombstone (`unregister: true`) or reinstate a version. `None`: no such version;
    /// `Some(changed)`: whether this call changed it.
    pub async fn set_unregistered(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        id: &str,
        version: &str,
        unregister: bool,
    ) -> Result<Option<bool>, StoreError> {
        let at = unregister.then(now_millis);
        let changed = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE definitions SET unregistered_at = $5
                 WHERE tenant = $1 AND kind = $2 AND def_id = $3 AND version = $4
                   AND (unregistered_at IS NULL) = $6",
            )
            .bind(tenant)
            .bind(kind.as_str())
            .bind(id)
            .bind(version)
            .bind(at)
            .bind(unregister)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("definitions.set_unregistered"))?;
        if changed > 0 {
            return Ok(Some(true));
        }
        Ok(self
            .get_version(tenant, kind, id, version)
            .await?
            .map(|_| false))
    }

    /// The flow `id` at `version` (unregistered included: pins and resumes still run it),
    /// or its highest active version when `version` is `None`.
    pub async fn get_flow(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<DefinitionRecord>, StoreError> {
        self.get(tenant, DefinitionKind::Flow, id, version).await
    }

    /// The agent `id` at `version`, or its highest active version; see [`Definitions::get_flow`].
    pub async fn get_agent(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<DefinitionRecord>, StoreError> {
        self.get(tenant, DefinitionKind::Agent, id, version).await
    }

    /// The guardrail `id`, if registered and not unregistered.
    pub async fn get_guardrail(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<DefinitionRecord>, StoreError> {
        Ok(self
            .get_version(tenant, DefinitionKind::Guardrail, id, "")
            .await?
            .filter(|r| !r.is_unregistered()))
    }

    async fn get(
        &self,
        tenant: &str,
        kind: DefinitionKind,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<DefinitionRecord>, StoreError> {
        match version {
            Some(v) => self.get_version(tenant, kind, id, v).await,
            None => match self.latest(tenant, kind, id).await? {
                Latest::Active(r) => Ok(Some(r)),
                Latest::Gone(_) | Latest::NotFound => Ok(None),
            },
        }
    }

    /// Every id of `kind` with its active versions (semver ascending), ids in bytewise
    /// order; ids with no active version are left out.
    pub async fn list_ids(
        &self,
        tenant: &str,
        kind: DefinitionKind,
    ) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let rows: Vec<(String, String)> = crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(
                "SELECT def_id, version FROM definitions
                 WHERE tenant = $1 AND kind = $2 AND unregistered_at IS NULL ORDER BY def_id",
            )
            .bind(tenant)
            .bind(kind.as_str())
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("definitions.list_ids"))?;
            rows.iter()
                .map(|r| Ok((r.try_get("def_id")?, r.try_get("version")?)))
                .collect::<Result<Vec<_>, sqlx::Error>>()
                .map_err(StoreError::query("definitions.list_ids"))
        })?;
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for (id, version) in rows {
            match out.last_mut() {
                Some((last, versions)) if *last == id => versions.push(version),
                _ => out.push((id, vec![version])),
            }
        }
        for (_, versions) in &mut out {
            versions.sort_by_key(|v| semver_key(v));
        }
        Ok(out)
    }
}

/// A found record's definition as JSON (a stored one that does not parse is corrupt).
fn definition_json(
    record: Option<DefinitionRecord>,
) -> Result<Option<Value>, kindgi_core::StorageError> {
    record.map(|r| r.definition()).transpose()
}

#[async_trait]
impl DefinitionSource for Definitions {
    async fn flow_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, kindgi_core::StorageError> {
        let found = self.get_flow(tenant, id, version).await;
        definition_json(found.map_err(StoreError::storage("definitions.flow"))?)
    }

    async fn agent_json(
        &self,
        tenant: &str,
        id: &str,
        version: Option<&str>,
    ) -> Result<Option<Value>, kindgi_core::StorageError> {
        let found = self.get_agent(tenant, id, version).await;
        definition_json(found.map_err(StoreError::storage("definitions.agent"))?)
    }

    async fn guardrail_json(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<Value>, kindgi_core::StorageError> {
        let found = self.get_guardrail(tenant, id).await;
        definition_json(found.map_err(StoreError::storage("definitions.guardrail"))?)
    }
}

/// The sort key of a version: parsed versions in semver order, unparsable ones first.
fn semver_key(v: &str) -> Option<Version> {
    Version::parse_npm(v).ok()
}

fn sort_semver(records: &mut [DefinitionRecord]) {
    records.sort_by_key(|r| semver_key(&r.version));
}

/// The highest active version of sorted `versions`, or the highest one when none is active.
fn pick_latest(versions: Vec<DefinitionRecord>) -> Latest {
    let active = latest_version(
        versions
            .iter()
            .filter(|r| !r.is_unregistered())
            .map(|r| r.version.as_str()),
    )
    .map(str::to_owned)
    // Unversioned kinds (guardrails, version ""): the last active row.
    .or_else(|| {
        versions
            .iter()
            .rev()
            .find(|r| !r.is_unregistered() && semver_key(&r.version).is_none())
            .map(|r| r.version.clone())
    });
    let chosen = match &active {
        Some(v) => versions.iter().position(|r| r.version == *v),
        None => versions.len().checked_sub(1),
    };
    match (chosen, active.is_some()) {
        (Some(i), true) => Latest::Active(versions[i].clone()),
        (Some(i), false) => Latest::Gone(versions[i].clone()),
        (None, _) => Latest::NotFound,
    }
}

/// The version after the highest of `versions`: its patch plus one (a prerelease's own
/// `major.minor.patch`), as the reference suggests in `details.nextFreeVersion`.
pub fn next_free_version<'a>(versions: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let highest = versions
        .into_iter()
        .filter_map(|v| Version::parse_npm(v).ok())
        .max()?;
    if highest.is_prerelease() {
        Some(format!(
            "{}.{}.{}",
            highest.major, highest.minor, highest.patch
        ))
    } else {
        Some(format!(
            "{}.{}.{}",
            highest.major,
            highest.minor,
            highest.patch.saturating_add(1)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_free_version_bumps_the_highest_patch() {
        assert_eq!(
            next_free_version(["1.0.0", "1.2.0", "1.10.3"]).as_deref(),
            Some("1.10.4")
        );
        assert_eq!(next_free_version(["2.0.0-rc.1"]).as_deref(), Some("2.0.0"));
        assert_eq!(next_free_version(["x"]), None);
    }
}
