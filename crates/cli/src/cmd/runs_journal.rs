//! Reading a run's journal: one page, or every page joined (`kindgi runs journal`, and
//! `kindgi runs resume` after it resumes). In a file of its own so both commands import it
//! and neither imports the other.

use serde_json::{Value, json};

use crate::api::{CliError, push, segment};

/// The most journal pages read to print a whole journal.
pub const MAX_JOURNAL_PAGES: usize = 200;

/// One journal page, or (without `limit`) every page joined.
pub async fn journal(
    client: &crate::api::ApiClient,
    id: &str,
    since: Option<u64>,
    limit: Option<u32>,
    cursor: Option<String>,
) -> Result<Value, CliError> {
    let path = format!("/v1/runs/{}/journal", segment(id));
    let mut q: Vec<(&'static str, String)> = Vec::new();
    push(&mut q, "limit", limit.map(|l| l.to_string()));
    push(&mut q, "since", since.map(|s| s.to_string()));
    if limit.is_some() {
        push(&mut q, "cursor", cursor);
        return client.get(&path, q).await;
    }
    let mut all: Vec<Value> = Vec::new();
    let mut cursor = cursor;
    for _ in 0..MAX_JOURNAL_PAGES {
        let mut query = q.clone();
        push(&mut query, "cursor", cursor.take());
        let page = client.get(&path, query).await?;
        if let Some(d) = page.get("data").and_then(Value::as_array) {
            all.extend(d.iter().cloned());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) if page.get("hasMore") == Some(&Value::Bool(true)) => {
                cursor = Some(c.to_owned())
            }
            _ => return Ok(json!({"data": all, "hasMore": false})),
        }
    }
    Err(CliError::Local(format!(
        "the journal of run {id} is longer than {MAX_JOURNAL_PAGES} pages; read it with --limit and --cursor"
    )))
}
