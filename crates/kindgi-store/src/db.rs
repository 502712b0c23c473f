//! The [`Database`] handle: one value that owns the connection pool(s) for either backend.
//!
//! * **SQLite** (the default): a file path or a `sqlite:` URL. The file is created when missing
//!   (mode 0600, before SQLite writes to it; see [`crate::file_mode`]) and opened in WAL mode with a busy timeout and foreign keys on. SQLite allows one writer
//!   at a time, so the handle keeps two pools: a *writer* pool of exactly one connection
//!   (every INSERT/UPDATE/DDL goes through it, so writers queue in the pool instead of failing
//!   with `SQLITE_BUSY`) and a *reader* pool of several `query_only` connections (WAL lets
//!   readers run alongside the writer). `sqlite::memory:` uses one shared connection.
//! * **PostgreSQL**: a `postgres://` or `postgresql://` URL; one pool. An optional schema
//!   name ([`ConnectOptions::postgres_schema`]) is created if missing and put first on the
//!   `search_path` of every connection, which is how tests isolate themselves.
//!
//! Each backend has its own code path (no `sqlx::Any`): store modules `match` on
//! [`Database::backend`] and run statements written for that dialect, with the native
//! drivers' prepared-statement caches.
//!
//! # Migrations
//!
//! Every store module owns its tables and exposes `async fn migrate(&Database)` made of
//! idempotent `CREATE TABLE IF NOT EXISTS` / `CREATE INDEX IF NOT EXISTS` statements for both
//! dialects, applied through [`Database::apply_schema`]. [`Database::migrate`] (in
//! [`crate::migrate`], so that this file is only the connection and imports no store module)
//! calls each module in turn, so a module adds tables without touching any other module's file. Migrations are safe to run at every start and concurrently (PostgreSQL
//! takes an advisory lock; SQLite has a single writer).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions as _, Connection as _};

use crate::error::StoreError;

/// Which backend a [`Database`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatabaseKind {
    Sqlite,
    Postgres,
}

impl DatabaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DatabaseKind::Sqlite => "sqlite",
            DatabaseKind::Postgres => "postgres",
        }
    }
}

/// Options for [`Database::connect_with`]. `Default` is what [`Database::connect`] uses.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// PostgreSQL only: a schema (`[a-z_][a-z0-9_]*`, at most 63 bytes) created if missing
    /// and used as the `search_path` of every connection.
    pub postgres_schema: Option<String>,
    /// Maximum pool size: the PostgreSQL pool, or the SQLite reader pool (the SQLite writer
    /// pool is always one connection). Default: 10 for PostgreSQL, 4 for SQLite readers.
    pub max_connections: Option<u32>,
}

/// The two SQLite pools; see the module docs.
#[derive(Debug, Clone)]
pub struct SqlitePools {
    /// Exactly one connection: use it for every statement that writes.
    pub writer: SqlitePool,
    /// `query_only` connections for reads (the writer pool itself for `sqlite::memory:`).
    pub reader: SqlitePool,
}

/// The backend-specific pools, for store modules to `match` on.
#[derive(Debug, Clone)]
pub enum Backend {
    Sqlite(SqlitePools),
    Postgres(PgPool),
}

/// A connected database. Cheap to clone (an `Arc`); share one per process.
#[derive(Debug, Clone)]
pub struct Database {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    backend: Backend,
    /// Where it points, with any password removed (for logs and errors).
    display: String,
    /// Cross-process change counters (SQLite files only; see [`crate::epoch`]).
    epochs: crate::epoch::Epochs,
}

/// Where a URL points, once classified.
enum Target {
    SqliteFile(String),
    SqliteMemory,
    Postgres(String),
}

fn classify(url: &str) -> Result<Target, StoreError> {
    let invalid = |reason: &str| StoreError::InvalidUrl {
        url: redact(url),
        reason: reason.to_owned(),
    };
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Err(invalid(
            "it is empty; give a SQLite file path or a postgres:// URL",
        ));
    }
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Ok(Target::Postgres(trimmed.to_owned()));
    }
    if let Some(rest) = strip_prefix_ci(trimmed, "sqlite:") {
        let path = rest.strip_prefix("//").unwrap_or(rest);
        if path == ":memory:" {
            return Ok(Target::SqliteMemory);
        }
        // Drop URL query parameters (`?mode=rwc`): the options below set what we need.
        let path = path.split('?').next().unwrap_or(path);
        if path.is_empty() {
            return Err(invalid("the sqlite: URL names no file"));
        }
        return Ok(Target::SqliteFile(path.to_owned()));
    }
    if trimmed == ":memory:" {
        return Ok(Target::SqliteMemory);
    }
    if let Some((scheme, _)) = trimmed.split_once("://") {
        if !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(invalid(&format!(
                "scheme {scheme:?} is not supported; use a SQLite file path, sqlite:PATH or postgres://"
            )));
        }
    }
    Ok(Target::SqliteFile(trimmed.to_owned()))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    if s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
    {
        Some(&s[prefix.len()..])
    } else {
        None
    }
}

/// Remove a password from a URL for display.
pub(crate) fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, tail) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            match authority.rsplit_once('@') {
                Some((userinfo, host)) => {
                    let user = userinfo.split(':').next().unwrap_or("");
                    if userinfo.contains(':') {
                        format!("{scheme}://{user}:***@{host}{tail}")
                    } else {
                        format!("{scheme}://{userinfo}@{host}{tail}")
                    }
                }
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    }
}

/// Check a PostgreSQL schema name: it is interpolated into DDL, so only plain identifiers.
fn check_schema_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidUrl {
            url: name.to_owned(),
            reason: "a PostgreSQL schema name must match [a-z_][a-z0-9_]* (at most 63 bytes)"
                .into(),
        })
    }
}

/// Advisory-lock key that serializes migrations on one PostgreSQL database ("kindgi" in ASCII).
const MIGRATION_LOCK_KEY: i64 = 0x6b69_6e64_6769;

impl Database {
    /// Connect with default options. `url` is a SQLite file path, `sqlite:PATH`,
    /// `sqlite::memory:`, or a `postgres://` / `postgresql://` URL. Does not migrate.
    pub async fn connect(url: &str) -> Result<Database, StoreError> {
        Database::connect_with(url, &ConnectOptions::default()).await
    }

    /// Connect with explicit [`ConnectOptions`].
    pub async fn connect_with(url: &str, options: &ConnectOptions) -> Result<Database, StoreError> {
        let display = redact(url.trim());
        let mut epochs = crate::epoch::Epochs::default();
        let backend = match classify(url)? {
            Target::SqliteFile(path) => {
                let pools = open_sqlite_file(&path, options).await?;
                epochs = crate::epoch::Epochs::beside(&path);
                Backend::Sqlite(pools)
            }
            Target::SqliteMemory => {
                let opts =
                    sqlite_options(SqliteConnectOptions::from_str("sqlite::memory:").map_err(
                        |e| StoreError::InvalidUrl {
                            url: display.clone(),
                            reason: e.to_string(),
                        },
                    )?);
                let pool = SqlitePoolOptions::new()
                    .max_connections(1)
                    .min_connections(1)
                    .idle_timeout(None)
                    .max_lifetime(None)
                    .connect_with(opts)
                    .await
                    .map_err(|source| StoreError::Connect {
                        target: display.clone(),
                        source,
                    })?;
                Backend::Sqlite(SqlitePools {
                    writer: pool.clone(),
                    reader: pool,
                })
            }
            Target::Postgres(url) => {
                let pool = open_postgres(&url, &display, options).await?;
                epochs = crate::epoch::Epochs::notified(pool.clone());
                Backend::Postgres(pool)
            }
        };
        Ok(Database {
            inner: Arc::new(Inner {
                backend,
                display,
                epochs,
            }),
        })
    }

    /// Which backend this is.
    pub fn kind(&self) -> DatabaseKind {
        match self.inner.backend {
            Backend::Sqlite(_) => DatabaseKind::Sqlite,
            Backend::Postgres(_) => DatabaseKind::Postgres,
        }
    }

    /// The pools, to `match` on in store modules.
    pub fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    /// The SQLite pools, if this is SQLite.
    pub fn sqlite(&self) -> Option<&SqlitePools> {
        match &self.inner.backend {
            Backend::Sqlite(p) => Some(p),
            Backend::Postgres(_) => None,
        }
    }

    /// The PostgreSQL pool, if this is PostgreSQL.
    pub fn postgres(&self) -> Option<&PgPool> {
        match &self.inner.backend {
            Backend::Postgres(p) => Some(p),
            Backend::Sqlite(_) => None,
        }
    }

    /// Where this database is (URL or path, password removed).
    /// The change epochs of this database (empty for in-memory SQLite).
    pub fn epochs(&self) -> &crate::epoch::Epochs {
        &self.inner.epochs
    }

    pub fn display_target(&self) -> &str {
        &self.inner.display
    }

    /// Run a module's DDL statements in one transaction: `sqlite` on SQLite (through the
    /// writer), `postgres` on PostgreSQL (under an advisory lock, so concurrent starts do
    /// not race on `CREATE TABLE IF NOT EXISTS`). Statements must be idempotent.
    pub async fn apply_schema(
        &self,
        module: &'static str,
        sqlite: &[&str],
        postgres: &[&str],
    ) -> Result<(), StoreError> {
        let err = |source| StoreError::Migrate { module, source };
        match &self.inner.backend {
            Backend::Sqlite(p) => {
                let mut tx = p.writer.begin().await.map_err(err)?;
                for stmt in sqlite {
                    sqlx::query(stmt).execute(&mut *tx).await.map_err(err)?;
                }
                tx.commit().await.map_err(err)?;
            }
            Backend::Postgres(pool) => {
                let mut tx = pool.begin().await.map_err(err)?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(MIGRATION_LOCK_KEY)
                    .execute(&mut *tx)
                    .await
                    .map_err(err)?;
                for stmt in postgres {
                    sqlx::query(stmt).execute(&mut *tx).await.map_err(err)?;
                }
                tx.commit().await.map_err(err)?;
            }
        }
        Ok(())
    }

    /// Close every pool, waiting for connections to finish (SQLite checkpoints its WAL).
    pub async fn close(&self) {
        match &self.inner.backend {
            Backend::Sqlite(p) => {
                p.reader.close().await;
                p.writer.close().await;
            }
            Backend::Postgres(p) => p.close().await,
        }
    }
}

fn sqlite_options(base: SqliteConnectOptions) -> SqliteConnectOptions {
    base.create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true)
}

async fn open_sqlite_file(path: &str, options: &ConnectOptions) -> Result<SqlitePools, StoreError> {
    let base = sqlite_options(SqliteConnectOptions::new().filename(path));
    let connect_err = |source| StoreError::Connect {
        target: path.to_owned(),
        source,
    };
    crate::file_mode::prepare_sqlite_file(path)?;
    // One direct connection first: a path that cannot be opened fails at once (a pool
    // would retry until its acquire timeout). It creates the file and switches it to WAL.
    let probe = base.connect().await.map_err(connect_err)?;
    let _ = probe.close().await;
    // The writer stays open so the WAL index is never torn down between requests.
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(base.clone())
        .await
        .map_err(connect_err)?;
    let reader = SqlitePoolOptions::new()
        .max_connections(options.max_connections.unwrap_or(4).max(1))
        .connect_with(base.pragma("query_only", "ON"))
        .await
        .map_err(connect_err)?;
    Ok(SqlitePools { writer, reader })
}

async fn open_postgres(
    url: &str,
    display: &str,
    options: &ConnectOptions,
) -> Result<PgPool, StoreError> {
    let mut opts = PgConnectOptions::from_str(url).map_err(|e| StoreError::InvalidUrl {
        url: display.to_owned(),
        reason: e.to_string(),
    })?;
    // One direct connection first, so an unreachable server fails at once (a pool would
    // retry until its acquire timeout); it also creates the schema when one is asked for.
    let mut conn = opts.connect().await.map_err(|source| StoreError::Connect {
        target: display.to_owned(),
        source,
    })?;
    if let Some(schema) = &options.postgres_schema {
        check_schema_name(schema)?;
        sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
            .execute(&mut conn)
            .await
            .map_err(|source| StoreError::Migrate {
                module: "schema",
                source,
            })?;
        opts = opts.options([("search_path", schema.as_str())]);
    }
    let _ = conn.close().await;
    PgPoolOptions::new()
        .max_connections(options.max_connections.unwrap_or(10).max(1))
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(opts)
        .await
        .map_err(|source| StoreError::Connect {
            target: display.to_owned(),
            source,
        })
}

/// Milliseconds since the Unix epoch: the timestamp format of every table (core's clock).
pub use kindgi_core::ids::now_millis;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_urls() {
        assert!(matches!(classify("kindgi.db"), Ok(Target::SqliteFile(p)) if p == "kindgi.db"));
        assert!(
            matches!(classify("sqlite:data/k.db"), Ok(Target::SqliteFile(p)) if p == "data/k.db")
        );
        assert!(
            matches!(classify("sqlite:///tmp/k.db"), Ok(Target::SqliteFile(p)) if p == "/tmp/k.db")
        );
        assert!(matches!(
            classify("sqlite::memory:"),
            Ok(Target::SqliteMemory)
        ));
        assert!(matches!(
            classify("postgres://u@h/db"),
            Ok(Target::Postgres(_))
        ));
        assert!(matches!(
            classify("POSTGRESQL://u@h/db"),
            Ok(Target::Postgres(_))
        ));
        assert!(matches!(
            classify("mysql://u@h/db"),
            Err(StoreError::InvalidUrl { .. })
        ));
        assert!(matches!(classify("  "), Err(StoreError::InvalidUrl { .. })));
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("kindgi.db"), "kindgi.db");
    }

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(check_schema_name("test_ab12").is_ok());
        assert!(check_schema_name("x\"; DROP").is_err());
        assert!(check_schema_name("").is_err());
        assert!(check_schema_name("1abc").is_err());
    }
}
