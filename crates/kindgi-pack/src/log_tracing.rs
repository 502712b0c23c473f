//! `tracing` events as pack service records: a Rust pack service installs
//! [`RecordLayer`] (in `service::process::serve_process`), so what the libraries it runs log
//! through `tracing` (this crate, a pack's own dependencies) reaches its stderr as kindgi.log
//! records of subsystem `pack` — the only format a supervisor reads there — filtered by the
//! same `KINDGI_LOG_LEVEL` / `KINDGI_LOG_LEVELS` as the service's own records, and redacted
//! the same way (a secret-looking field is never written). An event's field named like one of
//! the record's own keys (`level`, `event`, …) is written as `field.<name>`.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;

use crate::log::{Level, Logger, Record};

/// The keys a record writes itself: the fixed five, the bridge's `target`, and what makes a
/// line a service event (`event`, `kind`) or names its message's fields (`inMessage`).
const RESERVED: [&str; 9] = [
    "time",
    "level",
    "severity",
    "subsystem",
    "message",
    "target",
    "event",
    "kind",
    "inMessage",
];

/// Writes each enabled `tracing` event as one record through a [`Logger`].
#[derive(Debug)]
pub struct RecordLayer {
    logger: Arc<Logger>,
}

impl RecordLayer {
    pub fn new(logger: Arc<Logger>) -> Self {
        Self { logger }
    }
}

fn level_of(level: &tracing::Level) -> Level {
    match *level {
        tracing::Level::ERROR => Level::Error,
        tracing::Level::WARN => Level::Warn,
        tracing::Level::INFO => Level::Info,
        tracing::Level::DEBUG => Level::Debug,
        tracing::Level::TRACE => Level::Trace,
    }
}

/// An event's `message` and its other fields.
#[derive(Default)]
struct Fields {
    message: String,
    rest: Map<String, Value>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        if field.name() == "message" {
            self.message = text;
        } else {
            self.rest
                .insert(field.name().to_owned(), Value::String(text));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.rest
                .insert(field.name().to_owned(), Value::from(value));
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.rest
            .insert(field.name().to_owned(), Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.rest
            .insert(field.name().to_owned(), Value::from(value));
    }

    /// A number when finite (JSON has no NaN or infinity), else its text.
    fn record_f64(&mut self, field: &Field, value: f64) {
        let v = serde_json::Number::from_f64(value)
            .map_or_else(|| Value::String(value.to_string()), Value::Number);
        self.rest.insert(field.name().to_owned(), v);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.rest
            .insert(field.name().to_owned(), Value::from(value));
    }
}

impl<S: Subscriber> Layer<S> for RecordLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let level = level_of(meta.level());
        if !self.logger.enabled("pack", level) {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut record = Record::new(level, "pack", fields.message).field("target", meta.target());
        for (key, value) in fields.rest {
            // A field named like a record's own key would overwrite it (or make the line read
            // as a service event): it keeps its value under `field.<name>`.
            if RESERVED.contains(&key.as_str()) {
                record.set(&format!("field.{key}"), value);
            } else {
                record.set(&key, value);
            }
        }
        self.logger.write(record);
    }
}
