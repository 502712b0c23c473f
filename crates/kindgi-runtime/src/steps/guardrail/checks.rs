//! The built-in checks (`@kindgi/guardrails` 0.1.10 `checks.ts`, runtime.md §7): pure,
//! deterministic functions over a run trace, with the reference's reasons word for word.
//!
//! A config the check refuses (an unknown setting, a wrong type) is a check that cannot run
//! (`invalid-check-config`), never a pass; a pattern that does not compile is the check
//! failing (`check-failed`).

use kindgi_spec::pack_protocol::CheckResult;
use serde_json::{Map, Value, json};

/// The built-in check ids.
pub const BUILT_IN_CHECKS: [&str; 7] = [
    "must-cite",
    "never-call-tool",
    "max-tool-calls",
    "output-matches",
    "tool-order",
    "required-substring",
    "forbidden-substring",
];

/// The default `must-cite` pattern: `[<name>]`-style citations.
const DEFAULT_SOURCE_PATTERN: &str = r"\[[^\]]+\]";
/// The most citations `must-cite` may ask for (`mustCiteMaxCitations`).
const MAX_CITATIONS: u64 = 1000;

/// Why a built-in check could not run: `(code, message)`.
pub(crate) type CheckFault = (&'static str, String);

/// What a setting must be.
#[derive(Clone, Copy)]
enum Setting {
    /// An integer ≥ the bound.
    Integer(i64),
    /// A non-empty string.
    Text,
    /// ECMAScript flags.
    Flags,
    Boolean,
    /// A non-empty list of non-empty strings.
    Strings,
    /// A non-empty list of tool ids or `{id, version?}`.
    Tools,
}

fn settings(check: &str) -> (&'static [(&'static str, Setting)], &'static [&'static str]) {
    use Setting::*;
    match check {
        "must-cite" => (
            &[("minCitations", Integer(1)), ("sourcePattern", Text)],
            &[],
        ),
        "never-call-tool" => (&[("tools", Tools)], &["tools"]),
        "max-tool-calls" => (&[("max", Integer(0))], &[]),
        "output-matches" => (
            &[("pattern", Text), ("flags", Flags), ("negate", Boolean)],
            &["pattern"],
        ),
        "tool-order" => (&[("sequence", Strings)], &["sequence"]),
        _ => (
            &[("patterns", Strings), ("caseSensitive", Boolean)],
            &["patterns"],
        ),
    }
}

fn non_empty_str(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

fn fits(setting: Setting, v: &Value) -> Result<(), String> {
    let ok = match setting {
        Setting::Integer(min) => v.as_i64().is_some_and(|n| n >= min),
        Setting::Text => non_empty_str(v),
        Setting::Flags => v
            .as_str()
            .is_some_and(|f| f.chars().all(|c| "dgimsuyv".contains(c))),
        Setting::Boolean => v.is_boolean(),
        Setting::Strings => v
            .as_array()
            .is_some_and(|a| !a.is_empty() && a.iter().all(non_empty_str)),
        Setting::Tools => v.as_array().is_some_and(|a| {
            !a.is_empty()
                && a.iter()
                    .all(|t| non_empty_str(t) || t.get("id").is_some_and(non_empty_str))
        }),
    };
    if ok {
        return Ok(());
    }
    Err(match setting {
        Setting::Integer(min) => format!("must be an integer >= {min}"),
        Setting::Text => "must be a non-empty string".into(),
        Setting::Flags => "must be regular-expression flags (of dgimsuyv)".into(),
        Setting::Boolean => "must be a boolean".into(),
        Setting::Strings => "must be a non-empty list of non-empty strings".into(),
        Setting::Tools => "must be a non-empty list of tool ids or {id} objects".into(),
    })
}

/// The first way `config` does not fit built-in `check`, if there is one.
pub(crate) fn config_problem(check: &str, config: &Map<String, Value>) -> Option<String> {
    let (known, required) = settings(check);
    for key in required {
        if !config.contains_key(*key) {
            return Some(format!("config.{key} is required"));
        }
    }
    for (key, v) in config {
        let Some((_, setting)) = known.iter().find(|(k, _)| k == key) else {
            return Some(format!("config.{key} is not a setting of {check}"));
        };
        if let Err(why) = fits(*setting, v) {
            return Some(format!("config.{key} {why}"));
        }
    }
    if check == "must-cite"
        && let Some(n) = config.get("minCitations").and_then(Value::as_u64)
        && n > MAX_CITATIONS
    {
        return Some(format!(
            "config.minCitations is {n}, over the limit of {MAX_CITATIONS}."
        ));
    }
    None
}

fn output(trace: &Value) -> Option<&str> {
    trace.get("output").and_then(Value::as_str)
}

/// `(toolId, toolName)` of each call in the trace.
fn calls(trace: &Value) -> Vec<(&str, &str)> {
    trace
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| {
                    let id = c.get("toolId").and_then(Value::as_str).unwrap_or_default();
                    let name = c.get("toolName").and_then(Value::as_str).unwrap_or(id);
                    (id, name)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fail(reason: String, attributes: Option<Value>) -> CheckResult {
    let mut r = CheckResult::fail(reason);
    r.attributes = attributes.and_then(|a| a.as_object().cloned());
    r
}

fn pass(attributes: Option<Value>) -> CheckResult {
    let mut r = CheckResult::pass();
    r.attributes = attributes.and_then(|a| a.as_object().cloned());
    r
}

/// Runs built-in `check` (one of [`BUILT_IN_CHECKS`]) over `trace`.
pub(crate) fn run_built_in(
    guardrail_id: &str,
    check: &str,
    config: &Map<String, Value>,
    trace: &Value,
) -> Result<CheckResult, CheckFault> {
    if let Some(problem) = config_problem(check, config) {
        return Err((
            "invalid-check-config",
            format!(
                "Guardrail \"{guardrail_id}\"'s config doesn't fit check \"{check}\": {problem}"
            ),
        ));
    }
    let threw = |why: String| {
        (
            "check-failed",
            format!("guardrail \"{guardrail_id}\": its check threw: {why}"),
        )
    };
    match check {
        "must-cite" => must_cite(config, trace).map_err(threw),
        "never-call-tool" => Ok(never_call_tool(config, trace)),
        "max-tool-calls" => Ok(max_tool_calls(config, trace)),
        "output-matches" => output_matches(config, trace).map_err(threw),
        "tool-order" => Ok(tool_order(config, trace)),
        "required-substring" => Ok(required_substring(config, trace)),
        "forbidden-substring" => Ok(forbidden_substring(config, trace)),
        other => Err((
            "unknown-check",
            format!("Guardrail \"{guardrail_id}\" references unregistered check \"{other}\""),
        )),
    }
}

fn compile(key: &str, pattern: &str, flags: &str) -> Result<kindgi_schema::regress::Regex, String> {
    // Only the flags that change what matches; `g`, `d` and `y` are handled by the caller.
    let flags: String = flags.chars().filter(|c| "imsuv".contains(*c)).collect();
    kindgi_schema::ecma_regex(pattern, &flags)
        .map_err(|why| format!("config.{key} isn't a regular expression that compiles: {why}."))
}

fn must_cite(config: &Map<String, Value>, trace: &Value) -> Result<CheckResult, String> {
    let min = config
        .get("minCitations")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let pattern = config
        .get("sourcePattern")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_SOURCE_PATTERN);
    let text = match output(trace) {
        Some(t) if !t.is_empty() => t,
        _ => return Ok(CheckResult::fail("output empty; nothing to cite")),
    };
    let re = compile("sourcePattern", pattern, "")?;
    // Counting stops once it has found enough: a long output costs no more than needed.
    let found = re.find_iter(text).take(min as usize).count() as u64;
    let attributes = Some(json!({"citationCount": found}));
    if found >= min {
        return Ok(pass(attributes));
    }
    Ok(fail(
        format!("expected >= {min} citations, found {found}"),
        attributes,
    ))
}

fn never_call_tool(config: &Map<String, Value>, trace: &Value) -> CheckResult {
    let forbidden: Vec<&str> = config
        .get("tools")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().or_else(|| t.get("id").and_then(Value::as_str)))
                .collect()
        })
        .unwrap_or_default();
    let mut violating: Vec<&str> = Vec::new();
    for (id, name) in calls(trace) {
        if (forbidden.contains(&id) || forbidden.contains(&name)) && !violating.contains(&name) {
            violating.push(name);
        }
    }
    if violating.is_empty() {
        return CheckResult::pass();
    }
    fail(
        format!("forbidden tool(s) invoked: {}", violating.join(", ")),
        Some(json!({"violatingTools": violating})),
    )
}

fn max_tool_calls(config: &Map<String, Value>, trace: &Value) -> CheckResult {
    let max = config.get("max").and_then(Value::as_u64).unwrap_or(10);
    let saw = calls(trace).len() as u64;
    let attributes = Some(json!({"toolCallCount": saw}));
    if saw <= max {
        return pass(attributes);
    }
    fail(
        format!("expected <= {max} tool calls, saw {saw}"),
        attributes,
    )
}

fn output_matches(config: &Map<String, Value>, trace: &Value) -> Result<CheckResult, String> {
    let pattern = config
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let flags = config
        .get("flags")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let negate = config.get("negate").and_then(Value::as_bool) == Some(true);
    if pattern.is_empty() {
        return Ok(CheckResult::fail("pattern config is required"));
    }
    let re = compile("pattern", pattern, flags)?;
    let text = output(trace).unwrap_or_default();
    // `test` with the sticky flag matches only at `lastIndex` (0).
    let matched = match re.find(text) {
        Some(m) => !flags.contains('y') || m.start() == 0,
        None => false,
    };
    if matched != negate {
        return Ok(CheckResult::pass());
    }
    Ok(CheckResult::fail(if negate {
        format!("output matched forbidden pattern /{pattern}/")
    } else {
        format!("output did not match /{pattern}/")
    }))
}

fn tool_order(config: &Map<String, Value>, trace: &Value) -> CheckResult {
    let sequence: Vec<&str> = config
        .get("sequence")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if sequence.is_empty() {
        return CheckResult::pass();
    }
    let mut at = 0;
    for (_, name) in calls(trace) {
        if sequence.get(at) == Some(&name) {
            at += 1;
        }
        if at == sequence.len() {
            return CheckResult::pass();
        }
    }
    fail(
        format!(
            "expected tool-call subsequence [{}] not observed",
            sequence.join(", ")
        ),
        Some(json!({"matchedPrefix": &sequence[..at]})),
    )
}

/// `patterns` (non-empty strings) and whether matching is case-sensitive.
fn patterns(config: &Map<String, Value>) -> (Vec<&str>, bool) {
    let list = config
        .get("patterns")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|p| !p.is_empty())
                .collect()
        })
        .unwrap_or_default();
    (
        list,
        config.get("caseSensitive").and_then(Value::as_bool) == Some(true),
    )
}

fn contains(haystack: &str, needle: &str, case_sensitive: bool) -> bool {
    if case_sensitive {
        haystack.contains(needle)
    } else {
        haystack.to_lowercase().contains(&needle.to_lowercase())
    }
}

fn required_substring(config: &Map<String, Value>, trace: &Value) -> CheckResult {
    let (list, case_sensitive) = patterns(config);
    if list.is_empty() {
        return CheckResult::pass();
    }
    let text = match output(trace) {
        Some(t) if !t.is_empty() => t,
        _ => {
            return fail(
                format!(
                    "output empty; {} required pattern(s) not satisfied",
                    list.len()
                ),
                Some(json!({"missing": list})),
            );
        }
    };
    let missing: Vec<&str> = list
        .into_iter()
        .filter(|p| !contains(text, p, case_sensitive))
        .collect();
    if missing.is_empty() {
        return CheckResult::pass();
    }
    fail(
        format!("output missing required pattern(s): {}", missing.join(", ")),
        Some(json!({"missing": missing})),
    )
}

fn forbidden_substring(config: &Map<String, Value>, trace: &Value) -> CheckResult {
    let (list, case_sensitive) = patterns(config);
    let text = output(trace).unwrap_or_default();
    if list.is_empty() || text.is_empty() {
        return CheckResult::pass();
    }
    let violated: Vec<&str> = list
        .into_iter()
        .filter(|p| contains(text, p, case_sensitive))
        .collect();
    if violated.is_empty() {
        return CheckResult::pass();
    }
    fail(
        format!(
            "output contains forbidden pattern(s): {}",
            violated.join(", ")
        ),
        Some(json!({"violated": violated})),
    )
}
