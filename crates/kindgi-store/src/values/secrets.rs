//! The secret half of [`ValuesStore`]: metadata reads, versioned sealed writes, revocation,
//! and the decrypting resolve a tool call uses. Values are sealed before they reach SQL
//! and opened only in [`ValuesStore::resolve_secrets_in`].

use std::collections::BTreeMap;

use sqlx::Row as _;

use super::{
    KEY_WHERE, ListQuery, MAX_RESOLVE_NAMES, SECRET_COLUMNS, SECRET_VALUE_MAX_BYTES, SecretRecord,
    SecretVersion, SecretWrite, ValueKey, ValueScope, ValuesError, ValuesStore, WriteMode, in_list,
    page_of, parse_tags, tags_text,
};
use crate::seal::{SealContext, SecretValue};
use crate::{StoreError, now_millis};

/// What the row of a secret held before a write.
struct Stored {
    current: i64,
    revoked: bool,
    created_at: i64,
    tags: Option<String>,
    rotation_due_at: Option<i64>,
}

fn context<'a>(key: &'a ValueKey, version: i64) -> SealContext<'a> {
    SealContext {
        tenant: &key.tenant,
        scope_kind: key.scope.kind(),
        scope_id: key.scope.id(),
        env_name: &key.env_name,
        name: &key.name,
        version,
    }
}

impl ValuesStore {
    /// The secret at `key` (revoked ones too: `revoked_at` is set).
    pub async fn secret_get(&self, key: &ValueKey) -> Result<Option<SecretRecord>, ValuesError> {
        let sql = format!("SELECT {SECRET_COLUMNS} FROM secrets WHERE {KEY_WHERE}");
        let record = crate::on_pool!(self.db, read, |pool| {
            let row = bind_key!(sqlx::query(&sql), key)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("secrets.get"))?;
            match row {
                Some(row) => Some(secret_from_row!(row, key.tenant, key.env_name)),
                None => None,
            }
        });
        Ok(record)
    }

    /// A page of secrets in name order (revoked ones only with `include_revoked`).
    pub async fn secret_list(
        &self,
        q: &ListQuery<'_>,
    ) -> Result<(Vec<SecretRecord>, bool), ValuesError> {
        let sql = format!(
            "SELECT {SECRET_COLUMNS} FROM secrets WHERE tenant = $1 AND env_name = $2 AND scope_kind = $3 AND scope_id = $4 AND name > $5 AND substr(name, 1, $6) = $7 AND ($8 OR revoked_at IS NULL) ORDER BY name LIMIT $9"
        );
        let prefix = q.name_prefix.unwrap_or("");
        let prefix_len = i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX);
        let fetch = i64::try_from(q.limit.saturating_add(1)).unwrap_or(i64::MAX);
        let rows = crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&sql)
                .bind(q.tenant)
                .bind(q.env_name)
                .bind(q.scope.kind())
                .bind(q.scope.id())
                .bind(q.after.unwrap_or(""))
                .bind(prefix_len)
                .bind(prefix)
                .bind(q.include_revoked)
                .bind(fetch)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("secrets.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(secret_from_row!(row, q.tenant, q.env_name));
            }
            out
        });
        Ok(page_of(rows, q.limit))
    }

    /// Store a new version of the secret at `key`, sealed. Returns the record and the new
    /// version. `create-new` of a stored (not revoked) name is `SecretExists`; a revoked
    /// secret written again drops its old versions and goes on from its last version number.
    pub async fn secret_set(
        &self,
        key: &ValueKey,
        write: &SecretWrite,
    ) -> Result<(SecretRecord, i64), ValuesError> {
        let len = write.value.expose().len();
        if len > SECRET_VALUE_MAX_BYTES {
            return Err(ValuesError::ValueTooLarge {
                len,
                max: SECRET_VALUE_MAX_BYTES,
            });
        }
        let seal_key = self.key()?;
        const OP: &str = "secrets.set";
        let select = format!(
            "SELECT current_version, revoked_at, created_at, tags, rotation_due_at FROM secrets WHERE {KEY_WHERE}"
        );
        let update = format!(
            "UPDATE secrets SET current_version = $6, tags = $7, rotation_due_at = $8, revoked_at = NULL, revoke_reason = NULL, updated_at = $9 WHERE {KEY_WHERE} AND current_version = $10"
        );
        let insert = "INSERT INTO secrets (tenant, env_name, scope_kind, scope_id, name, current_version, tags, rotation_due_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $8) ON CONFLICT DO NOTHING";
        let purge = format!("DELETE FROM secret_versions WHERE {KEY_WHERE}");
        let add_version = "INSERT INTO secret_versions (tenant, env_name, scope_kind, scope_id, name, version, sealed, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        let now = now_millis();
        let (version, stored) = crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(OP))?;
            let row = bind_key!(sqlx::query(&select), key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?;
            let stored = match row {
                Some(row) => Some(Stored {
                    current: row
                        .try_get("current_version")
                        .map_err(StoreError::query(OP))?,
                    revoked: row
                        .try_get::<Option<i64>, _>("revoked_at")
                        .map_err(StoreError::query(OP))?
                        .is_some(),
                    created_at: row.try_get("created_at").map_err(StoreError::query(OP))?,
                    tags: row.try_get("tags").map_err(StoreError::query(OP))?,
                    rotation_due_at: row
                        .try_get("rotation_due_at")
                        .map_err(StoreError::query(OP))?,
                }),
                None => None,
            };
            let current = stored.as_ref().map_or(0, |s| s.current);
            if write.mode == WriteMode::CreateNew && stored.as_ref().is_some_and(|s| !s.revoked) {
                return Err(ValuesError::SecretExists { current });
            }
            if write.if_version.is_some_and(|want| want != current) {
                return Err(ValuesError::SecretVersionConflict { current });
            }
            let version = current + 1;
            let sealed = seal_key.seal(&context(key, version), write.value.expose())?;
            let tags = match &write.tags {
                Some(_) => tags_text(&write.tags),
                None => stored.as_ref().and_then(|s| s.tags.clone()),
            };
            let due = write
                .rotation_due_at
                .or(stored.as_ref().and_then(|s| s.rotation_due_at));
            let written = match &stored {
                Some(s) => {
                    if s.revoked {
                        bind_key!(sqlx::query(&purge), key)
                            .execute(&mut *tx)
                            .await
                            .map_err(StoreError::query(OP))?;
                    }
                    bind_key!(sqlx::query(&update), key)
                        .bind(version)
                        .bind(&tags)
                        .bind(due)
                        .bind(now)
                        .bind(current)
                        .execute(&mut *tx)
                        .await
                        .map_err(StoreError::query(OP))?
                        .rows_affected()
                }
                None => bind_key!(sqlx::query(insert), key)
                    .bind(&tags)
                    .bind(due)
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(OP))?
                    .rows_affected(),
            };
            if written == 0 {
                // A concurrent write took this version first.
                return Err(match write.mode {
                    WriteMode::CreateNew => ValuesError::SecretExists { current: version },
                    WriteMode::AddVersion => {
                        ValuesError::SecretVersionConflict { current: version }
                    }
                });
            }
            bind_key!(sqlx::query(add_version), key)
                .bind(version)
                .bind(&sealed)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?;
            tx.commit().await.map_err(StoreError::query(OP))?;
            (version, stored.map(|s| (s.created_at, tags, due)))
        });
        let (created_at, tags, due) = match stored {
            Some(s) => s,
            None => (now, tags_text(&write.tags), write.rotation_due_at),
        };
        let record = SecretRecord {
            key: key.clone(),
            current_version: version,
            tags: parse_tags(&key.name, tags)?,
            rotation_due_at: due,
            revoked_at: None,
            revoke_reason: None,
            created_at,
            updated_at: now,
        };
        Ok((record, version))
    }

    /// Revoke the secret at `key`: it stops resolving and leaves the list (it stays readable
    /// with `includeRevoked`). `hard` also destroys every stored value. `None`: no such
    /// secret; `Some(false)`: nothing changed (already revoked, values already gone).
    pub async fn secret_revoke(
        &self,
        key: &ValueKey,
        hard: bool,
        reason: Option<&str>,
    ) -> Result<Option<bool>, ValuesError> {
        const OP: &str = "secrets.revoke";
        let select = format!("SELECT revoked_at FROM secrets WHERE {KEY_WHERE}");
        let mark = format!(
            "UPDATE secrets SET revoked_at = $6, revoke_reason = $7, updated_at = $6 WHERE {KEY_WHERE} AND revoked_at IS NULL"
        );
        let versions = format!(
            "UPDATE secret_versions SET revoked_at = $6 WHERE {KEY_WHERE} AND revoked_at IS NULL"
        );
        let destroy = format!(
            "UPDATE secret_versions SET sealed = NULL WHERE {KEY_WHERE} AND sealed IS NOT NULL"
        );
        let now = now_millis();
        let outcome = crate::on_pool!(self.db, write, |pool| {
            let mut tx = pool.begin().await.map_err(StoreError::query(OP))?;
            let exists = bind_key!(sqlx::query(&select), key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?
                .is_some();
            if !exists {
                return Ok(None);
            }
            let marked = bind_key!(sqlx::query(&mark), key)
                .bind(now)
                .bind(reason)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?
                .rows_affected();
            bind_key!(sqlx::query(&versions), key)
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(StoreError::query(OP))?;
            let destroyed = if hard {
                bind_key!(sqlx::query(&destroy), key)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::query(OP))?
                    .rows_affected()
            } else {
                0
            };
            tx.commit().await.map_err(StoreError::query(OP))?;
            Some(marked > 0 || destroyed > 0)
        });
        Ok(outcome)
    }

    /// A page of the versions of the secret at `key`, oldest first, after version `after`.
    pub async fn secret_versions(
        &self,
        key: &ValueKey,
        after: i64,
        limit: usize,
    ) -> Result<(Vec<SecretVersion>, bool), ValuesError> {
        let sql = format!(
            "SELECT version, created_at, revoked_at FROM secret_versions WHERE {KEY_WHERE} AND version > $6 ORDER BY version LIMIT $7"
        );
        let fetch = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
        let rows = crate::on_pool!(self.db, read, |pool| {
            let rows = bind_key!(sqlx::query(&sql), key)
                .bind(after)
                .bind(fetch)
                .fetch_all(pool)
                .await
                .map_err(StoreError::query("secrets.versions"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(version_from_row(key, &row)?);
            }
            out
        });
        Ok(page_of(rows, limit))
    }

    /// Version `version` of the secret at `key` (metadata only).
    pub async fn secret_version(
        &self,
        key: &ValueKey,
        version: i64,
    ) -> Result<Option<SecretVersion>, ValuesError> {
        let sql = format!(
            "SELECT version, created_at, revoked_at FROM secret_versions WHERE {KEY_WHERE} AND version = $6"
        );
        let found = crate::on_pool!(self.db, read, |pool| {
            let row = bind_key!(sqlx::query(&sql), key)
                .bind(version)
                .fetch_optional(pool)
                .await
                .map_err(StoreError::query("secrets.version"))?;
            match row {
                Some(row) => Some(version_from_row(key, &row)?),
                None => None,
            }
        });
        Ok(found)
    }

    /// The tenant-scope secrets `names` under `env_name`, decrypted. Names with no live
    /// value (never set, revoked) are absent.
    pub async fn resolve_secrets(
        &self,
        tenant: &str,
        env_name: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, SecretValue>, ValuesError> {
        self.resolve_secrets_in(tenant, None, env_name, names).await
    }

    /// [`ValuesStore::resolve_secrets`] for a call in `project_id`: a project secret beats
    /// the tenant's. A stored value that does not open (another key, a moved row) is
    /// [`ValuesError::Seal`], never a silent absence.
    pub async fn resolve_secrets_in(
        &self,
        tenant: &str,
        project_id: Option<&str>,
        env_name: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, SecretValue>, ValuesError> {
        if names.is_empty() {
            return Ok(BTreeMap::new());
        }
        if names.len() > MAX_RESOLVE_NAMES {
            return Err(ValuesError::TooManyNames {
                count: names.len(),
                max: MAX_RESOLVE_NAMES,
            });
        }
        let sql = format!(
            "SELECT s.scope_kind, s.scope_id, s.name, s.current_version, v.sealed FROM secrets s JOIN secret_versions v ON v.tenant = s.tenant AND v.env_name = s.env_name AND v.scope_kind = s.scope_kind AND v.scope_id = s.scope_id AND v.name = s.name AND v.version = s.current_version WHERE s.tenant = $1 AND s.env_name = $2 AND s.revoked_at IS NULL AND v.sealed IS NOT NULL AND ((s.scope_kind = 'tenant' AND s.scope_id = '') OR (s.scope_kind = 'project' AND s.scope_id = $3)) AND s.name IN {}",
            in_list(4, names.len())
        );
        const OP: &str = "secrets.resolve";
        let rows: Vec<(ValueKey, i64, String)> = crate::on_pool!(self.db, read, |pool| {
            let mut q = sqlx::query(&sql)
                .bind(tenant)
                .bind(env_name)
                .bind(project_id.unwrap_or(""));
            for n in names {
                q = q.bind(*n);
            }
            let rows = q.fetch_all(pool).await.map_err(StoreError::query(OP))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push((
                    key_from_row!(row, tenant, env_name, OP),
                    row.try_get("current_version")
                        .map_err(StoreError::query(OP))?,
                    row.try_get("sealed").map_err(StoreError::query(OP))?,
                ));
            }
            out
        });
        if rows.is_empty() {
            return Ok(BTreeMap::new());
        }
        let seal_key = self.key()?;
        let mut out = BTreeMap::new();
        // Tenant values first, so a project value replaces its name.
        let order = |k: &ValueKey| matches!(k.scope, ValueScope::Project(_));
        for project_pass in [false, true] {
            for (key, version, sealed) in rows.iter().filter(|r| order(&r.0) == project_pass) {
                let value = seal_key.open(&context(key, *version), sealed)?;
                out.insert(key.name.clone(), value);
            }
        }
        Ok(out)
    }
}

fn version_from_row<R>(key: &ValueKey, row: &R) -> Result<SecretVersion, StoreError>
where
    R: sqlx::Row,
    for<'c> &'c str: sqlx::ColumnIndex<R>,
    i64: for<'d> sqlx::Decode<'d, R::Database> + sqlx::Type<R::Database>,
    Option<i64>: for<'d> sqlx::Decode<'d, R::Database>,
{
    let op = || StoreError::query("secrets.version.decode");
    Ok(SecretVersion {
        key: key.clone(),
        version: row.try_get("version").map_err(op())?,
        created_at: row.try_get("created_at").map_err(op())?,
        revoked_at: row.try_get("revoked_at").map_err(op())?,
    })
}
