//! The API commands' one failure type and exit-code table (platform-api.md §12.2):
//!
//! | exit | what |
//! |---|---|
//! | 0 | success (`runs resume`: the run waits for nothing) |
//! | 1 | an API error, a network failure, a local failure (a file key for another address, an unreadable config), a failed run from `runs start` |
//! | 2 | a usage error: `Error: <what>` then `Usage: kindgi <cmd> --help` |
//! | 3 / 4 | `runs resume`: waits for an approval / on the runtime |
//! | 130 | Ctrl-C while `runs start` follows a run (the run goes on) |
//!
//! API errors print `Error [<tag>]: <message>`, the tag as the official client classifies the
//! wire error: not-found codes (and any 404/410) → `not-found`; 401/403 → `auth`; 429 →
//! `rate-limited`; 409 → the wire code; 400/413 → `invalid-request` (with each issue on its
//! own line); any other status → the wire code; a transport failure → `network`. A body that
//! is not an error envelope reads `HTTP <status> without recognizable error envelope`.

use std::process::ExitCode;

use serde_json::Value;

/// Why an API command stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Called wrong: exit 2.
    Usage(String),
    /// Failed here, before or after the API (exit 1): `Error: <message>`.
    Local(String),
    /// The API could not be reached (exit 1): `Error [network]: <message>`.
    Network(String),
    /// The API answered an error (exit 1).
    Api {
        status: u16,
        code: Option<String>,
        message: String,
        issues: Vec<String>,
        /// The whole answer body (printed with `--verbose`).
        raw: Box<Value>,
    },
}

impl CliError {
    /// The API error for an HTTP answer `status` with `body`.
    pub fn from_answer(status: u16, body: &Value) -> CliError {
        let Some(error) = body.get("error").filter(|e| e.is_object()) else {
            return CliError::Api {
                status,
                code: None,
                message: format!("HTTP {status} without recognizable error envelope"),
                issues: Vec::new(),
                raw: Box::new(body.clone()),
            };
        };
        let code = error.get("code").and_then(Value::as_str).map(str::to_owned);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("Server error: {}", code.as_deref().unwrap_or("unknown")));
        let issues = error
            .pointer("/details/issues")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(issue_line).collect())
            .unwrap_or_default();
        CliError::Api {
            status,
            code,
            message,
            issues,
            raw: Box::new(body.clone()),
        }
    }

    /// The exit code.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::from(1),
        }
    }

    /// Print the error on stderr (`usage` is the command, e.g. `runs start`; `verbose` adds
    /// the whole answer body); returns the exit code.
    pub fn report(&self, usage: &str, quiet: bool, verbose: bool) -> ExitCode {
        if !quiet || matches!(self, CliError::Usage(_)) {
            eprintln!("{}", self.render(usage));
            if let (true, CliError::Api { raw, .. }) = (verbose, self) {
                eprintln!("{}", serde_json::to_string_pretty(raw).unwrap_or_default());
            }
        }
        self.exit_code()
    }

    /// The text [`CliError::report`] prints.
    pub fn render(&self, usage: &str) -> String {
        match self {
            CliError::Usage(m) => format!("Error: {m}\nUsage: kindgi {usage} --help"),
            CliError::Local(m) => format!("Error: {m}"),
            CliError::Network(m) => format!("Error [network]: {m}"),
            CliError::Api {
                status,
                code,
                message,
                issues,
                ..
            } => {
                let tag = tag(*status, code.as_deref());
                let mut out = format!("Error [{tag}]: {message}");
                if tag == "invalid-request" {
                    for i in issues {
                        out.push_str("\n  ✗ ");
                        out.push_str(i);
                    }
                }
                out
            }
        }
    }
}

fn issue_line(issue: &Value) -> String {
    let path = issue
        .get("instancePath")
        .or_else(|| issue.get("path"))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .unwrap_or("<root>");
    let message = issue
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("invalid");
    format!("{path}: {message}")
}

/// The tag of `Error [<tag>]` for a wire error (see the module docs).
pub fn tag(status: u16, code: Option<&str>) -> String {
    let code_str = code.unwrap_or("unknown");
    let not_found = code_str == "not-found" || code_str.ends_with("-not-found");
    match status {
        _ if not_found => "not-found".into(),
        404 | 410 => "not-found".into(),
        401 | 403 => "auth".into(),
        429 => "rate-limited".into(),
        409 => code.unwrap_or("conflict").into(),
        400 | 413 => "invalid-request".into(),
        _ => code.map_or_else(|| format!("http-{status}"), str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_follow_the_official_client() {
        assert_eq!(tag(404, Some("run-not-found")), "not-found");
        assert_eq!(tag(410, Some("tool-gone")), "not-found");
        assert_eq!(tag(401, Some("auth-revoked")), "auth");
        assert_eq!(tag(403, Some("role-exceeds-principal")), "auth");
        assert_eq!(tag(429, Some("approvals-pending-limit")), "rate-limited");
        assert_eq!(
            tag(409, Some("approval-already-decided")),
            "approval-already-decided"
        );
        assert_eq!(tag(400, Some("bad-input")), "invalid-request");
        assert_eq!(tag(500, Some("journal-error")), "journal-error");
        assert_eq!(
            tag(422, Some("run-resume-not-supported")),
            "run-resume-not-supported"
        );
    }

    #[test]
    fn rendering() {
        let e = CliError::from_answer(
            404,
            &json!({"error": {"code": "run-not-found", "message": "No run"}}),
        );
        assert_eq!(e.render("runs get"), "Error [not-found]: No run");
        let e = CliError::from_answer(502, &json!("<html>"));
        assert_eq!(
            e.render("x"),
            "Error [http-502]: HTTP 502 without recognizable error envelope"
        );
        let e = CliError::from_answer(
            400,
            &json!({"error": {"code": "validation-failed", "message": "bad", "details": {"issues": [{"instancePath": "/a", "message": "must be string"}]}}}),
        );
        assert_eq!(
            e.render("x"),
            "Error [invalid-request]: bad\n  ✗ /a: must be string"
        );
        assert_eq!(
            CliError::Usage("no".into()).render("runs get"),
            "Error: no\nUsage: kindgi runs get --help"
        );
    }
}
