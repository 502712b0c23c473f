//! What a source (a pack) offered but the runtime left out, and why: a declarative `spec`
//! tool in a pack, an agent whose approval rules this runtime refuses, a flow that does not
//! load. Left-out entries are not registered (nor listed by the API), so a run that names
//! one would otherwise fail with a bare "which is not registered"; the run's error reads
//! the reason from here instead (issue 21: no answer hides its cause).

use std::collections::HashMap;
use std::sync::RwLock;

/// The kind of a left-out entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeftOutKind {
    Tool,
    Agent,
    Flow,
}

impl LeftOutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeftOutKind::Tool => "tool",
            LeftOutKind::Agent => "agent",
            LeftOutKind::Flow => "flow",
        }
    }
}

/// One left-out entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub kind: LeftOutKind,
    pub id: String,
    /// Why, in a sentence (e.g. `a declarative (spec) tool; a pack's tools run in its service only`).
    pub why: String,
}

/// Entry key: (tenant, kind, id).
type Key = (String, LeftOutKind, String);

/// The book of left-out entries, by source: a source's reload replaces what it left out
/// before. Cheap to read (one read lock, no clone unless found).
#[derive(Debug, Default)]
pub struct LeftOutBook {
    inner: RwLock<Book>,
}

#[derive(Debug, Default)]
struct Book {
    by_key: HashMap<Key, (String, String)>,
    by_source: HashMap<String, Vec<Key>>,
}

impl LeftOutBook {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces what `source` left out for `tenant` with `entries`.
    pub fn replace(&self, source: &str, tenant: &str, entries: &[LeftOut]) {
        let Ok(mut book) = self.inner.write() else {
            return;
        };
        if let Some(old) = book.by_source.remove(source) {
            for key in old {
                if book.by_key.get(&key).is_some_and(|(s, _)| s == source) {
                    book.by_key.remove(&key);
                }
            }
        }
        let mut keys = Vec::with_capacity(entries.len());
        for e in entries {
            let key = (tenant.to_owned(), e.kind, e.id.clone());
            book.by_key
                .insert(key.clone(), (source.to_owned(), e.why.clone()));
            keys.push(key);
        }
        if !keys.is_empty() {
            book.by_source.insert(source.to_owned(), keys);
        }
    }

    /// Why `tenant`'s `kind` `id` was left out, naming its source: `left out of pack "p": why`.
    pub fn why(&self, tenant: &str, kind: LeftOutKind, id: &str) -> Option<String> {
        let book = self.inner.read().ok()?;
        book.by_key
            .get(&(tenant.to_owned(), kind, id.to_owned()))
            .map(|(source, why)| format!("it was left out of pack \"{source}\": {why}"))
    }

    /// `message`, followed by why the entry was left out when it was.
    pub fn explain(&self, tenant: &str, kind: LeftOutKind, id: &str, message: String) -> String {
        match self.why(tenant, kind, id) {
            Some(why) => format!("{message} ({why})"),
            None => message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: LeftOutKind, id: &str, why: &str) -> LeftOut {
        LeftOut {
            kind,
            id: id.into(),
            why: why.into(),
        }
    }

    #[test]
    fn a_reload_replaces_what_the_source_left_out() {
        let book = LeftOutBook::new();
        book.replace("p", "t", &[entry(LeftOutKind::Tool, "x.a", "a spec tool")]);
        assert_eq!(
            book.why("t", LeftOutKind::Tool, "x.a").as_deref(),
            Some("it was left out of pack \"p\": a spec tool")
        );
        assert_eq!(book.why("other", LeftOutKind::Tool, "x.a"), None);
        assert_eq!(book.why("t", LeftOutKind::Agent, "x.a"), None);
        book.replace("p", "t", &[entry(LeftOutKind::Agent, "x.b", "refused")]);
        assert_eq!(book.why("t", LeftOutKind::Tool, "x.a"), None);
        assert!(book.why("t", LeftOutKind::Agent, "x.b").is_some());
        book.replace("p", "t", &[]);
        assert_eq!(book.why("t", LeftOutKind::Agent, "x.b"), None);
    }

    #[test]
    fn another_source_keeps_its_entries() {
        let book = LeftOutBook::new();
        book.replace("p", "t", &[entry(LeftOutKind::Flow, "f", "bad")]);
        book.replace("q", "t", &[entry(LeftOutKind::Flow, "g", "bad too")]);
        book.replace("p", "t", &[]);
        assert!(book.why("t", LeftOutKind::Flow, "g").is_some());
        assert_eq!(
            book.explain("t", LeftOutKind::Flow, "f", "m".into()),
            "m".to_owned()
        );
    }
}
