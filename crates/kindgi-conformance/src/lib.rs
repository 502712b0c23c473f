//! The black-box conformance kit for pack services (`kindgi pack conformance`).
//!
//! It starts the service a command names (`PORT=0`, a random token, `--host 127.0.0.1`),
//! learns its port from the `listening` line, and runs the checks of the reference's
//! checklist (§12, 1–84) over HTTP and the process's stdout/stderr — restarting the service
//! with another environment or index where a check needs it. Nothing in it knows how the
//! service is built, so any implementation can be pointed at it (`docs/conformance.md`).
//!
//! Each check prints one line — `ok N title`, `FAIL N title: expected … got …`, or
//! `known-divergence N title (python 0.1.10: …)` when the implementation under test is a
//! known one whose documented divergence this is, or `skip N title: the fixture has no …` when
//! the fixture lacks a tool, check or index variant the check needs ([`needs`]) — and the run
//! ends with `N passed, M failed` alone on its line. Known divergences and skips never pass and
//! never fail; `--require-all` ([`KitOptions::require_all`]) makes a skip a failure.

mod cases_process;
mod cases_wire;
pub mod http;
mod needs;
pub mod service;

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use self::http::{Call, Reply};
use self::service::{CommandError, Exit, Launch, Service, ServiceCommand, random_token};

/// The implementation under test, for its known divergences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Implementation {
    /// Ours (and any implementation with no known divergence): every check must pass.
    Rust,
    /// The official Python service, `kindgi==0.1.10` (`python -m kindgi.pack serve`).
    Python0110,
    /// The official TypeScript service of `kindgi-cli==0.1.10`
    /// (`@kindgi/handler-runtime/dist/pack-service/main.js`).
    TypeScript0110,
    /// Named by the user; no divergences are known for it.
    Other(String),
}

impl Implementation {
    /// `rust`, `python-0.1.10`, or anything else (no known divergences).
    pub fn parse(name: &str) -> Self {
        match name {
            "rust" => Self::Rust,
            "python-0.1.10" | "python" => Self::Python0110,
            "typescript-0.1.10" | "typescript" => Self::TypeScript0110,
            other => Self::Other(other.to_owned()),
        }
    }

    /// What the command is: `-m kindgi.pack` is the official Python service, a script of
    /// `@kindgi/handler-runtime` the official TypeScript one.
    pub fn detect(argv: &[String]) -> Option<Self> {
        if argv
            .windows(2)
            .any(|w| w[0] == "-m" && w[1] == "kindgi.pack")
        {
            return Some(Self::Python0110);
        }
        argv.iter()
            .any(|a| a.contains("@kindgi/handler-runtime/"))
            .then_some(Self::TypeScript0110)
    }

    /// The reason check `n` is a known divergence of this implementation.
    pub fn divergence(&self, n: u32) -> Option<&'static str> {
        match self {
            Self::Python0110 => python_0_1_10_divergence(n),
            Self::TypeScript0110 => typescript_0_1_10_divergence(n),
            _ => None,
        }
    }
}

impl fmt::Display for Implementation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rust => f.write_str("rust"),
            Self::Python0110 => f.write_str("python 0.1.10"),
            Self::TypeScript0110 => f.write_str("typescript 0.1.10"),
            Self::Other(n) => f.write_str(n),
        }
    }
}

/// Where `kindgi==0.1.10`'s service differs from the documented behaviour (each observed
/// against it; the reference's §11 names most).
fn python_0_1_10_divergence(n: u32) -> Option<&'static str> {
    Some(match n {
        39 => {
            "its validator is not Ajv strict mode: an unknown keyword is ignored and the call runs"
        }
        73 => {
            "after the 8 s drain it writes `stopped` but never fires the cancellation of a sync \
             handler still running, and the interpreter waits for that worker thread, so the \
             process does not exit (observed still running 25 s after SIGTERM)"
        }
        _ => return None,
    })
}

/// Where `kindgi-cli==0.1.10`'s TypeScript service differs from the documented behaviour
/// (observed against it with examples/conformance-pack-ts-echo).
fn typescript_0_1_10_divergence(n: u32) -> Option<&'static str> {
    Some(match n {
        81 => {
            "with nothing in flight it closes its listener on SIGTERM and exits about 70 ms \
             later, so no /readyz answer ever says draining"
        }
        _ => return None,
    })
}

/// What to run.
#[derive(Debug, Clone)]
pub struct KitOptions {
    /// The service command, program first; must contain `--index PATH`.
    pub command: Vec<String>,
    /// Only these checks (all when `None`).
    pub only: Option<BTreeSet<u32>>,
    pub implementation: Implementation,
    /// A check whose tool, check or index variant the fixture lacks fails instead of being
    /// skipped (for a fixture that must have every member, as this repository's do).
    pub require_all: bool,
}

/// The tally of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: u32,
    pub failed: u32,
    pub known_divergences: u32,
    /// Checks not run because the fixture lacks what they need.
    pub skipped: u32,
}

/// A kit that cannot start at all.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("cannot read the base index {path}: {detail}")]
    Index { path: PathBuf, detail: String },
    #[error("cannot create a temporary directory for index variants: {0}")]
    Temp(std::io::Error),
    #[error("cannot build the HTTP client: {0}")]
    Http(reqwest::Error),
    #[error("cannot write the report: {0}")]
    Write(std::io::Error),
    #[error("--only names check {0}, but the checks are numbered 1 to 84")]
    UnknownCheck(u32),
}

/// The widest `--only` range accepted (the checklist has far fewer checks).
const MAX_ONLY_RANGE: u32 = 10_000;

/// Parses `--only` (`12,14,30-36`).
pub fn parse_only(text: &str) -> Result<BTreeSet<u32>, String> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("`{part}` is not a check number or a range like 30-36");
        if let Some((a, b)) = part.split_once('-') {
            let a: u32 = a.trim().parse().map_err(|_| bad())?;
            let b: u32 = b.trim().parse().map_err(|_| bad())?;
            if a > b {
                return Err(bad());
            }
            // A range is expanded into the set: `1-4294967295` must not fill memory.
            if b - a >= MAX_ONLY_RANGE {
                return Err(format!(
                    "`{part}` spans more than {MAX_ONLY_RANGE} checks, far more than the checklist has: give the check numbers or a narrower range like 30-36"
                ));
            }
            set.extend(a..=b);
        } else {
            set.insert(part.parse().map_err(|_| bad())?);
        }
    }
    if set.is_empty() {
        return Err("--only needs at least one check number".to_owned());
    }
    Ok(set)
}

type CaseFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// One checklist entry.
pub(crate) struct Case {
    pub n: u32,
    pub title: &'static str,
    pub run: for<'a> fn(&'a mut Kit) -> CaseFuture<'a>,
}

/// Every check, in checklist order.
fn cases() -> Vec<Case> {
    let mut all = cases_wire::cases();
    all.extend(cases_process::cases());
    all.sort_by_key(|c| c.n);
    all
}

/// State shared by the checks: the command, the base service, the HTTP client.
pub(crate) struct Kit {
    pub cmd: ServiceCommand,
    pub http: reqwest::Client,
    pub base_index: Value,
    pub tmp: tempfile::TempDir,
    base: Option<Service>,
}

/// The fixture's call context.
pub(crate) fn ctx() -> Value {
    serde_json::json!({"tenantId": "t-conformance", "runId": "run-conformance"})
}

/// A tool call message.
pub(crate) fn invoke(tool: &str, input: Value) -> Value {
    serde_json::json!({"v": 2, "kind": "invoke", "tool": {"id": tool}, "input": input, "ctx": ctx()})
}

/// A check call message with a trace whose output is `output`.
pub(crate) fn check_invoke(check: &str, config: Value, output: &str) -> Value {
    serde_json::json!({
        "v": 2, "kind": "check-invoke", "check": {"id": check}, "config": config,
        "trace": {"runId": "run-conformance", "tenantId": "t-conformance", "output": output,
                  "toolCalls": [], "toolResults": [], "modelCalls": [], "mode": "runtime"}
    })
}

impl Kit {
    /// The shared service on the base index (started on first use, restarted if it died).
    pub async fn base(&mut self) -> Result<&Service, String> {
        let alive = match self.base.as_mut() {
            Some(s) => s.process.wait(Duration::ZERO).await.is_none(),
            None => false,
        };
        if !alive {
            let svc = self.start(&Launch::default()).await?;
            self.base = Some(svc);
        }
        self.base
            .as_ref()
            .ok_or_else(|| "the base service is not running".to_owned())
    }

    /// Sends `call` to the base service.
    pub async fn call(&mut self, call: Call<'_>) -> Result<Reply, String> {
        let http = self.http.clone();
        let svc = self.base().await?;
        call.send(&http, &svc.base, &svc.process.token).await
    }

    /// Sends `call` to `svc`.
    pub async fn call_on(&self, svc: &Service, call: Call<'_>) -> Result<Reply, String> {
        call.send(&self.http, &svc.base, &svc.process.token).await
    }

    /// `POST /v1/invoke` with the token on the base service.
    pub async fn invoke(&mut self, body: &Value) -> Result<Reply, String> {
        self.call(Call::post("/v1/invoke").auth().json(body)).await
    }

    /// Starts a service of its own for a check.
    pub async fn start(&self, launch: &Launch) -> Result<Service, String> {
        self.cmd.start(launch, &random_token()).await
    }

    /// Runs a start that must fail: its exit and stderr records (30 s limit).
    pub async fn boot_fails(
        &self,
        launch: &Launch,
        token: &str,
    ) -> Result<(Exit, Vec<Value>), String> {
        let mut p = self
            .cmd
            .spawn(launch, token)
            .map_err(|e| format!("could not start the command: {e}"))?;
        match p.wait(Duration::from_secs(30)).await {
            Some(exit) => Ok((exit, p.stderr.records())),
            None => {
                p.stop(Duration::from_secs(2)).await;
                Err(format!(
                    "expected the service to exit, it was still running after 30 s; stderr: {}",
                    service::tail(&p.stderr.snapshot())
                ))
            }
        }
    }

    /// Writes a generated index variant (the base index changed by `edit`).
    pub fn variant(&self, name: &str, edit: impl FnOnce(&mut Value)) -> Result<PathBuf, String> {
        let mut index = self.base_index.clone();
        edit(&mut index);
        let path = self.tmp.path().join(format!("index.{name}.json"));
        let text = serde_json::to_string_pretty(&index).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// A variant the pack ships beside its base index.
    pub fn shipped(&self, name: &str) -> Result<PathBuf, String> {
        let path = self.cmd.sibling_variant(name);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "missing index variant {} (see docs/conformance.md, Index variants)",
                path.display()
            ))
        }
    }

    /// A fresh file path in the kit's temporary directory (hold releases).
    pub fn temp_path(&self, name: &str) -> PathBuf {
        let nonce: u64 = rand::random();
        self.tmp.path().join(format!("{name}-{nonce:016x}"))
    }
}

/// Runs the kit, writing the report to `out`.
pub async fn run(options: KitOptions, out: &mut dyn Write) -> Result<Summary, KitError> {
    let cmd = ServiceCommand::parse(&options.command)?;
    let text = std::fs::read_to_string(&cmd.index).map_err(|e| KitError::Index {
        path: cmd.index.clone(),
        detail: e.to_string(),
    })?;
    let base_index: Value = serde_json::from_str(&text).map_err(|e| KitError::Index {
        path: cmd.index.clone(),
        detail: format!("not JSON: {e}"),
    })?;
    let all = cases();
    if let Some(only) = &options.only
        && let Some(n) = only.iter().find(|n| !all.iter().any(|c| c.n == **n))
    {
        return Err(KitError::UnknownCheck(*n));
    }
    let http = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .map_err(KitError::Http)?;
    let mut kit = Kit {
        cmd,
        http,
        base_index,
        tmp: tempfile::tempdir().map_err(KitError::Temp)?,
        base: None,
    };
    writeln!(
        out,
        "# pack service: {} (implementation: {})",
        options.command.join(" "),
        options.implementation
    )
    .map_err(KitError::Write)?;
    let mut summary = Summary::default();
    for case in all {
        if options.only.as_ref().is_some_and(|o| !o.contains(&case.n)) {
            continue;
        }
        if let Some(what) = needs::unmet(case.n, &kit.base_index, &kit.cmd) {
            let line = if options.require_all {
                summary.failed += 1;
                format!(
                    "FAIL {} {}: the fixture has no {what} (--require-all)",
                    case.n, case.title
                )
            } else {
                summary.skipped += 1;
                format!("skip {} {}: the fixture has no {what}", case.n, case.title)
            };
            writeln!(out, "{line}").map_err(KitError::Write)?;
            continue;
        }
        let outcome = (case.run)(&mut kit).await;
        let line = match (&outcome, options.implementation.divergence(case.n)) {
            (Ok(()), _) => {
                summary.passed += 1;
                format!("ok {} {}", case.n, case.title)
            }
            (Err(got), Some(why)) => {
                summary.known_divergences += 1;
                format!(
                    "known-divergence {} {} ({}: {why}; got: {})",
                    case.n,
                    case.title,
                    options.implementation,
                    http::short(got)
                )
            }
            (Err(got), None) => {
                summary.failed += 1;
                format!("FAIL {} {}: {got}", case.n, case.title)
            }
        };
        writeln!(out, "{line}").map_err(KitError::Write)?;
        out.flush().map_err(KitError::Write)?;
    }
    if let Some(mut base) = kit.base.take() {
        base.process.stop(Duration::from_secs(10)).await;
    }
    if summary.known_divergences > 0 {
        writeln!(
            out,
            "{} known divergence(s) of {}",
            summary.known_divergences, options.implementation
        )
        .map_err(KitError::Write)?;
    }
    if summary.skipped > 0 {
        writeln!(
            out,
            "{} skipped: the fixture lacks what they need (--require-all fails them)",
            summary.skipped
        )
        .map_err(KitError::Write)?;
    }
    writeln!(out, "{} passed, {} failed", summary.passed, summary.failed)
        .map_err(KitError::Write)?;
    Ok(summary)
}

/// `Err` unless `cond`.
pub(crate) fn ensure(cond: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(why()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn only_takes_numbers_and_ranges() {
        let set = parse_only("12, 14,30-32").unwrap();
        assert_eq!(
            set.into_iter().collect::<Vec<_>>(),
            vec![12, 14, 30, 31, 32]
        );
        assert!(parse_only("x").is_err());
        assert!(parse_only("5-3").is_err());
        assert!(parse_only(",").is_err());
    }

    #[test]
    fn an_absurdly_wide_only_range_is_refused_not_expanded() {
        let err = parse_only("1-4294967295").unwrap_err();
        assert!(err.contains("spans more than 10000 checks"), "{err}");
        assert_eq!(parse_only("1-10000").unwrap().len(), 10_000);
    }

    #[test]
    fn the_command_is_split_at_its_index_module_root_and_host() {
        let c = ServiceCommand::parse(&argv("svc serve --index dir/index.json --host 0.0.0.0 -v"))
            .unwrap();
        assert_eq!(c.program, "svc");
        assert_eq!(c.args, argv("serve -v"));
        assert_eq!(c.index, PathBuf::from("dir/index.json"));
        assert_eq!(c.module_root, PathBuf::from("dir"));
        assert_eq!(c.host.as_deref(), Some("0.0.0.0"));
        assert_eq!(
            c.sibling_variant("extras"),
            PathBuf::from("dir/index.extras.json")
        );
        let c = ServiceCommand::parse(&argv("svc --index=i.json --module-root=/m")).unwrap();
        assert_eq!(c.module_root, PathBuf::from("/m"));
        assert_eq!(
            c.sibling_variant("import-throws"),
            PathBuf::from("i.import-throws.json")
        );
        assert!(matches!(
            ServiceCommand::parse(&argv("svc serve")),
            Err(CommandError::NoIndex)
        ));
        assert!(matches!(
            ServiceCommand::parse(&argv("svc --index")),
            Err(CommandError::MissingValue(_))
        ));
        assert!(matches!(
            ServiceCommand::parse(&[]),
            Err(CommandError::Empty)
        ));
    }

    #[test]
    fn the_python_service_is_detected_from_its_command() {
        assert_eq!(
            Implementation::detect(&argv("python -m kindgi.pack serve --index i.json")),
            Some(Implementation::Python0110)
        );
        assert_eq!(
            Implementation::detect(&argv("conformance-pack serve")),
            None
        );
        assert!(Implementation::Rust.divergence(39).is_none());
        assert!(Implementation::Python0110.divergence(39).is_some());
        assert!(Implementation::Python0110.divergence(14).is_none());
        assert_eq!(
            Implementation::detect(&argv(
                "node nm/@kindgi/handler-runtime/dist/pack-service/main.js --index i.json"
            )),
            Some(Implementation::TypeScript0110)
        );
        assert!(Implementation::TypeScript0110.divergence(81).is_some());
    }

    /// Every member a check needs is one the repository's fixture has, so a need is never a
    /// typo that would skip a check on a complete fixture.
    #[test]
    fn every_need_is_a_member_of_the_rust_fixture() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let index_path = root.join("examples/conformance-pack/index.json");
        let text = std::fs::read_to_string(&index_path).unwrap();
        let index: Value = serde_json::from_str(&text).unwrap();
        let argv = vec![
            "svc".to_owned(),
            "--index".to_owned(),
            index_path.display().to_string(),
        ];
        let cmd = ServiceCommand::parse(&argv).unwrap();
        for case in cases() {
            assert_eq!(needs::unmet(case.n, &index, &cmd), None, "check {}", case.n);
        }
        let bare = serde_json::json!({"tools": [{"id": "conformance.echo"}], "guardrails": []});
        assert_eq!(needs::unmet(6, &bare, &cmd), None);
        assert_eq!(
            needs::unmet(47, &bare, &cmd).as_deref(),
            Some("tool \"conformance.sleep\"")
        );
        assert_eq!(
            needs::unmet(53, &bare, &cmd).as_deref(),
            Some("check \"conformance.checks.min-length\"")
        );
        assert_eq!(needs::unmet(1, &bare, &cmd), None);
    }

    #[test]
    fn every_check_of_the_checklist_is_there_once() {
        let numbers: Vec<u32> = cases().iter().map(|c| c.n).collect();
        assert_eq!(numbers, (1..=84).collect::<Vec<_>>());
    }
}
