//! Checks 47–52 and 61–84: deadlines, cancellation, the concurrency cap, the process contract
//! (records, config errors, boot failures, drain) and the declared env (readiness, filter).
//! Most start a service of their own with another environment or index.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::{Call, Reply, check_info_shape};
use super::service::{Launch, Service, event_of, random_token};
use super::{Case, CaseFuture, Kit, check_invoke, ensure, invoke};

macro_rules! case {
    ($name:ident, |$k:ident| $body:block) => {
        fn $name($k: &mut Kit) -> CaseFuture<'_> {
            Box::pin(async move { $body })
        }
    };
}

pub(crate) fn cases() -> Vec<Case> {
    let c = |n, title, run| Case { n, title, run };
    vec![
        c(
            47,
            "sleep 5000 ms with kindgi-timeout-ms 300 → deadline-exceeded in < 3 s",
            c47,
        ),
        c(
            48,
            "kindgi-timeout-ms abc / 0 / -1 → the default deadline",
            c48,
        ),
        c(
            49,
            "a check waiting on its abort signal → deadline-exceeded, finished-late record",
            c49,
        ),
        c(
            50,
            "a caller that disconnects → call record outcome cancelled",
            c50,
        ),
        c(
            51,
            "at the concurrency cap → 503 overloaded with retry-after",
            c51,
        ),
        c(
            52,
            "at the cap, /v1/info and /healthz still answer 200",
            c52,
        ),
        c(
            61,
            "startup writes a listening record with the bound port",
            c61,
        ),
        c(62, "empty token → exit 1, config-invalid", c62),
        c(63, "token with a space → exit 1, config-invalid", c63),
        c(64, "token with a trailing newline is trimmed", c64),
        c(
            65,
            "index naming a missing module → exit 1, boot-failed",
            c65,
        ),
        c(
            66,
            "--index naming a missing file → exit 1, Cannot read the pack index",
            c66,
        ),
        c(
            67,
            "index envelope v2 → exit 1, Index envelope v2 is not v1",
            c67,
        ),
        c(
            68,
            "a module that throws on import → exit 1, boot-failed naming the tool",
            c68,
        ),
        c(
            69,
            "PORT=x → config-invalid; with MAX_CONCURRENCY=0 two problems",
            c69,
        ),
        c(
            70,
            "bad ENV_CHECK / ENV_FILTER / LOG_LEVEL → config-invalid",
            c70,
        ),
        c(
            71,
            "--host \"\" → config-invalid --host needs an address",
            c71,
        ),
        c(
            72,
            "SIGTERM drains: 503 draining, the held call finishes, exit 0",
            c72,
        ),
        c(
            73,
            "SIGTERM with a call that never finishes → exit 0 within ~8 s",
            c73,
        ),
        c(74, "each call writes a call record", c74),
        c(
            75,
            "traceparent → the call record carries traceId and a new spanId",
            c75,
        ),
        c(76, "no traceparent → no traceId/spanId", c76),
        c(
            77,
            "strict env check, required env missing → 503 missing env",
            c77,
        ),
        c(
            78,
            "KINDGI_PACK_ENV_CHECK=warn → ready, missingEnv listed",
            c78,
        ),
        c(79, "a whitespace value counts as set", c79),
        c(80, "index without env → missingEnv []", c80),
        c(
            81,
            "missing env while draining → /readyz says draining",
            c81,
        ),
        c(
            82,
            "the env filter drops undeclared variables, keeps platform ones",
            c82,
        ),
        c(
            83,
            "index without env: undeclared dropped, platform kept",
            c83,
        ),
        c(
            84,
            "KINDGI_PACK_ENV_FILTER=off keeps everything, no env-dropped",
            c84,
        ),
    ]
}

const SECS: fn(u64) -> Duration = Duration::from_secs;

fn launch_env(pairs: &[(&str, &str)]) -> Launch {
    Launch {
        env: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Launch::default()
    }
}

async fn post(k: &Kit, svc: &Service, body: &Value) -> Result<Reply, String> {
    k.call_on(svc, Call::post("/v1/invoke").auth().json(body))
        .await
}

/// Runs `body` against a service started for the check, then stops it whatever happened.
async fn with_service<T>(
    k: &Kit,
    launch: Launch,
    body: impl AsyncFnOnce(&Kit, &mut Service) -> Result<T, String>,
) -> Result<T, String> {
    let mut svc = k.start(&launch).await?;
    let result = body(k, &mut svc).await;
    svc.process.stop(SECS(10)).await;
    result
}

/// Starts `conformance.hold` on `svc` in the background; returns once it printed its line.
async fn hold(
    k: &Kit,
    svc: &Service,
) -> Result<
    (
        tokio::task::JoinHandle<Result<Reply, String>>,
        std::path::PathBuf,
    ),
    String,
> {
    let release = k.temp_path("release");
    let body = invoke(
        "conformance.hold",
        json!({"release": release.to_string_lossy()}),
    );
    let http = k.http.clone();
    let (base, token) = (svc.base.clone(), svc.process.token.clone());
    let task = tokio::spawn(async move {
        Call::post("/v1/invoke")
            .auth()
            .json(&body)
            .timeout(SECS(60))
            .send(&http, &base, &token)
            .await
    });
    let line = format!("hold: {}", release.to_string_lossy());
    if svc
        .process
        .stdout
        .wait_for(SECS(10), |l| l.contains(&line))
        .await
        .is_none()
    {
        task.abort();
        return Err(format!("conformance.hold never printed `{line}` on stdout"));
    }
    Ok((task, release))
}

fn release(path: &std::path::Path) -> Result<(), String> {
    std::fs::write(path, b"release").map_err(|e| format!("cannot create {}: {e}", path.display()))
}

async fn joined(task: tokio::task::JoinHandle<Result<Reply, String>>) -> Result<Reply, String> {
    match tokio::time::timeout(SECS(15), task).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => Err(format!("the held call's task failed: {e}")),
        Err(_) => Err("the held call did not return within 15 s of its release".to_owned()),
    }
}

case!(c47, |k| {
    let started = Instant::now();
    let r = k
        .call(
            Call::post("/v1/invoke")
                .auth()
                .json(&invoke("conformance.sleep", json!({"ms": 5000})))
                .header("kindgi-timeout-ms", "300"),
        )
        .await?;
    let took = started.elapsed();
    let e = r.error("deadline-exceeded")?;
    ensure(e["toolId"] == "conformance.sleep", || {
        format!("toolId: {e}")
    })?;
    ensure(
        e["message"] == "conformance.sleep passed its deadline",
        || format!("message: {}", e["message"]),
    )?;
    ensure(took < SECS(3), || {
        format!("answered after {} ms", took.as_millis())
    })
});

case!(c48, |k| {
    for value in ["abc", "0", "-1"] {
        let r = k
            .call(
                Call::post("/v1/invoke")
                    .auth()
                    .json(&invoke("conformance.sleep", json!({"ms": 50})))
                    .header("kindgi-timeout-ms", value),
            )
            .await?;
        let out = r
            .result()
            .map_err(|e| format!("kindgi-timeout-ms {value}: {e}"))?;
        ensure(out == json!({"slept": 50}), || {
            format!("kindgi-timeout-ms {value}: output {out}")
        })?;
    }
    Ok(())
});

case!(c49, |k| {
    let index = k.shipped("extras")?;
    with_service(
        k,
        Launch {
            index: Some(index),
            ..Launch::default()
        },
        async |k, svc| {
            let m = check_invoke("conformance.checks.waits", json!({}), "hello");
            let r = k
                .call_on(
                    svc,
                    Call::post("/v1/invoke")
                        .auth()
                        .json(&m)
                        .header("kindgi-timeout-ms", "100"),
                )
                .await?;
            let e = r.error("deadline-exceeded")?;
            ensure(e["checkId"] == "conformance.checks.waits", || {
                format!("checkId: {e}")
            })?;
            let late = svc
                .process
                .stderr
                .wait_record(SECS(3), |r| event_of(r) == Some("handler-finished-late"))
                .await
                .ok_or("no handler-finished-late record within 3 s")?;
            let after = late["afterMs"]
                .as_f64()
                .ok_or_else(|| format!("afterMs is not a number: {late}"))?;
            ensure(after < 1000.0, || format!("afterMs {after} ≥ 1000"))
        },
    )
    .await
});

case!(c50, |k| {
    with_service(k, Launch::default(), async |k, svc| {
        let (task, path) = hold(k, svc).await?;
        task.abort(); // closes the connection
        let record = svc
            .process
            .stderr
            .wait_record(SECS(5), |r| {
                event_of(r) == Some("call")
                    && r["id"] == "conformance.hold"
                    && r["outcome"] == "cancelled"
            })
            .await;
        release(&path)?;
        ensure(record.is_some(), || {
            "no call record {id:conformance.hold, outcome:cancelled} within 5 s".to_owned()
        })
    })
    .await
});

async fn at_cap(
    k: &Kit,
    check: impl AsyncFnOnce(&Kit, &Service) -> Result<(), String>,
) -> Result<(), String> {
    with_service(
        k,
        launch_env(&[("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "1")]),
        async |k, svc| {
            let (task, path) = hold(k, svc).await?;
            let checked = check(k, svc).await;
            release(&path)?;
            let held = joined(task)
                .await?
                .result()
                .map_err(|e| format!("the held call: {e}"))?;
            checked?;
            ensure(held == json!({"released": true}), || {
                format!("the held call returned {held}")
            })
        },
    )
    .await
}

case!(c51, |k| {
    at_cap(k, async |k, svc| {
        let r = post(
            k,
            svc,
            &invoke("conformance.echo", json!({"message": "hi"})),
        )
        .await?;
        r.expect(503, &json!({"error": "overloaded"}))?
            .expect_header("retry-after", "1")?;
        Ok(())
    })
    .await
});

case!(c52, |k| {
    at_cap(k, async |k, svc| {
        k.call_on(svc, Call::get("/v1/info").auth())
            .await?
            .expect_status(200)?;
        k.call_on(svc, Call::get("/healthz"))
            .await?
            .expect(200, &json!({"status": "ok"}))?;
        Ok(())
    })
    .await
});

case!(c61, |k| {
    let svc = k.base().await?;
    let port = svc.port;
    let r = svc
        .process
        .stderr
        .records()
        .into_iter()
        .find(|r| event_of(r) == Some("listening"))
        .ok_or("no listening line")?;
    ensure(r["kind"] == "listening", || format!("kind: {r}"))?;
    ensure(r["port"].as_u64() == Some(u64::from(port)), || {
        format!("port: {r}")
    })?;
    ensure(r["packId"] == "conformance", || format!("packId: {r}"))?;
    ensure(
        r["event"] == "listening"
            && r["subsystem"] == "pack"
            && r["level"] == "info"
            && r["severity"] == "INFO",
        || {
            format!(
                "not a listening record (event, subsystem pack, level info, severity INFO): {r}"
            )
        },
    )?;
    ensure(r["time"].is_string(), || format!("time: {r}"))?;
    // The port is the bound one: the service answers on it.
    k.call(Call::get("/healthz")).await?.expect_status(200)?;
    Ok(())
});

/// A boot that must exit 1 with a `kind` record; returns the record.
async fn exits_with(k: &Kit, launch: &Launch, token: &str, kind: &str) -> Result<Value, String> {
    let (exit, records) = k.boot_fails(launch, token).await?;
    ensure(exit.code == Some(1), || {
        format!("expected exit 1, got {:?}", exit.code)
    })?;
    records
        .into_iter()
        .find(|r| event_of(r) == Some(kind))
        .ok_or_else(|| format!("no {kind} line on stderr"))
}

fn problems(r: &Value) -> Vec<String> {
    r["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p.as_str().map(str::to_owned))
        .collect()
}

case!(c62, |k| {
    exits_with(k, &Launch::default(), "", "config-invalid")
        .await
        .map(|_| ())
});

case!(c63, |k| {
    exits_with(k, &Launch::default(), "two words", "config-invalid")
        .await
        .map(|_| ())
});

case!(c64, |k| {
    let token = random_token();
    let mut svc = k
        .cmd
        .start(&Launch::default(), &format!("{token}\n"))
        .await?;
    let result = async {
        k.call_on(&svc, Call::get("/v1/info").token(token.clone()))
            .await?
            .expect_status(200)?;
        k.call_on(&svc, Call::get("/v1/info").token(format!("{token}x")))
            .await?
            .expect_status(401)?;
        Ok(())
    }
    .await;
    svc.process.stop(SECS(10)).await;
    result
});

case!(c65, |k| {
    let ext = k.base_index["tools"]
        .as_array()
        .and_then(|t| t.first())
        .and_then(|t| t["modulePath"].as_str())
        .and_then(|p| p.rsplit_once('.'))
        .map(|(_, e)| e.to_owned())
        .unwrap_or_else(|| "js".to_owned());
    let missing = format!("tools/does-not-exist.{ext}");
    let path = k.variant("missing-module", |index| {
        let mut tool = index["tools"][0].clone();
        tool["id"] = json!("conformance.does-not-exist");
        tool["modulePath"] = json!(missing);
        if let Some(t) = index["tools"].as_array_mut() {
            t.push(tool)
        }
    })?;
    let r = exits_with(
        k,
        &Launch {
            index: Some(path),
            ..Launch::default()
        },
        &random_token(),
        "boot-failed",
    )
    .await?;
    let want = format!("Missing module: {missing}");
    ensure(problems(&r).contains(&want), || {
        format!("problems lack {want:?}: {}", r["problems"])
    })
});

case!(c66, |k| {
    let path = k.tmp.path().join("no-such-index.json");
    let r = exits_with(
        k,
        &Launch {
            index: Some(path),
            ..Launch::default()
        },
        &random_token(),
        "boot-failed",
    )
    .await?;
    ensure(
        problems(&r)
            .first()
            .is_some_and(|p| p.starts_with("Cannot read the pack index")),
        || format!("problems[0]: {}", r["problems"]),
    )
});

case!(c67, |k| {
    let path = k.variant("v2", |index| index["v"] = json!(2))?;
    let r = exits_with(
        k,
        &Launch {
            index: Some(path),
            ..Launch::default()
        },
        &random_token(),
        "boot-failed",
    )
    .await?;
    ensure(
        problems(&r)
            .iter()
            .any(|p| p == "Index envelope v2 is not v1"),
        || format!("problems: {}", r["problems"]),
    )
});

case!(c68, |k| {
    let path = k.shipped("import-throws")?;
    let r = exits_with(
        k,
        &Launch {
            index: Some(path),
            ..Launch::default()
        },
        &random_token(),
        "boot-failed",
    )
    .await?;
    ensure(
        problems(&r)
            .iter()
            .any(|p| p.contains("conformance.import-throws")),
        || {
            format!(
                "no problem names conformance.import-throws: {}",
                r["problems"]
            )
        },
    )
});

case!(c69, |k| {
    let r = exits_with(
        k,
        &launch_env(&[("PORT", "x")]),
        &random_token(),
        "config-invalid",
    )
    .await?;
    let want = "PORT must be a port number, got \"x\"";
    ensure(problems(&r).iter().any(|p| p == want), || {
        format!("problems lack {want:?}: {}", r["problems"])
    })?;
    let r = exits_with(
        k,
        &launch_env(&[("PORT", "x"), ("KINDGI_PACK_SERVICE_MAX_CONCURRENCY", "0")]),
        &random_token(),
        "config-invalid",
    )
    .await?;
    ensure(problems(&r).len() == 2, || {
        format!("expected two problems, got {}", r["problems"])
    })
});

case!(c70, |k| {
    for (name, value) in [
        ("KINDGI_PACK_ENV_CHECK", "loose"),
        ("KINDGI_PACK_ENV_FILTER", "no"),
        ("KINDGI_LOG_LEVEL", "loud"),
    ] {
        let r = exits_with(
            k,
            &launch_env(&[(name, value)]),
            &random_token(),
            "config-invalid",
        )
        .await
        .map_err(|e| format!("{name}={value}: {e}"))?;
        if name == "KINDGI_LOG_LEVEL" {
            ensure(r.to_string().contains(name), || {
                format!("the config-invalid line does not name {name}: {r}")
            })?;
        }
    }
    Ok(())
});

case!(c71, |k| {
    let r = exits_with(
        k,
        &Launch {
            host: Some(String::new()),
            ..Launch::default()
        },
        &random_token(),
        "config-invalid",
    )
    .await?;
    ensure(
        problems(&r)
            .iter()
            .any(|p| p.contains("--host needs an address")),
        || format!("problems: {}", r["problems"]),
    )
});

case!(c72, |k| {
    let mut svc = k.start(&Launch::default()).await?;
    let result = async {
        let (task, path) = hold(k, &svc).await?;
        svc.process.terminate().await?;
        let drained = svc
            .process
            .stderr
            .wait_record(SECS(5), |r| event_of(r) == Some("draining"))
            .await;
        let checks = async {
            ensure(drained.is_some(), || {
                "no draining line within 5 s of SIGTERM".to_owned()
            })?;
            let r = k.call_on(&svc, Call::get("/readyz")).await?;
            r.expect(503, &json!({"error": "draining"}))?;
            ensure(r.header("retry-after").is_some(), || {
                "/readyz 503 without retry-after".to_owned()
            })?;
            post(
                k,
                &svc,
                &invoke("conformance.echo", json!({"message": "hi"})),
            )
            .await?
            .expect(503, &json!({"error": "draining"}))
            .map_err(|e| format!("a new invoke while draining: {e}"))?;
            Ok::<(), String>(())
        }
        .await;
        release(&path)?;
        let held = joined(task)
            .await?
            .result()
            .map_err(|e| format!("the held call: {e}"))?;
        checks?;
        ensure(held == json!({"released": true}), || {
            format!("the held call returned {held}")
        })?;
        let exit = svc
            .process
            .wait(SECS(10))
            .await
            .ok_or("still running 10 s after the held call finished")?;
        ensure(exit.code == Some(0), || {
            format!("exit code {:?}, expected 0", exit.code)
        })?;
        ensure(
            svc.process
                .stderr
                .records()
                .iter()
                .any(|r| event_of(r) == Some("stopped")),
            || "no stopped line".to_owned(),
        )
    }
    .await;
    svc.process.stop(SECS(2)).await;
    result
});

case!(c73, |k| {
    let mut svc = k.start(&Launch::default()).await?;
    let result = async {
        let (task, path) = hold(k, &svc).await?;
        let sent = Instant::now();
        svc.process.terminate().await?;
        let exit = svc.process.wait(SECS(12)).await;
        let took = sent.elapsed();
        task.abort();
        release(&path)?;
        let exit = exit.ok_or("still running 12 s after SIGTERM")?;
        ensure(exit.code == Some(0), || {
            format!("exit code {:?}, expected 0", exit.code)
        })?;
        ensure(took < Duration::from_millis(10_500), || {
            format!("exited {} ms after SIGTERM", took.as_millis())
        })
    }
    .await;
    svc.process.stop(SECS(2)).await;
    result
});

/// Calls echo on the base service with a fresh runId (and `headers`); returns its call record.
async fn echo_record(k: &mut Kit, headers: &[(&'static str, &str)]) -> Result<Value, String> {
    let run = format!("run-{:016x}", rand::random::<u64>());
    let mut m = invoke("conformance.echo", json!({"message": "hi"}));
    m["ctx"]["runId"] = json!(run);
    let mut call = Call::post("/v1/invoke").auth().json(&m);
    for (name, value) in headers {
        call = call.header(name, *value);
    }
    k.call(call).await?.result()?;
    let svc = k.base().await?;
    svc.process
        .stderr
        .wait_record(SECS(3), |r| {
            event_of(r) == Some("call") && r["runId"] == run.as_str()
        })
        .await
        .ok_or_else(|| format!("no call record with runId {run} within 3 s"))
}

case!(c74, |k| {
    let r = echo_record(k, &[]).await?;
    ensure(
        r["kind"] == "call"
            && r["id"] == "conformance.echo"
            && r["target"] == "tool"
            && r["outcome"] == "ok"
            && r["durationMs"].is_number(),
        || format!("expected kind call, id, target tool, outcome ok, numeric durationMs: {r}"),
    )
});

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

case!(c75, |k| {
    let tp = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let r = echo_record(k, &[("traceparent", &tp)]).await?;
    ensure(r["traceId"] == PARENT_TRACE, || format!("traceId: {r}"))?;
    let span = r["spanId"].as_str().unwrap_or_default();
    ensure(
        span.len() == 16 && span.bytes().all(|b| b.is_ascii_hexdigit()) && span != PARENT_SPAN,
        || format!("spanId must be a new 16-hex id: {r}"),
    )?;
    ensure(
        r["tenantId"] == "t-conformance"
            && r["runId"].is_string()
            && r["toolId"] == "conformance.echo",
        || format!("ids: {r}"),
    )?;
    ensure(r["subsystem"] == "pack" && r["event"] == "call", || {
        format!("subsystem/event: {r}")
    })?;
    let msg = r["message"].as_str().unwrap_or_default();
    let ok = msg
        .strip_prefix("tool conformance.echo ok ")
        .and_then(|m| m.strip_suffix("ms"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    ensure(ok, || {
        format!("message {msg:?} does not match ^tool conformance\\.echo ok \\d+ms$")
    })
});

case!(c76, |k| {
    let r = echo_record(k, &[]).await?;
    ensure(
        r.get("traceId").is_none() && r.get("spanId").is_none(),
        || format!("traceId/spanId without a traceparent: {r}"),
    )
});

fn declared_env(required: &[&str]) -> impl FnOnce(&mut Value) {
    let required: Vec<Value> = required.iter().map(|s| json!(s)).collect();
    move |index: &mut Value| {
        index["env"] = json!({"optional": ["CONFORMANCE_OPTIONAL"], "required": required})
    }
}

async fn info_missing(k: &Kit, svc: &Service) -> Result<Value, String> {
    let r = k.call_on(svc, Call::get("/v1/info").auth()).await?;
    r.expect_status(200)?;
    let info = r.json()?;
    check_info_shape(&info)?;
    Ok(info["missingEnv"].clone())
}

case!(c77, |k| {
    let index = k.variant("env-ab", declared_env(&["CONFORMANCE_A", "CONFORMANCE_B"]))?;
    let launch = Launch {
        index: Some(index),
        ..launch_env(&[("CONFORMANCE_A", "")])
    };
    with_service(k, launch, async |k, svc| {
        let want =
            json!({"error": "missing env", "missingEnv": ["CONFORMANCE_A", "CONFORMANCE_B"]});
        k.call_on(svc, Call::get("/healthz"))
            .await?
            .expect(200, &json!({"status": "ok"}))?;
        let r = k.call_on(svc, Call::get("/readyz")).await?;
        r.expect(503, &want)?;
        ensure(r.header("retry-after").is_some(), || {
            "/readyz 503 without retry-after".to_owned()
        })?;
        post(
            k,
            svc,
            &invoke("conformance.echo", json!({"message": "hi"})),
        )
        .await?
        .expect(503, &want)
        .map_err(|e| format!("echo: {e}"))?;
        let missing = info_missing(k, svc).await?;
        ensure(missing == json!(["CONFORMANCE_A", "CONFORMANCE_B"]), || {
            format!("info.missingEnv: {missing}")
        })?;
        let rec = svc
            .process
            .stderr
            .records()
            .into_iter()
            .find(|r| event_of(r) == Some("missing-env"))
            .ok_or("no missing-env record")?;
        ensure(
            rec["check"] == "strict" && rec["names"] == json!(["CONFORMANCE_A", "CONFORMANCE_B"]),
            || format!("missing-env record: {rec}"),
        )
    })
    .await
});

case!(c78, |k| {
    let index = k.variant("env-ab", declared_env(&["CONFORMANCE_A", "CONFORMANCE_B"]))?;
    let launch = Launch {
        index: Some(index),
        ..launch_env(&[("CONFORMANCE_A", "a"), ("KINDGI_PACK_ENV_CHECK", "warn")])
    };
    with_service(k, launch, async |k, svc| {
        k.call_on(svc, Call::get("/readyz"))
            .await?
            .expect(200, &json!({"status": "ready"}))?;
        post(
            k,
            svc,
            &invoke("conformance.echo", json!({"message": "hi"})),
        )
        .await?
        .result()?;
        let missing = info_missing(k, svc).await?;
        ensure(missing == json!(["CONFORMANCE_B"]), || {
            format!("info.missingEnv: {missing}")
        })
    })
    .await
});

case!(c79, |k| {
    let index = k.variant("env-ab", declared_env(&["CONFORMANCE_A", "CONFORMANCE_B"]))?;
    let launch = Launch {
        index: Some(index),
        ..launch_env(&[("CONFORMANCE_A", "a"), ("CONFORMANCE_B", " ")])
    };
    with_service(k, launch, async |k, svc| {
        k.call_on(svc, Call::get("/readyz"))
            .await?
            .expect(200, &json!({"status": "ready"}))?;
        let missing = info_missing(k, svc).await?;
        ensure(missing == json!([]), || {
            format!("info.missingEnv: {missing}")
        })?;
        ensure(
            !svc.process
                .stderr
                .records()
                .iter()
                .any(|r| event_of(r) == Some("missing-env")),
            || "a missing-env record was written".to_owned(),
        )
    })
    .await
});

case!(c80, |k| {
    let index = k.variant("no-env", |index| {
        index.as_object_mut().map(|o| o.remove("env"));
    })?;
    with_service(
        k,
        Launch {
            index: Some(index),
            ..Launch::default()
        },
        async |k, svc| {
            let missing = info_missing(k, svc).await?;
            ensure(missing == json!([]), || {
                format!("info.missingEnv: {missing}")
            })
        },
    )
    .await
});

/// One try at 81: `Ok(true)` observed draining (and nothing contradicting it), `Ok(false)`
/// could not observe the drain, `Err` a contradicting answer.
async fn drain_wins_once(k: &Kit, index: &std::path::Path) -> Result<Result<(), String>, String> {
    let mut svc = k
        .start(&Launch {
            index: Some(index.to_path_buf()),
            ..Launch::default()
        })
        .await?;
    // Four tight /readyz loops run across the SIGTERM; each answer keeps the time its request
    // was sent and the time it came back.
    let pollers: Vec<_> = (0..4)
        .map(|_| {
            let http = k.http.clone();
            let base = svc.base.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                let until = Instant::now() + SECS(12);
                while Instant::now() < until {
                    let sent = Instant::now();
                    match Call::get("/readyz")
                        .timeout(SECS(2))
                        .send(&http, &base, "")
                        .await
                    {
                        Ok(r) => answers.push((sent, Instant::now(), r)),
                        Err(_) => break,
                    }
                }
                answers
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = Instant::now();
    let outcome = async {
        svc.process.terminate().await?;
        svc.process
            .stderr
            .wait_record(SECS(5), |r| event_of(r) == Some("draining"))
            .await
            .ok_or("no draining line")?;
        let exit = svc.process.wait(SECS(12)).await;
        let stopped_after = sent.elapsed();
        let mut answers = Vec::new();
        for p in pollers {
            answers.extend(p.await.map_err(|e| e.to_string())?);
        }
        let draining = json!({"error": "draining"});
        let is_draining = |r: &Reply| r.status == 503 && r.json().ok().as_ref() == Some(&draining);
        // The first time a draining answer came back; a request sent after it must be told
        // draining too (the flag never goes back, and it wins over missing env).
        let Some(first) = answers
            .iter()
            .filter(|(_, _, r)| is_draining(r))
            .map(|(_, got, _)| *got)
            .min()
        else {
            return Ok(Err(format!(
                "no /readyz answer said draining: the service {} {} ms after SIGTERM",
                if exit.is_some() {
                    "exited"
                } else {
                    "stopped answering"
                },
                stopped_after.as_millis()
            )));
        };
        for (_, _, r) in answers.iter().filter(|(s, _, _)| *s > first) {
            r.expect(503, &draining)
                .map_err(|e| format!("a /readyz asked after a draining answer: {e}"))?;
        }
        Ok(Ok(()))
    }
    .await;
    svc.process.stop(SECS(2)).await;
    outcome
}

case!(c81, |k| {
    let index = k.variant("env-ab", declared_env(&["CONFORMANCE_A", "CONFORMANCE_B"]))?;
    // Nothing can be held while invokes are refused, so the drain lasts only as long as the
    // service keeps answering after SIGTERM; three tries to catch it.
    let mut missed = Vec::new();
    for _ in 0..3 {
        match drain_wins_once(k, &index).await? {
            Ok(()) => return Ok(()),
            Err(why) => missed.push(why),
        }
    }
    Err(format!(
        "{} (3 tries) — the reference service polls its in-flight count every 25 ms, so it keeps \
         answering for at least that long after SIGTERM",
        missed.join("; ")
    ))
});

const PROBES: [(&str, &str); 15] = [
    ("HOSTNAME", "conformance-host"),
    ("K_SERVICE", "svc"),
    ("K_REVISION", "svc-001"),
    ("AWS_REGION", "eu-west-1"),
    ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds"),
    ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
    ("ECS_CONTAINER_METADATA_URI_V4", "http://169.254.170.2/v4"),
    ("IDENTITY_ENDPOINT", "http://localhost:42356/msi/token"),
    ("AZURE_CLIENT_ID", "client"),
    ("AZURE_FEDERATED_TOKEN_FILE", "/var/run/azure"),
    ("LC_MESSAGES", "C"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
    ("OTEL_SERVICE_NAME", "conformance"),
    ("CLOUD_RUN_EXECUTION", "exec-1"),
    ("CONTAINER_APP_NAME", "app"),
];

async fn env_names(k: &Kit, svc: &Service) -> Result<Vec<String>, String> {
    let out = post(k, svc, &invoke("conformance.process-env", json!({})))
        .await?
        .result()?;
    Ok(out["names"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect())
}

fn dropped_names(svc: &Service) -> Option<Vec<String>> {
    svc.process
        .stderr
        .records()
        .into_iter()
        .find(|r| event_of(r) == Some("env-dropped"))
        .map(|r| {
            r["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
}

case!(c82, |k| {
    let index = k.variant("env-a", declared_env(&["CONFORMANCE_A"]))?;
    let undeclared = format!("undeclared-{:016x}", rand::random::<u64>());
    let mut env: BTreeMap<String, String> = PROBES
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    env.insert("CONFORMANCE_A".into(), "a".into());
    env.insert("CONFORMANCE_OPTIONAL".into(), "o".into());
    env.insert("CONFORMANCE_UNDECLARED".into(), undeclared.clone());
    env.insert("AWS_SECRET_ACCESS_KEY".into(), "not-a-real-key".into());
    with_service(
        k,
        Launch {
            index: Some(index),
            env,
            ..Launch::default()
        },
        async |k, svc| {
            let names = env_names(k, svc).await?;
            let must: Vec<&str> = [
                "CONFORMANCE_A",
                "CONFORMANCE_OPTIONAL",
                "KINDGI_LOG_FORMAT",
                "PORT",
                "PATH",
            ]
            .into_iter()
            .chain(PROBES.iter().map(|(n, _)| *n))
            .collect();
            let lacking: Vec<&&str> = must
                .iter()
                .filter(|n| !names.iter().any(|x| x == **n))
                .collect();
            ensure(lacking.is_empty(), || {
                format!("process-env lacks {lacking:?}")
            })?;
            for gone in ["CONFORMANCE_UNDECLARED", "AWS_SECRET_ACCESS_KEY"] {
                ensure(!names.iter().any(|n| n == gone), || {
                    format!("process-env still lists {gone}")
                })?;
            }
            let dropped = dropped_names(svc).ok_or("no env-dropped line")?;
            ensure(
                dropped.iter().any(|n| n == "CONFORMANCE_UNDECLARED")
                    && dropped.iter().any(|n| n == "AWS_SECRET_ACCESS_KEY"),
                || format!("env-dropped names lack the undeclared ones: {dropped:?}"),
            )?;
            ensure(!dropped.iter().any(|n| n == "CONFORMANCE_A"), || {
                "env-dropped lists CONFORMANCE_A".to_owned()
            })?;
            let leaked = svc
                .process
                .stderr
                .snapshot()
                .into_iter()
                .find(|l| l.contains(&undeclared));
            ensure(leaked.is_none(), || {
                format!(
                    "an undeclared value appears on stderr: {}",
                    leaked.unwrap_or_default()
                )
            })
        },
    )
    .await
});

case!(c83, |k| {
    let index = k.variant("no-env", |index| {
        index.as_object_mut().map(|o| o.remove("env"));
    })?;
    let launch = Launch {
        index: Some(index),
        ..launch_env(&[("CONFORMANCE_UNDECLARED", "u"), ("K_SERVICE", "svc")])
    };
    with_service(k, launch, async |k, svc| {
        let names = env_names(k, svc).await?;
        ensure(names.iter().any(|n| n == "K_SERVICE"), || {
            "K_SERVICE was dropped".to_owned()
        })?;
        ensure(!names.iter().any(|n| n == "CONFORMANCE_UNDECLARED"), || {
            "CONFORMANCE_UNDECLARED was kept".to_owned()
        })
    })
    .await
});

case!(c84, |k| {
    let index = k.variant("env-a", declared_env(&["CONFORMANCE_A"]))?;
    let launch = Launch {
        index: Some(index),
        ..launch_env(&[
            ("CONFORMANCE_A", "a"),
            ("CONFORMANCE_UNDECLARED", "u"),
            ("KINDGI_PACK_ENV_FILTER", "off"),
        ])
    };
    with_service(k, launch, async |k, svc| {
        let names = env_names(k, svc).await?;
        for n in ["CONFORMANCE_A", "CONFORMANCE_UNDECLARED"] {
            ensure(names.iter().any(|x| x == n), || {
                format!("{n} is not visible with the filter off")
            })?;
        }
        ensure(dropped_names(svc).is_none(), || {
            "an env-dropped line was written with the filter off".to_owned()
        })
    })
    .await
});
