//! One statement, both databases: [`on_pool!`](crate::on_pool) runs a statement written
//! once, with `$N` placeholders, on whichever backend a [`Database`](crate::Database) is.
//!
//! sqlx binds `$N` positionally on SQLite as well as on PostgreSQL, and the columns this
//! crate uses decode the same way on both (TEXT, BIGINT milliseconds, booleans: SQLite's
//! INTEGER 0/1 and PostgreSQL's BOOLEAN both decode to `bool`). So a store function writes
//! its SQL and its binds once; the macro expands the body once per backend, with `$pool`
//! bound to that backend's pool (SQLite: the writer pool for `write`, the reader pool for
//! `read`). Both expansions must produce the same type: map a `QueryResult` to
//! `rows_affected()` and decode rows inside the body.
//!
//! ```ignore
//! let n = on_pool!(self.db, write, |pool| {
//!     sqlx::query("UPDATE runs SET status = $2 WHERE id = $1")
//!         .bind(id).bind(status)
//!         .execute(pool).await
//!         .map(|r| r.rows_affected())
//! })
//! .map_err(StoreError::query("runs.update"))?;
//! ```
//!
//! Transactions work the same way: `let mut tx = pool.begin().await?;` inside the body.

/// Runs `$body` with `$pool` bound to the backend's pool; see the [module docs](self).
#[macro_export]
macro_rules! on_pool {
    ($db:expr, write, |$pool:ident| $body:expr) => {
        match $db.backend() {
            $crate::Backend::Sqlite(pools) => {
                let $pool = &pools.writer;
                $body
            }
            $crate::Backend::Postgres($pool) => $body,
        }
    };
    ($db:expr, read, |$pool:ident| $body:expr) => {
        match $db.backend() {
            $crate::Backend::Sqlite(pools) => {
                let $pool = &pools.reader;
                $body
            }
            $crate::Backend::Postgres($pool) => $body,
        }
    };
}

/// A bind value of a statement built at run time (a list's `WHERE` clause and its
/// placeholders, numbered as they are added).
pub(crate) enum Bind {
    Text(String),
    Int(i64),
}

/// Binds each of `$binds` (a `&[Bind]`) to the query `$q`, in order.
macro_rules! bind_all {
    ($q:expr, $binds:expr) => {{
        let mut q = $q;
        for b in $binds {
            q = match b {
                $crate::sql::Bind::Text(s) => q.bind(s),
                $crate::sql::Bind::Int(i) => q.bind(*i),
            };
        }
        q
    }};
}
pub(crate) use bind_all;
