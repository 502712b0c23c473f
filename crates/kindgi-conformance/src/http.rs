//! The kit's HTTP side: raw requests (any method, body, content type, token) and the
//! assertions the checks make on the answers. Every assertion returns `Err(description)`
//! naming what was expected and what came back.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

/// An answer, kept whole.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_str(&self.text)
            .map_err(|e| format!("body is not JSON ({e}): {}", short(&self.text)))
    }

    pub fn expect_status(&self, status: u16) -> Result<&Self, String> {
        if self.status == status {
            Ok(self)
        } else {
            Err(format!(
                "expected HTTP {status}, got {} {}",
                self.status,
                short(&self.text)
            ))
        }
    }

    /// Status and exact JSON body.
    pub fn expect(&self, status: u16, body: &Value) -> Result<&Self, String> {
        self.expect_status(status)?;
        let got = self.json()?;
        if &got == body {
            Ok(self)
        } else {
            Err(format!("expected body {body}, got {got}"))
        }
    }

    pub fn expect_header(&self, name: &str, value: &str) -> Result<&Self, String> {
        match self.header(name) {
            Some(v) if v == value => Ok(self),
            Some(v) => Err(format!("expected header {name}: {value}, got {v:?}")),
            None => Err(format!("expected header {name}: {value}, it is missing")),
        }
    }

    pub fn expect_json_content_type(&self) -> Result<&Self, String> {
        self.expect_header("content-type", "application/json; charset=utf-8")
    }

    /// A 200 whose body is a response message (`$defs/response`): returns it.
    pub fn message(&self) -> Result<Value, String> {
        self.expect_status(200)?;
        let body = self.json()?;
        check_response_shape(&body)?;
        Ok(body)
    }

    /// A 200 `result` message: returns its output.
    pub fn result(&self) -> Result<Value, String> {
        let m = self.message()?;
        if m["kind"] != "result" {
            return Err(format!("expected a result, got {m}"));
        }
        Ok(m["output"].clone())
    }

    /// A 200 `error` message with `code`: returns the message.
    pub fn error(&self, code: &str) -> Result<Value, String> {
        let m = self.message()?;
        if m["kind"] != "error" || m["code"] != code {
            return Err(format!(
                "expected an error message with code {code:?}, got {m}"
            ));
        }
        Ok(m)
    }
}

/// `$defs/response`: result, check-result or error, with the fields the schema requires.
pub fn check_response_shape(m: &Value) -> Result<(), String> {
    let bad = |why: &str| Err(format!("not a valid response message ({why}): {m}"));
    if !m.is_object() {
        return bad("not an object");
    }
    if !crate::http::is_v2(&m["v"]) {
        return bad("`v` is not 2");
    }
    match m["kind"].as_str() {
        Some("result") => {
            if m.get("output").is_none() {
                return bad("a result needs `output`");
            }
        }
        Some("check-result") => {
            if !m["result"]["passed"].is_boolean() {
                return bad("a check-result needs a boolean `result.passed`");
            }
        }
        Some("error") => {
            const CODES: [&str; 14] = [
                "input-validation-failed",
                "output-validation-failed",
                "handler-import-failed",
                "handler-shape-invalid",
                "handler-throw",
                "check-shape-invalid",
                "malformed-message",
                "unknown-protocol-version",
                "unexpected-message-kind",
                "tool-not-in-pack",
                "check-not-in-pack",
                "tool-version-mismatch",
                "deadline-exceeded",
                "cancelled",
            ];
            if !m["code"].as_str().is_some_and(|c| CODES.contains(&c)) {
                return bad("`code` is not one of the 14 error codes");
            }
            if !m["message"].is_string() {
                return bad("an error needs a string `message`");
            }
            const KEYS: [&str; 8] = [
                "v", "kind", "code", "message", "toolId", "checkId", "cause", "issues",
            ];
            if let Some(k) = m
                .as_object()
                .and_then(|o| o.keys().find(|k| !KEYS.contains(&k.as_str())))
            {
                return bad(&format!("an error has no `{k}` field"));
            }
            if let Some(issues) = m.get("issues") {
                let ok = issues.as_array().is_some_and(|a| {
                    a.iter()
                        .all(|i| i["instancePath"].is_string() && i["message"].is_string())
                });
                if !ok {
                    return bad("every issue needs string `instancePath` and `message`");
                }
            }
        }
        _ => return bad("`kind` is not result, check-result or error"),
    }
    Ok(())
}

pub fn is_v2(v: &Value) -> bool {
    v.as_u64() == Some(2) || v.as_f64() == Some(2.0)
}

/// `$defs/info`: the required fields and their types.
pub fn check_info_shape(info: &Value) -> Result<(), String> {
    let bad = |why: &str| Err(format!("not a valid info ({why}): {info}"));
    if !is_v2(&info["protocol"]) {
        return bad("`protocol` is not 2");
    }
    for key in ["packId", "packVersion", "artifactVersion"] {
        if !info[key].is_string() {
            return bad(&format!("`{key}` is not a string"));
        }
    }
    let tools_ok = info["tools"].as_array().is_some_and(|t| {
        t.iter().all(|e| {
            e["id"].is_string() && (e.get("version").is_none() || e["version"].is_string())
        })
    });
    if !tools_ok {
        return bad("`tools` is not a list of {id, version?}");
    }
    if !info["checks"]
        .as_array()
        .is_some_and(|c| c.iter().all(Value::is_string))
    {
        return bad("`checks` is not a list of strings");
    }
    if let Some(m) = info.get("missingEnv")
        && !m.as_array().is_some_and(|c| c.iter().all(Value::is_string))
    {
        return bad("`missingEnv` is not a list of strings");
    }
    Ok(())
}

/// The issue of an error message matching every field of `want`, else a description.
pub fn find_issue<'a>(message: &'a Value, want: &Value) -> Result<&'a Value, String> {
    let issues = message["issues"]
        .as_array()
        .ok_or_else(|| format!("expected `issues`, got {message}"))?;
    issues
        .iter()
        .find(|i| contains(i, want))
        .ok_or_else(|| format!("expected an issue with {want}, got {}", message["issues"]))
}

/// `value` has every field of `want` (recursively for objects).
pub fn contains(value: &Value, want: &Value) -> bool {
    match (value, want) {
        (Value::Object(v), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| v.get(k).is_some_and(|vv| contains(vv, wv))),
        _ => value == want,
    }
}

pub fn short(text: &str) -> String {
    if text.len() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text.to_owned()
    }
}

/// One request to the service under test.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub method: Method,
    pub path: &'a str,
    /// Send the service's own token.
    pub auth: bool,
    /// Send this token instead.
    pub token: Option<String>,
    pub content_type: Option<&'a str>,
    pub body: Option<Vec<u8>>,
    pub headers: Vec<(&'a str, String)>,
    pub timeout: Duration,
}

impl<'a> Call<'a> {
    pub fn get(path: &'a str) -> Self {
        Self {
            method: Method::GET,
            path,
            auth: false,
            token: None,
            content_type: None,
            body: None,
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
        }
    }
    pub fn post(path: &'a str) -> Self {
        Self {
            method: Method::POST,
            ..Self::get(path)
        }
    }
    pub fn auth(mut self) -> Self {
        self.auth = true;
        self
    }
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    pub fn json(mut self, body: &Value) -> Self {
        self.content_type = Some("application/json");
        self.body = Some(body.to_string().into_bytes());
        self
    }
    pub fn raw(mut self, content_type: Option<&'a str>, body: impl Into<Vec<u8>>) -> Self {
        self.content_type = content_type;
        self.body = Some(body.into());
        self
    }
    pub fn header(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub async fn send(
        self,
        http: &reqwest::Client,
        base: &str,
        service_token: &str,
    ) -> Result<Reply, String> {
        let url = format!("{base}{}", self.path);
        let mut req = http
            .request(self.method.clone(), &url)
            .timeout(self.timeout);
        if self.auth {
            req = req.header("kindgi-pack-token", service_token);
        } else if let Some(t) = &self.token {
            req = req.header("kindgi-pack-token", t.as_str());
        }
        if let Some(ct) = self.content_type {
            req = req.header("content-type", ct);
        }
        for (k, v) in &self.headers {
            req = req.header(*k, v.as_str());
        }
        if let Some(b) = self.body {
            req = req.body(b);
        }
        let res = req
            .send()
            .await
            .map_err(|e| format!("{} {}: no answer ({e})", self.method, self.path))?;
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res
            .text()
            .await
            .map_err(|e| format!("{} {}: body failed ({e})", self.method, self.path))?;
        Ok(Reply {
            status,
            headers,
            text,
        })
    }
}
