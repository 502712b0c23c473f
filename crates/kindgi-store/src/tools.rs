//! The persistent, tenant-scoped tool registry: [`StoreRegistry`] implements
//! [`kindgi_tools::registry::ToolRegistry`] over SQLite or PostgreSQL.
//!
//! Tables: `tools` (one row per tenant and id: the owning project) and `tool_versions` (one
//! immutable row per version: the manifest as compact JSON text, the parsed version numbers,
//! and `unregistered_at` for tombstones). Reads go to the SQLite reader pool; writes go
//! through the single SQLite writer or a PostgreSQL transaction. PostgreSQL text keys use
//! `COLLATE "C"` so ids order bytewise on both backends (the list cursor depends on it).

use kindgi_spec::ToolManifest;
use kindgi_tools::registry::Resolved;
use kindgi_tools::registry::{
    DEFAULT_PROJECT, ListPage, ListQuery, RegisterOptions, RegistryError, ToolRecord, ToolRegistry,
    VersionEntry, check_version, manifest_json,
};
use kindgi_tools::semver::{Range, Version, latest_version, max_satisfying};
use kindgi_tools::tool::BoxFuture;
use sqlx::Row as _;

use crate::idempotency::{AnswerToRecord, RECORD, record_answer};
use crate::{Database, StoreError, now_millis};

const SQLITE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS tools (
        tenant     TEXT NOT NULL,
        tool_id    TEXT NOT NULL,
        project_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant, tool_id)
    )",
    "CREATE TABLE IF NOT EXISTS tool_versions (
        tenant          TEXT NOT NULL,
        tool_id         TEXT NOT NULL,
        version         TEXT NOT NULL,
        major           INTEGER NOT NULL,
        minor           INTEGER NOT NULL,
        patch           INTEGER NOT NULL,
        prerelease      TEXT NOT NULL DEFAULT '',
        project_id      TEXT NOT NULL,
        manifest        TEXT NOT NULL,
        created_at      INTEGER NOT NULL,
        unregistered_at INTEGER,
        PRIMARY KEY (tenant, tool_id, version),
        FOREIGN KEY (tenant, tool_id) REFERENCES tools (tenant, tool_id)
    )",
];

const POSTGRES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS tools (
        tenant     TEXT COLLATE \"C\" NOT NULL,
        tool_id    TEXT COLLATE \"C\" NOT NULL,
        project_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant, tool_id)
    )",
    "CREATE TABLE IF NOT EXISTS tool_versions (
        tenant          TEXT COLLATE \"C\" NOT NULL,
        tool_id         TEXT COLLATE \"C\" NOT NULL,
        version         TEXT COLLATE \"C\" NOT NULL,
        major           BIGINT NOT NULL,
        minor           BIGINT NOT NULL,
        patch           BIGINT NOT NULL,
        prerelease      TEXT NOT NULL DEFAULT '',
        project_id      TEXT NOT NULL,
        manifest        TEXT NOT NULL,
        created_at      BIGINT NOT NULL,
        unregistered_at BIGINT,
        PRIMARY KEY (tenant, tool_id, version),
        FOREIGN KEY (tenant, tool_id) REFERENCES tools (tenant, tool_id)
    )",
];

/// Create the `tools` and `tool_versions` tables (idempotent).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("tools", SQLITE, POSTGRES).await
}

fn storage(e: StoreError) -> RegistryError {
    RegistryError::Storage(Box::new(e))
}

fn q(op: &'static str) -> impl FnOnce(sqlx::Error) -> RegistryError {
    move |source| storage(StoreError::Query { op, source })
}

fn read_record<R>(r: &R) -> Result<ToolRecord, RegistryError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    i64: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<i64>: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: sqlx::Error| {
        storage(StoreError::Corrupt {
            what: "tool_versions row".into(),
            reason: e.to_string(),
        })
    };
    Ok(ToolRecord {
        tool_id: r.try_get("tool_id").map_err(corrupt)?,
        version: r.try_get("version").map_err(corrupt)?,
        project_id: r.try_get("project_id").map_err(corrupt)?,
        manifest_json: r.try_get("manifest").map_err(corrupt)?,
        created_at: r.try_get("created_at").map_err(corrupt)?,
        unregistered_at: r.try_get("unregistered_at").map_err(corrupt)?,
    })
}

/// Run one statement, written once with `$N` placeholders, on the right pool
/// ([`crate::on_pool!`]): `$method` is `fetch_optional`, `fetch_all` or `execute`; `$pool` is
/// `read` or `write`. `$map` turns the result into a common type (it is expanded once per
/// backend, so it may decode rows generically).
macro_rules! run {
    ($db:expr, $method:ident, $pool:ident, $op:literal, $sql:expr, [$($bind:expr),* $(,)?], $map:expr) => {
        crate::on_pool!($db, $pool, |pool| {
            sqlx::query($sql)$(.bind($bind))*.$method(pool).await.map_err(q($op)).and_then($map)
        })
    };
}

/// The persistent registry. Cheap to clone.
#[derive(Debug, Clone)]
pub struct StoreRegistry {
    db: Database,
}

/// An id exists for a tenant (any version, unregistered included).
async fn id_exists(db: &Database, tenant: &str, id: &str) -> Result<bool, RegistryError> {
    let row = run!(
        db,
        fetch_optional,
        read,
        "tools.id_exists",
        "SELECT 1 AS one FROM tools WHERE tenant = $1 AND tool_id = $2",
        [tenant, id],
        |o| Ok(o.is_some())
    )?;
    Ok(row)
}

impl StoreRegistry {
    pub fn new(db: Database) -> StoreRegistry {
        StoreRegistry { db }
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Store a tool a host serves from files (a pack under `kindgi dev`), in the default
    /// project: idempotent for an identical manifest (`Unchanged`); a different manifest
    /// under an existing version replaces it in place (`Replaced`) — the files are the truth
    /// there, and the API that would promise immutability is read-only. Never use it for
    /// versions published through the API.
    pub async fn put_tool(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
    ) -> Result<crate::definitions::PutOutcome, RegistryError> {
        use crate::definitions::PutOutcome;
        let options = RegisterOptions {
            project_id: None,
            retired: false,
        };
        match self.register_impl(tenant, manifest, options, None).await {
            Ok(_) => return Ok(PutOutcome::Inserted),
            Err(RegistryError::DuplicateVersion { .. }) => {}
            Err(e) => return Err(e),
        }
        let id = manifest.id.as_str();
        let text = manifest_json(manifest)?;
        let existing = self.get_version_impl(tenant, id, &manifest.version).await?;
        if existing.manifest_json == text {
            return Ok(PutOutcome::Unchanged);
        }
        let change = self
            .db
            .epochs()
            .before_change(crate::epoch::EpochKind::Registry);
        run!(
            self.db,
            execute,
            write,
            "tools.put_tool",
            "UPDATE tool_versions SET manifest = $1 WHERE tenant = $2 AND tool_id = $3 AND version = $4",
            [&text, tenant, id, &manifest.version],
            |r| Ok(r.rows_affected())
        )?;
        self.db.epochs().announced(change).await;
        Ok(PutOutcome::Replaced)
    }

    /// [`ToolRegistry::register`] plus an idempotent answer recorded **in the same
    /// transaction**, so the version and the answer commit together or not at all (a crash
    /// can never leave one without the other). `Ok(None)`: the key was already recorded by
    /// another request; nothing was written — replay that request's answer.
    pub async fn register_answered(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
        options: RegisterOptions,
        answer: &AnswerToRecord,
    ) -> Result<Option<ToolRecord>, RegistryError> {
        self.register_impl(tenant, manifest, options, Some(answer))
            .await
    }

    async fn register_impl(
        &self,
        tenant: &str,
        manifest: &ToolManifest,
        options: RegisterOptions,
        answer: Option<&AnswerToRecord>,
    ) -> Result<Option<ToolRecord>, RegistryError> {
        let id = manifest.id.as_str();
        let v = check_version(id, &manifest.version)?;
        let record = ToolRecord {
            tool_id: id.to_owned(),
            version: manifest.version.clone(),
            project_id: options
                .project_id
                .unwrap_or_else(|| DEFAULT_PROJECT.to_owned()),
            manifest_json: manifest_json(manifest)?,
            created_at: now_millis(),
            unregistered_at: None,
        };
        let record = ToolRecord {
            unregistered_at: options.retired.then_some(record.created_at),
            ..record
        };
        let major = i64::try_from(v.major).unwrap_or(i64::MAX);
        let minor = i64::try_from(v.minor).unwrap_or(i64::MAX);
        let patch = i64::try_from(v.patch).unwrap_or(i64::MAX);
        let pre = v
            .prerelease
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(".");
        macro_rules! body {
            ($tx:ident, $ph:ident, $record:expr) => {{
                // The answer first: on PostgreSQL a concurrent duplicate waits here for the
                // first one to commit, then finds the key taken and writes nothing.
                if let Some(answer) = answer {
                    if !record_answer!($tx, $record, answer, q, "tools.register") {
                        return Ok(None);
                    }
                }
                sqlx::query($ph[0])
                    .bind(tenant)
                    .bind(id)
                    .bind(&record.project_id)
                    .bind(record.created_at)
                    .execute(&mut *$tx)
                    .await
                    .map_err(q("tools.register"))?;
                let exists = sqlx::query($ph[1])
                    .bind(tenant)
                    .bind(id)
                    .bind(&record.version)
                    .fetch_optional(&mut *$tx)
                    .await
                    .map_err(q("tools.register"))?;
                if exists.is_some() {
                    return Err(RegistryError::DuplicateVersion {
                        id: id.to_owned(),
                        version: record.version.clone(),
                    });
                }
                let owner: String = sqlx::query($ph[2])
                    .bind(tenant)
                    .bind(id)
                    .fetch_one(&mut *$tx)
                    .await
                    .map_err(q("tools.register"))?
                    .try_get("project_id")
                    .map_err(q("tools.register"))?;
                if owner != record.project_id {
                    return Err(RegistryError::ProjectMismatch { id: id.to_owned() });
                }
                let inserted = sqlx::query($ph[3])
                    .bind(tenant)
                    .bind(id)
                    .bind(&record.version)
                    .bind(major)
                    .bind(minor)
                    .bind(patch)
                    .bind(&pre)
                    .bind(&record.project_id)
                    .bind(&record.manifest_json)
                    .bind(record.created_at)
                    .bind(record.unregistered_at)
                    .execute(&mut *$tx)
                    .await
                    .map_err(q("tools.register"))?;
                if inserted.rows_affected() == 0 {
                    return Err(RegistryError::DuplicateVersion {
                        id: id.to_owned(),
                        version: record.version.clone(),
                    });
                }
                $tx.commit().await.map_err(q("tools.register"))?;
            }};
        }
        const REGISTER: [&str; 4] = [
            "INSERT INTO tools (tenant, tool_id, project_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            "SELECT 1 AS one FROM tool_versions WHERE tenant = $1 AND tool_id = $2 AND version = $3",
            "SELECT project_id FROM tools WHERE tenant = $1 AND tool_id = $2",
            "INSERT INTO tool_versions (tenant, tool_id, version, major, minor, patch, prerelease, project_id, manifest, created_at, unregistered_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
        ];
        crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(q("tools.register"))?;
            // `$N` placeholders bind positionally on SQLite too.
            body!(tx, REGISTER, RECORD);
        });
        Ok(Some(record))
    }

    async fn get_version_impl(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
    ) -> Result<ToolRecord, RegistryError> {
        let row = run!(
            self.db,
            fetch_optional,
            read,
            "tools.get_version",
            "SELECT tool_id, version, project_id, manifest, created_at, unregistered_at FROM tool_versions WHERE tenant = $1 AND tool_id = $2 AND version = $3",
            [tenant, id, version],
            |o| o.as_ref().map(read_record).transpose()
        )?;
        match row {
            Some(r) => Ok(r),
            None if id_exists(&self.db, tenant, id).await? => Err(RegistryError::VersionNotFound {
                id: id.to_owned(),
                version: version.to_owned(),
            }),
            None => Err(RegistryError::ToolNotFound { id: id.to_owned() }),
        }
    }

    /// Version entries of an id (unsorted), optionally with tombstones.
    async fn version_rows(
        &self,
        tenant: &str,
        id: &str,
        include_unregistered: bool,
    ) -> Result<Vec<VersionEntry>, RegistryError> {
        let rows = run!(
            self.db,
            fetch_all,
            read,
            "tools.versions",
            "SELECT version, created_at, unregistered_at FROM tool_versions WHERE tenant = $1 AND tool_id = $2 AND ($3 OR unregistered_at IS NULL)",
            [tenant, id, include_unregistered],
            |v| v.iter().map(read_entry).collect::<Result<Vec<_>, _>>()
        )?;
        Ok(rows)
    }

    async fn sorted_versions(
        &self,
        tenant: &str,
        id: &str,
        include_unregistered: bool,
    ) -> Result<Vec<VersionEntry>, RegistryError> {
        let rows = self.version_rows(tenant, id, include_unregistered).await?;
        let mut keyed: Vec<(Option<Version>, VersionEntry)> = rows
            .into_iter()
            .map(|e| (Version::parse(&e.version).ok(), e))
            .collect();
        keyed.sort_by(|a, b| b.0.cmp(&a.0));
        Ok(keyed.into_iter().map(|(_, e)| e).collect())
    }

    /// The active versions of an id as one comma-joined string (versions never contain a
    /// comma). One aggregated row instead of one row per version: with thousands of versions
    /// the per-row cost dominates.
    async fn active_versions_joined(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<String, RegistryError> {
        let joined: Option<Option<String>> = run!(
            self.db,
            fetch_optional,
            read,
            "tools.active_versions",
            // `string_agg` is standard on PostgreSQL and SQLite (3.44 and later).
            "SELECT string_agg(version, ',') AS versions FROM tool_versions WHERE tenant = $1 AND tool_id = $2 AND unregistered_at IS NULL",
            [tenant, id],
            |o| Ok(o.map(|r| r.try_get::<Option<String>, _>("versions").ok().flatten()))
        )?;
        Ok(joined.flatten().unwrap_or_default())
    }

    async fn get_impl(&self, tenant: &str, id: &str) -> Result<ToolRecord, RegistryError> {
        let joined = self.active_versions_joined(tenant, id).await?;
        match latest_version(split_versions(&joined)) {
            Some(latest) => self.get_version_impl(tenant, id, latest).await,
            None if id_exists(&self.db, tenant, id).await? => {
                Err(RegistryError::ToolGone { id: id.to_owned() })
            }
            None => Err(RegistryError::ToolNotFound { id: id.to_owned() }),
        }
    }

    async fn resolve_impl(
        &self,
        tenant: &str,
        id: &str,
        range: Option<&str>,
    ) -> Result<Resolved, RegistryError> {
        let joined = self.active_versions_joined(tenant, id).await?;
        if joined.is_empty() && !id_exists(&self.db, tenant, id).await? {
            return Err(RegistryError::ToolNotFound { id: id.to_owned() });
        }
        let chosen = match range {
            None => latest_version(split_versions(&joined)),
            Some(r) => {
                let parsed = Range::parse(r).map_err(|_| RegistryError::InvalidRange {
                    id: id.to_owned(),
                    range: r.to_owned(),
                })?;
                max_satisfying(split_versions(&joined), &parsed)
            }
        };
        let Some(chosen) = chosen else {
            let mut available: Vec<(Option<Version>, &str)> = split_versions(&joined)
                .map(|v| (Version::parse(v).ok(), v))
                .collect();
            available.sort_by(|a, b| b.0.cmp(&a.0));
            return Err(RegistryError::Unresolvable {
                id: id.to_owned(),
                range: range.unwrap_or("*").to_owned(),
                available: available.into_iter().map(|(_, v)| v.to_owned()).collect(),
            });
        };
        let record = self.get_version_impl(tenant, id, chosen).await?;
        Ok(Resolved {
            resolved_version: record.version.clone(),
            record,
        })
    }

    async fn list_impl(&self, tenant: &str, query: ListQuery) -> Result<ListPage, RegistryError> {
        self.list_with(tenant, query, false).await
    }

    /// The highest version of an id, unregistered ones included (a retired tool as
    /// `includeRetired` lists it).
    async fn highest_version(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<ToolRecord>, RegistryError> {
        let versions = self.sorted_versions(tenant, id, true).await?;
        match versions.first() {
            Some(v) => self
                .get_version_impl(tenant, id, &v.version)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// [`ToolRegistry::list`] with ids whose name starts with `query.name` (the Platform
    /// API's `name` filter is an id prefix) and, with `include_retired`, retired tools too:
    /// each as its highest version, with `unregistered_at`.
    pub async fn list_with(
        &self,
        tenant: &str,
        query: ListQuery,
        include_retired: bool,
    ) -> Result<ListPage, RegistryError> {
        let limit = query.limit.max(1);
        let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
        let after = query.after.unwrap_or_default();
        let name = query.name.unwrap_or_default();
        let mut ids: Vec<String> = run!(self.db, fetch_all, read, "tools.list",
            "SELECT t.tool_id AS tool_id FROM tools t WHERE t.tenant = $1 AND t.tool_id > $2 AND substr(t.tool_id, 1, length($3)) = $3
               AND EXISTS (SELECT 1 FROM tool_versions v WHERE v.tenant = t.tenant AND v.tool_id = t.tool_id AND ($5 OR v.unregistered_at IS NULL))
             ORDER BY t.tool_id LIMIT $4",
            [tenant, &after, &name, fetch, include_retired],
            |v| v.iter().map(read_id).collect::<Result<Vec<_>, _>>())?;
        let has_more = ids.len() > limit;
        ids.truncate(limit);
        let mut items = Vec::with_capacity(ids.len());
        for id in ids {
            match self.get_impl(tenant, &id).await {
                Ok(r) => items.push(r),
                Err(RegistryError::ToolGone { .. }) if include_retired => {
                    if let Some(r) = self.highest_version(tenant, &id).await? {
                        items.push(r);
                    }
                }
                // Unregistered between the two reads: skip it.
                Err(RegistryError::ToolGone { .. } | RegistryError::ToolNotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ListPage { items, has_more })
    }

    async fn set_unregistered(
        &self,
        tenant: &str,
        id: &str,
        version: &str,
        unregister: bool,
    ) -> Result<bool, RegistryError> {
        let now = now_millis();
        let at = unregister.then_some(now);
        let change = self
            .db
            .epochs()
            .before_change(crate::epoch::EpochKind::Registry);
        let changed = run!(
            self.db,
            execute,
            write,
            "tools.set_unregistered",
            "UPDATE tool_versions SET unregistered_at = $1 WHERE tenant = $2 AND tool_id = $3 AND version = $4 AND (unregistered_at IS NULL) = $5",
            [at, tenant, id, version, unregister],
            |r| Ok(r.rows_affected())
        )?;
        if changed > 0 {
            self.db.epochs().announced(change).await;
            return Ok(true);
        }
        // Nothing changed: either already in that state, or no such version.
        self.get_version_impl(tenant, id, version).await?;
        Ok(false)
    }
}

fn split_versions(joined: &str) -> impl Iterator<Item = &str> + Clone {
    joined.split(',').filter(|v| !v.is_empty())
}

fn read_entry<R>(r: &R) -> Result<VersionEntry, RegistryError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    i64: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<i64>: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: sqlx::Error| {
        storage(StoreError::Corrupt {
            what: "tool_versions row".into(),
            reason: e.to_string(),
        })
    };
    Ok(VersionEntry {
        version: r.try_get("version").map_err(corrupt)?,
        created_at: r.try_get("created_at").map_err(corrupt)?,
        unregistered_at: r.try_get("unregistered_at").map_err(corrupt)?,
    })
}

fn read_id<R>(r: &R) -> Result<String, RegistryError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    String: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
{
    r.try_get("tool_id").map_err(|e| {
        storage(StoreError::Corrupt {
            what: "tools row".into(),
            reason: e.to_string(),
        })
    })
}

impl ToolRegistry for StoreRegistry {
    fn register<'a>(
        &'a self,
        tenant: &'a str,
        manifest: &'a ToolManifest,
        options: RegisterOptions,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        Box::pin(async move {
            self.register_impl(tenant, manifest, options, None)
                .await?
                .ok_or_else(|| {
                    RegistryError::Storage("no record without an idempotency key".into())
                })
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        Box::pin(self.get_impl(tenant, id))
    }

    fn get_version<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<ToolRecord, RegistryError>> {
        Box::pin(self.get_version_impl(tenant, id, version))
    }

    fn versions<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        include_unregistered: bool,
    ) -> BoxFuture<'a, Result<Vec<VersionEntry>, RegistryError>> {
        Box::pin(async move {
            let versions = self
                .sorted_versions(tenant, id, include_unregistered)
                .await?;
            if versions.is_empty() && !id_exists(&self.db, tenant, id).await? {
                return Err(RegistryError::ToolNotFound { id: id.to_owned() });
            }
            Ok(versions)
        })
    }

    fn list<'a>(
        &'a self,
        tenant: &'a str,
        query: ListQuery,
    ) -> BoxFuture<'a, Result<ListPage, RegistryError>> {
        Box::pin(self.list_impl(tenant, query))
    }

    fn resolve<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        range: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Resolved, RegistryError>> {
        Box::pin(self.resolve_impl(tenant, id, range))
    }

    fn unregister<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move {
            self.set_unregistered(tenant, id, version, true)
                .await
                .map(drop)
        })
    }

    fn reinstate<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
        version: &'a str,
    ) -> BoxFuture<'a, Result<bool, RegistryError>> {
        Box::pin(self.set_unregistered(tenant, id, version, false))
    }
}
