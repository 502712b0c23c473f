//! `kindgi webhooks` against a real `kindgi server` (SQLite): the OFFICIAL CLI (PyPI
//! `kindgi-cli==0.1.10`) registers a GitHub-preset trigger with a generated secret, lists,
//! gets, pauses, resumes, reads fires and unregisters it; a delivery signed as GitHub signs
//! (HMAC computed with Python's `hmac`, independently of the server) starts a run with
//! `startedBy: "webhook"` whose input is the body. Then our own CLI does the same round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::{BIN, Server, create_token};

const SECRETS_KEY: &str = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=";
const PUBLIC: &str = "https://hooks.example.test";

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(bin: &Path, home: &Path, url: &str, key: &str, args: &[&str]) -> Out {
    let o = Command::new(bin)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("KINDGI_API_URL", url)
        .env("KINDGI_API_TOKEN", key)
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn json_of(out: &Out, args: &[&str]) -> Value {
    assert_eq!(out.code, 0, "{args:?}: {}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out.stdout))
}

/// HMAC-SHA256 hex of `body` under `secret`, by Python's `hmac`.
fn python_hmac_hex(secret: &str, body: &str) -> String {
    let o = Command::new("python3")
        .args([
            "-c",
            "import hmac,hashlib,sys; print(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).hexdigest())",
            secret,
            body,
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap().trim().to_owned()
}

async fn publish(http: &reqwest::Client, url: &str, key: &str) {
    let project = kindgi_api::projects::default_project_id("acme");
    // The tool's call fails (nothing listens there); the run still starts, which is what
    // this test is about.
    let tool = json!({
        "projectId": project, "id": "acme.notify", "version": "1.0.0",
        "description": "tells a shop", "mutating": false,
        "input": {"type": "object"}, "output": {},
        "spec": {"kind": "http", "method": "POST", "urlTemplate": "http://127.0.0.2:9/notify"},
    });
    let flow = json!({
        "projectId": project, "id": "acme.on-push", "version": "1.0.0", "name": "on push",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.notify"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}],
    });
    for (path, body) in [("/v1/tools", tool), ("/v1/flows", flow)] {
        let r = http
            .post(format!("{url}{path}"))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status().as_u16(),
            201,
            "{path}: {}",
            r.text().await.unwrap()
        );
    }
}

/// One full round with `bin` (the official CLI or ours).
async fn round(bin: &Path, server: &Server, key: &str, secret_name: &str) {
    let home = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| run(bin, home.path(), &server.url, key, args);
    let secret_flag = format!("--secret={secret_name}");
    let args = [
        "webhooks",
        "register",
        "--flow=acme.on-push",
        "--flow-version=1.0.0",
        secret_flag.as_str(),
        "--generate-secret",
        "--preset=github",
    ];
    let out = cli(&args);
    let t = json_of(&out, &args);
    let id = t["triggerId"].as_str().unwrap().to_owned();
    let secret = t["signingSecret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 40);
    assert_eq!(
        t["signature"],
        json!({"kind": "hmac-sha256", "encoding": "hex", "header": "X-Hub-Signature-256", "prefix": "sha256="})
    );
    assert_eq!(t["deliveryIdHeader"], "X-GitHub-Delivery");
    assert!(
        out.stderr
            .contains(&format!("Registered webhook trigger {id}")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("shown this once"), "{}", out.stderr);
    let receive = t["receiveUrl"].as_str().unwrap().to_owned();
    assert!(receive.starts_with(PUBLIC), "{receive}");
    assert!(out.stderr.contains(&receive), "{}", out.stderr);

    let list = json_of(&cli(&["webhooks", "list"]), &["list"]);
    assert!(
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["triggerId"] == id.as_str()),
        "{list}"
    );
    let got = json_of(&cli(&["webhooks", "get", &id]), &["get"]);
    assert!(got.get("signingSecret").is_none());
    let paused = json_of(&cli(&["webhooks", "pause", &id]), &["pause"]);
    assert_eq!(paused["status"], "paused");
    let again = cli(&["webhooks", "pause", &id]);
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("Error [trigger-already-in-state]"),
        "{}",
        again.stderr
    );
    let resumed = json_of(&cli(&["webhooks", "resume", &id]), &["resume"]);
    assert_eq!(resumed["status"], "active");

    // A delivery signed as GitHub signs, posted to the server (the receive URL's path).
    let body = r#"{"ref":"refs/heads/main","after":"abc123"}"#;
    let path = receive.strip_prefix(PUBLIC).unwrap();
    let r = reqwest::Client::new()
        .post(format!("{}{path}", server.url))
        .header(
            "X-Hub-Signature-256",
            format!("sha256={}", python_hmac_hex(&secret, body)),
        )
        .header("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
        .header("X-GitHub-Event", "push")
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 202);
    let fire: Value = r.json().await.unwrap();
    let fire_id = fire["fireId"].as_str().unwrap().to_owned();

    let mut run_id = None;
    for _ in 0..200 {
        let fires = json_of(&cli(&["webhooks", "fires", &id]), &["fires"]);
        let f = &fires["data"][0];
        assert_eq!(f["fireId"], fire_id.as_str(), "{fires}");
        if f["outcome"] == "started" {
            run_id = f["runId"].as_str().map(str::to_owned);
            break;
        }
        assert_eq!(f["outcome"], "pending", "{fires}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let run_id = run_id.expect("the fire started a run");
    let run = json_of(&cli(&["runs", "get", &run_id]), &["runs get"]);
    assert_eq!(run["startedBy"], "webhook", "{run}");
    // The input is in the run's first journal entry (the Run object carries none).
    let mut input = Value::Null;
    for _ in 0..200 {
        let journal = json_of(
            &cli(&["runs", "journal", &run_id, "--limit=1"]),
            &["journal"],
        );
        if journal["data"][0]["kind"] == "run.started" {
            input = journal["data"][0]["payload"]["input"].clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(input, serde_json::from_str::<Value>(body).unwrap());
    assert_eq!(run["trigger"]["triggerId"], id.as_str());
    assert_eq!(run["trigger"]["kind"], "webhook");

    let gone = json_of(&cli(&["webhooks", "unregister", &id]), &["unregister"]);
    assert_eq!(gone, json!({"triggerId": id, "unregistered": true}));
    let missing = cli(&["webhooks", "get", &id]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("Error [not-found]"),
        "{}",
        missing.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_with_the_official_cli_and_ours() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let key = create_token(&db, "acme").key;
    let server = Server::start_with(
        &db,
        &[],
        &[
            ("KINDGI_SECRETS_KEY", SECRETS_KEY),
            ("KINDGI_PUBLIC_URL", PUBLIC),
        ],
    );
    publish(&reqwest::Client::new(), &server.url, &key).await;
    if let Some(official) =
        kindgi_spec::testing::official_cli("webhooks_with_the_official_cli_and_ours")
    {
        round(&official, &server, &key, "GH_OFFICIAL").await;
    }
    round(Path::new(BIN), &server, &key, "GH_OURS").await;
    server.stop();
}
