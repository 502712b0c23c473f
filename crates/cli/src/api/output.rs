//! How API commands print (platform-api.md §12.2): pretty JSON by default (`--json`),
//! `--raw` one line, `--table` for list commands (the next page's cursor on stderr as
//! `Next page: --cursor=…`), `--quiet` nothing.

use std::io::Write as _;

use serde_json::Value;

/// The output mode of one command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    pub raw: bool,
    pub table: bool,
    pub quiet: bool,
}

/// A table column: a header and how to read the cell from a row.
pub type Column = (&'static str, fn(&Value) -> String);

impl Output {
    /// Print `value` as JSON.
    pub fn json(&self, value: &Value) {
        if self.quiet {
            return;
        }
        let text = if self.raw {
            serde_json::to_string(value)
        } else {
            serde_json::to_string_pretty(value)
        };
        if let Ok(t) = text {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{t}");
            let _ = out.flush();
        }
    }

    /// Print a page (`{data, hasMore, nextCursor?}`): a table of `columns` with `--table`,
    /// else the JSON.
    pub fn page(&self, page: &Value, columns: &[Column]) {
        if !self.table || columns.is_empty() {
            return self.json(page);
        }
        if self.quiet {
            return;
        }
        let rows: Vec<Vec<String>> = page
            .get("data")
            .and_then(Value::as_array)
            .map(|d| {
                d.iter()
                    .map(|r| columns.iter().map(|(_, f)| f(r)).collect())
                    .collect()
            })
            .unwrap_or_default();
        let mut widths: Vec<usize> = columns.iter().map(|(h, _)| h.chars().count()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: Vec<String>| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            parts.join("  ").trim_end().to_owned()
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{}",
            line(columns.iter().map(|(h, _)| (*h).to_owned()).collect())
        );
        for row in rows {
            let _ = writeln!(out, "{}", line(row));
        }
        let _ = out.flush();
        if let Some(c) = page.get("nextCursor").and_then(Value::as_str) {
            eprintln!("Next page: --cursor={c}");
        }
    }
}

/// A string field of a row, or `-`.
pub fn cell(row: &Value, pointer: &str) -> String {
    match row.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(v) => v.to_string(),
    }
}
