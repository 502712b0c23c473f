//! Runs and journals in memory ([`MemoryRunStore`]): lost with the process; for tests and
//! throw-away runtimes.

use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::error::StorageError;
use crate::ids::parse_millis;
use crate::ports::{RunQuery, RunStore};
use crate::run::{JournalEntry, RunRecord};

/// Runs and journals in memory: lost with the process.
#[derive(Debug, Default)]
pub struct MemoryRunStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    runs: HashMap<String, RunRecord>,
    order: Vec<String>,
    journals: HashMap<String, Vec<JournalEntry>>,
}

impl MemoryRunStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, MemoryInner>, StorageError> {
        self.inner
            .lock()
            .map_err(|_| StorageError::poisoned("runs.lock"))
    }
}

#[async_trait]
impl RunStore for MemoryRunStore {
    async fn insert_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        let mut g = self.lock()?;
        if g.runs.contains_key(&run.id) {
            return Err(StorageError::Conflict {
                op: "runs.insert_run",
                what: format!("run {}", run.id),
                source: None,
            });
        }
        g.runs.insert(run.id.clone(), run.clone());
        g.order.push(run.id.clone());
        Ok(())
    }

    async fn update_run(&self, run: &RunRecord) -> Result<(), StorageError> {
        let mut g = self.lock()?;
        match g.runs.get_mut(&run.id) {
            Some(r) => {
                *r = run.clone();
                Ok(())
            }
            None => Err(StorageError::NotFound {
                op: "runs.update_run",
                what: format!("run {}", run.id),
            }),
        }
    }

    async fn get_run(&self, id: &str) -> Result<Option<RunRecord>, StorageError> {
        Ok(self.lock()?.runs.get(id).cloned())
    }

    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunRecord>, StorageError> {
        let g = self.lock()?;
        let mut out: Vec<RunRecord> = g
            .runs
            .values()
            .filter(|r| query.matches(r))
            .filter(|r| {
                query.after.as_ref().is_none_or(|(at, id)| {
                    let c = parse_millis(&r.created_at);
                    c < *at || (c == *at && r.id < *id)
                })
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| {
            (parse_millis(&b.created_at), &b.id).cmp(&(parse_millis(&a.created_at), &a.id))
        });
        if let Some(l) = query.limit {
            out.truncate(l as usize);
        }
        Ok(out)
    }

    async fn append(&self, run_id: &str, entries: &[JournalEntry]) -> Result<(), StorageError> {
        let mut g = self.lock()?;
        let journal = g.journals.entry(run_id.to_owned()).or_default();
        for e in entries {
            if journal.iter().any(|x| x.sequence == e.sequence) {
                return Err(StorageError::DuplicateSequence {
                    run_id: run_id.to_owned(),
                    sequence: e.sequence,
                });
            }
            journal.push(e.clone());
        }
        Ok(())
    }

    async fn journal(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: Option<u32>,
    ) -> Result<Vec<JournalEntry>, StorageError> {
        let g = self.lock()?;
        let after = after.unwrap_or(0);
        let mut out: Vec<JournalEntry> = g
            .journals
            .get(run_id)
            .map(|j| j.iter().filter(|e| e.sequence > after).cloned().collect())
            .unwrap_or_default();
        out.sort_by_key(|e| e.sequence);
        if let Some(l) = limit {
            out.truncate(l as usize);
        }
        Ok(out)
    }
}
