//! The pack service's stderr records in the kindgi.log JSON-lines format: one JSON object per
//! line — `time`, `level`, `severity`, `subsystem`, `message` first, then correlation ids,
//! then the event's fields, then `inMessage`. Lifecycle events (`listening`, `boot-failed`,
//! `config-invalid`, `draining`, `stopped`) are written whatever the level and carry their
//! name as both `event` and `kind`. Secret-looking keys are redacted before anything is
//! written, so a record can never carry a secret by accident.
//!
//! Configuration comes from `KINDGI_LOG_LEVEL`, `KINDGI_LOG_LEVELS`, `KINDGI_LOG_FORMAT` and
//! `NO_COLOR`; a bad value is a problem naming the variable.

use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// A record's level, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
            Level::Trace => "trace",
        }
    }

    /// The Cloud Logging severity (`trace` is `DEBUG`).
    pub fn severity(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARNING",
            Level::Info => "INFO",
            Level::Debug | Level::Trace => "DEBUG",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "error" => Some(Level::Error),
            "warn" => Some(Level::Warn),
            "info" => Some(Level::Info),
            "debug" => Some(Level::Debug),
            "trace" => Some(Level::Trace),
            _ => None,
        }
    }
}

/// How records are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Pretty,
}

/// The logging configuration.
#[derive(Debug, Clone)]
pub struct LogConfig {
    pub level: Level,
    /// Per-subsystem levels (`pack.tool=debug`); the longest matching prefix wins.
    pub levels: Vec<(String, Level)>,
    pub format: Format,
    pub color: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            level: Level::Info,
            levels: Vec::new(),
            format: Format::Json,
            color: false,
        }
    }
}

const LEVEL_NAMES: &str = "error, warn, info, debug, trace";

impl LogConfig {
    /// Reads the `KINDGI_LOG_*` variables through `get`; every bad value is one problem.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, Vec<String>> {
        let mut problems = Vec::new();
        let mut config = LogConfig::default();
        if let Some(raw) = get("KINDGI_LOG_LEVEL").filter(|v| !v.trim().is_empty()) {
            match Level::parse(raw.trim()) {
                Some(level) => config.level = level,
                None => problems.push(format!(
                    "KINDGI_LOG_LEVEL must be one of {LEVEL_NAMES}, not {}",
                    Value::String(raw.clone())
                )),
            }
        }
        if let Some(raw) = get("KINDGI_LOG_LEVELS").filter(|v| !v.trim().is_empty()) {
            for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                match part
                    .split_once('=')
                    .map(|(s, l)| (s.trim(), Level::parse(l.trim())))
                {
                    Some((sub, Some(level))) if !sub.is_empty() => {
                        config.levels.push((sub.to_owned(), level))
                    }
                    _ => problems.push(format!(
                        "KINDGI_LOG_LEVELS must be a list of subsystem=level ({LEVEL_NAMES}), \
                         not {}",
                        Value::String(part.to_owned())
                    )),
                }
            }
        }
        let stderr_is_tty = std::io::stderr().is_terminal();
        match get("KINDGI_LOG_FORMAT").as_deref().map(str::trim) {
            None | Some("") | Some("auto") => {
                config.format = if stderr_is_tty {
                    Format::Pretty
                } else {
                    Format::Json
                }
            }
            Some("json") => config.format = Format::Json,
            Some("pretty") => config.format = Format::Pretty,
            Some(other) => problems.push(format!(
                "KINDGI_LOG_FORMAT must be `auto`, `json` or `pretty`, not {}",
                Value::String(other.to_owned())
            )),
        }
        config.color = stderr_is_tty && get("NO_COLOR").is_none_or(|v| v.is_empty());
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(problems)
        }
    }

    /// Whether a record of `level` from `subsystem` is written.
    pub fn enabled(&self, subsystem: &str, level: Level) -> bool {
        let mut threshold = self.level;
        let mut best = 0usize;
        for (prefix, l) in &self.levels {
            let matches = subsystem == prefix
                || (subsystem.starts_with(prefix.as_str())
                    && subsystem.as_bytes().get(prefix.len()) == Some(&b'.'));
            if matches && prefix.len() >= best {
                best = prefix.len();
                threshold = *l;
            }
        }
        level <= threshold
    }
}

/// Writes records to stderr (or any writer, for tests).
pub struct Logger {
    config: LogConfig,
    out: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Logger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logger")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// One record being assembled. Fields keep the order they are added in.
#[derive(Debug)]
pub struct Record {
    level: Level,
    subsystem: &'static str,
    message: String,
    fields: Map<String, Value>,
    in_message: Option<&'static [&'static str]>,
    lifecycle: bool,
    /// A lifecycle event's name, written as `event` and `kind` after the other fields.
    trailing_event: Option<&'static str>,
}

impl Record {
    pub fn new(level: Level, subsystem: &'static str, message: impl Into<String>) -> Self {
        Self {
            level,
            subsystem,
            message: message.into(),
            fields: Map::new(),
            in_message: None,
            lifecycle: false,
            trailing_event: None,
        }
    }

    /// A lifecycle event: written whatever the level, with `event` and `kind` set to `name`.
    pub fn lifecycle(level: Level, name: &'static str, message: impl Into<String>) -> Self {
        let mut record = Self::new(level, "pack", message);
        record.lifecycle = true;
        record.trailing_event = Some(name);
        record
    }

    /// Adds `event` and `kind` (kept "through 0.1.x" for older supervisors).
    pub fn with_event(mut self, name: &'static str) -> Self {
        self.fields.insert("event".into(), Value::from(name));
        self.fields.insert("kind".into(), Value::from(name));
        self
    }

    pub fn field(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_owned(), value.into());
        self
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.fields.insert(key.to_owned(), value.into());
    }

    pub fn in_message(mut self, keys: &'static [&'static str]) -> Self {
        self.in_message = Some(keys);
        self
    }
}

/// Keys whose values are never written.
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "token",
        "password",
        "passwd",
        "apikey",
        "api_key",
        "authorization",
        "cookie",
    ]
    .iter()
    .any(|s| k.contains(s))
        || k == "credentials"
}

fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_key(k) {
                    *v = Value::from("[redacted]");
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        Value::String(s) => {
            if let Some(scrubbed) = scrub_text(s) {
                *s = scrubbed;
            }
        }
        _ => {}
    }
}

/// Scrubs `Bearer <token>` and URL passwords (`scheme://user:pass@host`) from free text.
fn scrub_text(s: &str) -> Option<String> {
    let has_bearer = s.contains("Bearer ");
    let has_url_pass = s.contains("://") && s.contains('@');
    if !has_bearer && !has_url_pass {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    for (i, word) in s.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&scrub_url_password(word));
    }
    if has_bearer {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(pos) = rest.find("Bearer ") {
            result.push_str(&rest[..pos + 7]);
            let after = &rest[pos + 7..];
            let end = after
                .find(|c: char| c.is_whitespace() || c == '"')
                .unwrap_or(after.len());
            result.push_str("[redacted]");
            rest = &after[end..];
        }
        result.push_str(rest);
        out = result;
    }
    Some(out)
}

fn scrub_url_password(word: &str) -> String {
    if let Some(scheme_end) = word.find("://") {
        let after = &word[scheme_end + 3..];
        let authority_end = after.find('/').unwrap_or(after.len());
        let authority = &after[..authority_end];
        if let Some(at) = authority.rfind('@') {
            if let Some(colon) = authority[..at].find(':') {
                return format!(
                    "{}{}:[redacted]{}",
                    &word[..scheme_end + 3],
                    &authority[..colon],
                    &after[at..]
                );
            }
        }
    }
    word.to_owned()
}

impl Logger {
    /// A logger writing to the process's stderr.
    pub fn stderr(config: LogConfig) -> Self {
        Self {
            config,
            out: Mutex::new(Box::new(std::io::stderr())),
        }
    }

    /// A logger writing to any writer (tests, in-process services).
    pub fn to_writer(config: LogConfig, out: Box<dyn Write + Send>) -> Self {
        Self {
            config,
            out: Mutex::new(out),
        }
    }

    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    pub fn enabled(&self, subsystem: &str, level: Level) -> bool {
        self.config.enabled(subsystem, level)
    }

    /// Writes a record (dropped when its level is filtered out and it is not lifecycle).
    pub fn write(&self, record: Record) {
        if !record.lifecycle && !self.enabled(record.subsystem, record.level) {
            return;
        }
        let line = match self.config.format {
            Format::Json => json_line(record),
            Format::Pretty => pretty_line(record, self.config.color),
        };
        if let Ok(mut out) = self.out.lock() {
            // A closed stderr must not take the service down: the record is lost, nothing else.
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}

fn json_line(record: Record) -> String {
    let mut map = Map::with_capacity(6 + record.fields.len());
    map.insert("time".into(), Value::String(now_rfc3339()));
    map.insert("level".into(), Value::from(record.level.as_str()));
    map.insert("severity".into(), Value::from(record.level.severity()));
    map.insert("subsystem".into(), Value::from(record.subsystem));
    let mut message = Value::String(record.message);
    redact(&mut message);
    map.insert("message".into(), message);
    for (k, mut v) in record.fields {
        if is_secret_key(&k) {
            v = Value::from("[redacted]");
        } else {
            redact(&mut v);
        }
        map.insert(k, v);
    }
    if let Some(name) = record.trailing_event {
        map.insert("event".into(), Value::from(name));
        map.insert("kind".into(), Value::from(name));
    }
    if let Some(keys) = record.in_message {
        map.insert("inMessage".into(), Value::from(keys.to_vec()));
    }
    let mut line = Value::Object(map).to_string();
    line.push('\n');
    line
}

fn pretty_line(record: Record, color: bool) -> String {
    let (start, end) = match (color, record.level) {
        (false, _) => ("", ""),
        (true, Level::Error) => ("\x1b[31m", "\x1b[0m"),
        (true, Level::Warn) => ("\x1b[33m", "\x1b[0m"),
        (true, _) => ("\x1b[2m", "\x1b[0m"),
    };
    let mut message = Value::String(record.message);
    redact(&mut message);
    let message = message.as_str().unwrap_or_default().to_owned();
    let mut line = format!(
        "{} {start}{:<5}{end} {} {message}",
        now_rfc3339(),
        record.level.as_str().to_uppercase(),
        record.subsystem
    );
    if let Some(name) = record.trailing_event {
        line.push_str(" event=");
        line.push_str(name);
    }
    for (k, mut v) in record.fields {
        if k == "kind" {
            continue;
        }
        if is_secret_key(&k) {
            v = Value::from("[redacted]");
        } else {
            redact(&mut v);
        }
        line.push(' ');
        line.push_str(&k);
        line.push('=');
        line.push_str(&v.to_string());
    }
    line.push('\n');
    line
}

/// Now as RFC 3339 UTC with milliseconds (`2026-10-08T12:00:00.000Z`).
pub fn now_rfc3339() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_rfc3339_ms(now.as_millis() as i64)
}

/// Milliseconds since the epoch as RFC 3339 UTC with milliseconds.
pub fn format_rfc3339_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn formats_time() {
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339_ms(1_790_856_000_123),
            "2026-10-01T12:00:00.123Z"
        );
    }

    #[test]
    fn record_has_fixed_five_first_and_redacts() {
        let sink = Sink::default();
        let logger = Logger::to_writer(LogConfig::default(), Box::new(sink.clone()));
        logger.write(
            Record::lifecycle(Level::Info, "listening", "Listening on port 1")
                .field("port", 1)
                .field("apiToken", "abc")
                .field("url", "postgres://u:pw@h/db"),
        );
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys[..5],
            ["time", "level", "severity", "subsystem", "message"]
        );
        assert_eq!(v["event"], "listening");
        assert_eq!(v["kind"], "listening");
        assert_eq!(v["apiToken"], "[redacted]");
        assert_eq!(v["url"], "postgres://u:[redacted]@h/db");
    }

    #[test]
    fn bad_level_names_the_variable() {
        let err =
            LogConfig::from_env(|k| (k == "KINDGI_LOG_LEVEL").then(|| "loud".into())).unwrap_err();
        assert!(err[0].contains("KINDGI_LOG_LEVEL"));
    }

    #[test]
    fn filtered_levels_are_dropped_but_lifecycle_is_not() {
        let sink = Sink::default();
        let config = LogConfig {
            level: Level::Error,
            ..LogConfig::default()
        };
        let logger = Logger::to_writer(config, Box::new(sink.clone()));
        logger.write(Record::new(Level::Info, "pack", "hidden"));
        logger.write(Record::lifecycle(Level::Info, "stopped", "Stopped"));
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("Stopped"));
    }
}
