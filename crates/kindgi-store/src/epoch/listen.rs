//! Change epochs on PostgreSQL: in-process counters moved on by `LISTEN`ed notifications.
//!
//! A trigger on each watched table ([`DDL`]) sends `pg_notify('kindgi_changes',
//! '<schema>.<table>')` in the changing transaction, so every process writing the database —
//! this binary, `kindgi tokens revoke --database`, or plain SQL — announces its change when
//! it commits, and only then. Each process holds one extra connection that `LISTEN`s and
//! moves the matching counter on when a notification of its own schema arrives.
//!
//! The counters are an epoch only while that connection is listening: until the first
//! `LISTEN` succeeds, and from a lost connection until it is listening again, there is no
//! epoch (`None`: callers do not cache), and every counter moves on when listening starts
//! again, because notifications sent in between were lost.
//!
//! A notification is delivered asynchronously: a process sees another's change as soon as
//! PostgreSQL's message reaches it (well under a millisecond on one host), not before. A
//! process's own changes move its counters at once ([`Notified::bump_local`]), and a writer
//! that announces its change ([`super::Epochs::announced`]) waits until its own connection
//! has heard the notification: by then PostgreSQL is delivering it to every listener, so
//! the writer's caller gets its answer after the other processes got the news, not before
//! (all but a scheduling hair).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};

use super::EpochKind;

/// The notification channel.
const CHANNEL: &str = "kindgi_changes";

/// How long to wait before listening again after the connection failed.
const RETRY: Duration = Duration::from_secs(1);

/// The triggers (PostgreSQL migration DDL, idempotent). An `api_keys` update that changes
/// `last_used_at` (recorded as keys are used) and nothing else is not a change; every other
/// update of a row is announced, even one that rewrote the same values (a writer that waits
/// for its announcement, see [`Notified::heard_past`], then always gets one).
pub(crate) const DDL: &[&str] = &[
    "CREATE OR REPLACE FUNCTION kindgi_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND TG_NARGS > 0 AND to_jsonb(OLD) <> to_jsonb(NEW)
     AND (to_jsonb(OLD) - TG_ARGV[0]) = (to_jsonb(NEW) - TG_ARGV[0]) THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('kindgi_changes', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  RETURN NULL;
END $$",
    "DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'kindgi_changed' AND tgrelid = 'api_keys'::regclass) THEN
    CREATE TRIGGER kindgi_changed AFTER UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION kindgi_changed('last_used_at');
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'kindgi_changed' AND tgrelid = 'service_accounts'::regclass) THEN
    CREATE TRIGGER kindgi_changed AFTER UPDATE OR DELETE ON service_accounts
      FOR EACH ROW EXECUTE FUNCTION kindgi_changed();
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'kindgi_changed' AND tgrelid = 'tool_versions'::regclass) THEN
    CREATE TRIGGER kindgi_changed AFTER UPDATE OR DELETE ON tool_versions
      FOR EACH ROW EXECUTE FUNCTION kindgi_changed();
  END IF;
END $$",
];

/// Which epoch a change to `table` moves.
fn kind_of(table: &str) -> Option<EpochKind> {
    match table {
        "api_keys" | "service_accounts" => Some(EpochKind::Keys),
        "tool_versions" => Some(EpochKind::Registry),
        _ => None,
    }
}

/// What the listening task and the readers share.
#[derive(Debug, Default)]
struct Counters {
    keys: AtomicU64,
    registry: AtomicU64,
    /// Whether the connection is listening (the counters are an epoch).
    live: AtomicBool,
    /// Woken at every move, for [`Notified::moved_past`].
    moved: tokio::sync::Notify,
    /// Notifications heard, per kind (what a writer waits on, see [`Notified::heard_past`]).
    heard_keys: AtomicU64,
    heard_registry: AtomicU64,
}

impl Counters {
    fn of(&self, kind: EpochKind) -> &AtomicU64 {
        match kind {
            EpochKind::Keys => &self.keys,
            EpochKind::Registry => &self.registry,
        }
    }

    fn bump(&self, kind: EpochKind) {
        self.of(kind).fetch_add(1, Ordering::AcqRel);
        self.moved.notify_waiters();
    }

    fn heard(&self, kind: EpochKind) -> &AtomicU64 {
        match kind {
            EpochKind::Keys => &self.heard_keys,
            EpochKind::Registry => &self.heard_registry,
        }
    }

    fn bump_all(&self) {
        self.bump(EpochKind::Keys);
        self.bump(EpochKind::Registry);
    }

    /// Listening stopped: no epoch, and whatever was cached is stale.
    fn lost(&self) {
        self.live.store(false, Ordering::Release);
        self.bump_all();
    }

    /// Listening (again): changes made while nobody listened are unknown, so move on first.
    fn listening(&self) {
        self.bump_all();
        self.live.store(true, Ordering::Release);
        self.moved.notify_waiters();
    }
}

/// The epochs of one PostgreSQL database; the listening task starts at the first read.
#[derive(Debug)]
pub(crate) struct Notified {
    pool: PgPool,
    counters: Arc<Counters>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Notified {
    pub(crate) fn new(pool: PgPool) -> Notified {
        Notified {
            pool,
            counters: Arc::default(),
            task: Mutex::new(None),
        }
    }

    /// The epoch of `kind`, or `None` while not listening (which starts the listener).
    pub(crate) fn current(&self, kind: EpochKind) -> Option<u64> {
        // `live` before the counter: a counter read after `live` is never older than the
        // `listening()` that set it.
        if self.counters.live.load(Ordering::Acquire) {
            return Some(self.counters.of(kind).load(Ordering::Acquire));
        }
        self.start();
        None
    }

    /// This process changed `kind`: its own caches are stale at once (other processes wait
    /// for the trigger's notification).
    pub(crate) fn bump_local(&self, kind: EpochKind) {
        self.counters.bump(kind);
    }

    /// Waits until the epoch of `kind` is no longer `before` (from `None`: until listening).
    pub(crate) async fn moved_past(&self, kind: EpochKind, before: Option<u64>) {
        loop {
            let moved = self.counters.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if self.current(kind) != before {
                return;
            }
            moved.await;
        }
    }

    /// How many notifications of `kind` this process has heard, when listening.
    pub(crate) fn heard(&self, kind: EpochKind) -> Option<u64> {
        self.counters
            .live
            .load(Ordering::Acquire)
            .then(|| self.counters.heard(kind).load(Ordering::Acquire))
    }

    /// Waits, at most `limit`, until a notification of `kind` after the `before`th is heard;
    /// whether one was.
    pub(crate) async fn heard_past(&self, kind: EpochKind, before: u64, limit: Duration) -> bool {
        let wait = async {
            loop {
                let moved = self.counters.moved.notified();
                tokio::pin!(moved);
                moved.as_mut().enable();
                if self.counters.heard(kind).load(Ordering::Acquire) > before {
                    return;
                }
                moved.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    fn start(&self) {
        let Ok(mut task) = self.task.lock() else {
            return;
        };
        if task.is_some() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        *task = Some(runtime.spawn(listen(self.pool.clone(), self.counters.clone())));
    }
}

impl Drop for Notified {
    fn drop(&mut self) {
        if let Ok(mut task) = self.task.lock()
            && let Some(task) = task.take()
        {
            task.abort();
        }
    }
}

/// Listens until `pool` closes, listening again after each failure.
async fn listen(pool: PgPool, counters: Arc<Counters>) {
    // Its own one-connection pool, so listening never takes a connection from requests.
    let own = PgPoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(10))
        .connect_lazy_with((*pool.connect_options()).clone());
    loop {
        tokio::select! {
            () = pool.close_event() => break,
            () = listen_once(&own, &counters) => {}
        }
        counters.lost();
        tokio::select! {
            () = pool.close_event() => break,
            () = tokio::time::sleep(RETRY) => {}
        }
    }
    counters.lost();
    own.close().await;
}

/// One listening connection, until it fails.
async fn listen_once(own: &PgPool, counters: &Counters) {
    let mut listener = match subscribe(own).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot LISTEN for changes; reads are not cached until it can");
            return;
        }
    };
    let schema = match sqlx::query_scalar::<_, String>("SELECT current_schema()")
        .fetch_one(&mut listener)
        .await
    {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the current schema; reads are not cached");
            return;
        }
    };
    counters.listening();
    loop {
        match listener.try_recv().await {
            Ok(Some(n)) => {
                let kind = n
                    .payload()
                    .split_once('.')
                    .filter(|(s, _)| *s == schema)
                    .and_then(|(_, table)| kind_of(table));
                if let Some(kind) = kind {
                    counters.heard(kind).fetch_add(1, Ordering::AcqRel);
                    counters.bump(kind);
                }
            }
            // The connection was lost and is listening again: what was sent meanwhile is lost.
            Ok(None) => counters.bump_all(),
            Err(e) => {
                tracing::warn!(error = %e, "the LISTEN connection failed; reads are not cached until it is back");
                return;
            }
        }
    }
}

async fn subscribe(own: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(own).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_map_to_their_epoch() {
        assert_eq!(kind_of("api_keys"), Some(EpochKind::Keys));
        assert_eq!(kind_of("service_accounts"), Some(EpochKind::Keys));
        assert_eq!(kind_of("tool_versions"), Some(EpochKind::Registry));
        assert_eq!(kind_of("runs"), None);
    }

    #[test]
    fn losing_the_connection_ends_the_epoch_and_moves_it_on() {
        let c = Counters::default();
        c.listening();
        let before = c.keys.load(Ordering::Acquire);
        c.lost();
        assert!(!c.live.load(Ordering::Acquire));
        c.listening();
        assert!(c.live.load(Ordering::Acquire));
        assert_eq!(c.keys.load(Ordering::Acquire), before + 2);
    }
}
