//! Our CLI's `kindgi schedules …`, `kindgi mail-triggers …` and `kindgi connections …`
//! against a real `kindgi server` (SQLite), as `webhooks_cli.rs` does for `kindgi webhooks`:
//! every subcommand's happy path, its output (the JSON, and the table of the listing ones),
//! and one error of each with its exact text and exit code (2: the CLI's usage errors, 1: the
//! server's refusals, `Error [<tag>]: <message>`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::{BIN, Server, create_token};

const SECRETS_KEY: &str = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=";
const MISSING: &str = "00000000-0000-4000-8000-000000000000";

#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Our CLI against one server with one key, in a folder of its own (`HOME` too).
struct Cli {
    home: tempfile::TempDir,
    url: String,
    key: String,
}

impl Cli {
    fn new(server: &Server, key: &str) -> Cli {
        Cli {
            home: tempfile::tempdir().unwrap(),
            url: server.url.clone(),
            key: key.to_owned(),
        }
    }

    /// `kindgi ARGS` with `stdin` written to its standard input.
    fn with_stdin(&self, args: &[&str], stdin: &str) -> Out {
        let mut child = Command::new(BIN)
            .args(args)
            .current_dir(self.home.path())
            .env("HOME", self.home.path())
            .env("KINDGI_API_URL", &self.url)
            .env("KINDGI_API_TOKEN", &self.key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Out {
        self.with_stdin(args, "")
    }

    /// `kindgi ARGS`, which must succeed and print JSON.
    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"))
    }

    /// `kindgi ARGS`, which must fail with `code` and print exactly `stderr` (and nothing on
    /// stdout).
    fn fails(&self, args: &[&str], code: i32, stderr: &str) {
        let out = self.run(args);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.trim_end()),
            (code, "", stderr),
            "{args:?}"
        );
    }
}

/// A `--table` output: its header's columns and each row's cells (columns are two spaces
/// or more apart; no cell is empty, a missing value is `-`).
fn table(out: &Out) -> (Vec<String>, Vec<Vec<String>>) {
    assert_eq!(out.code, 0, "{out:?}");
    let split = |line: &str| -> Vec<String> {
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut lines = out.stdout.lines();
    let header = split(lines.next().unwrap_or_default());
    (header, lines.map(split).collect())
}

fn cols(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_owned()
}

/// A tool and a flow the triggers can name (the tool's call fails — nothing listens there —
/// but the runs start, which is what these tests are about).
async fn publish(server: &Server, key: &str) {
    let http = reqwest::Client::new();
    let project = kindgi_api::projects::default_project_id("acme");
    let tool = json!({
        "projectId": project, "id": "acme.notify", "version": "1.0.0",
        "description": "tells a shop", "mutating": false,
        "input": {"type": "object"}, "output": {},
        "spec": {"kind": "http", "method": "POST", "urlTemplate": "http://127.0.0.2:9/notify"},
    });
    let flow = json!({
        "projectId": project, "id": "acme.digest", "version": "1.0.0", "name": "digest",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.notify"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}],
    });
    for (path, body) in [("/v1/tools", tool), ("/v1/flows", flow)] {
        let r = http
            .post(format!("{}{path}", server.url))
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

fn start(envs: &[(&str, &str)]) -> (tempfile::TempDir, Server, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db").display().to_string();
    let key = create_token(&db, "acme").key;
    let server = Server::start_with(&db, &[], envs);
    (dir, server, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_commands() {
    let (_dir, server, key) = start(&[]);
    publish(&server, &key).await;
    let cli = Cli::new(&server, &key);

    // create: every flag reaches the record.
    let created = cli.json(&[
        "schedules",
        "create",
        "--flow=acme.digest",
        "--flow-version=1.0.0",
        "--cron=0 7 * * 1-5",
        "--timezone=Europe/Berlin",
        "--input={\"orderId\":\"ord_1\"}",
        "--catch-up=skip",
        "--overlap=allow",
        "--starting-deadline=120",
        "--label=weekday digest",
    ]);
    let id = s(&created["scheduleId"]);
    assert_eq!(created["triggerId"], id.as_str());
    assert_eq!(created["flowId"], "acme.digest");
    assert_eq!(created["flowVersion"], "1.0.0");
    assert_eq!(created["cronExpression"], "0 7 * * 1-5");
    assert_eq!(created["timezone"], "Europe/Berlin");
    assert_eq!(created["input"], json!({"orderId": "ord_1"}));
    assert_eq!(created["catchUp"], "skip");
    assert_eq!(created["overlap"], "allow");
    assert_eq!(created["startingDeadlineSeconds"], 120);
    assert_eq!(created["label"], "weekday digest");
    assert_eq!(created["status"], "active");
    let next = s(&created["nextFireAt"]);
    let owner = created["owner"]["displayName"]
        .as_str()
        .or_else(|| created["owner"]["id"].as_str())
        .unwrap()
        .to_owned();
    cli.fails(
        &[
            "schedules",
            "create",
            "--flow=acme.digest",
            "--flow-version=1.0.0",
        ],
        2,
        "Error: --cron=<expr> is required\nUsage: kindgi schedules create --help",
    );
    cli.fails(
        &["schedules", "create", "--cron=@daily"],
        2,
        "Error: name what it runs: --agent=<id> or --flow=<id> --flow-version=<v>\nUsage: kindgi schedules create --help",
    );
    cli.fails(
        &[
            "schedules",
            "create",
            "--cron=@daily",
            "--flow=acme.nothing",
            "--flow-version=1.0.0",
        ],
        1,
        "Error [not-found]: No flow \"acme.nothing\" at version \"1.0.0\"",
    );
    let bad_zone = cli.run(&[
        "schedules",
        "create",
        "--cron=@daily",
        "--timezone=Mars/Olympus",
        "--flow=acme.digest",
        "--flow-version=1.0.0",
    ]);
    assert_eq!(bad_zone.code, 1, "{bad_zone:?}");
    assert!(
        bad_zone.stderr.starts_with("Error [invalid-request]: ")
            && bad_zone.stderr.contains("Mars/Olympus"),
        "{bad_zone:?}"
    );

    // list: the JSON page and the table.
    let page = cli.json(&["schedules", "list"]);
    assert_eq!(page["hasMore"], false);
    assert_eq!(page["data"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["data"][0]["scheduleId"], id.as_str());
    let (header, rows) = table(&cli.run(&["schedules", "list", "--table"]));
    assert_eq!(
        header,
        cols(&[
            "ID", "RUNS", "CRON", "TIMEZONE", "STATUS", "OWNER", "NEXT", "LABEL"
        ])
    );
    assert_eq!(
        rows,
        vec![cols(&[
            &id,
            "flow acme.digest@1.0.0",
            "0 7 * * 1-5",
            "Europe/Berlin",
            "active",
            &owner,
            &next,
            "weekday digest",
        ])]
    );
    let bad_limit = cli.run(&["schedules", "list", "--limit=many"]);
    assert_eq!(bad_limit.code, 2, "{bad_limit:?}");
    assert!(
        bad_limit
            .stderr
            .contains("invalid value 'many' for '--limit <LIMIT>'"),
        "{bad_limit:?}"
    );

    // get, with the next occurrences.
    let got = cli.json(&["schedules", "get", &id, "--upcoming=3"]);
    assert_eq!(got["scheduleId"], id.as_str());
    let upcoming = got["upcoming"].as_array().unwrap();
    assert_eq!(upcoming.len(), 3, "{got}");
    assert_eq!(upcoming[0], next.as_str());
    cli.fails(
        &["schedules", "get", MISSING],
        1,
        &format!("Error [not-found]: No schedule with id \"{MISSING}\""),
    );
    cli.fails(
        &["schedules", "get", &id, "--upcoming=21"],
        1,
        "Error [invalid-request]: `upcoming` must be an integer from 1 to 20",
    );

    // update: only what is given changes.
    let updated = cli.json(&[
        "schedules",
        "update",
        &id,
        "--cron=30 6 * * *",
        "--label=daily digest",
    ]);
    assert_eq!(updated["cronExpression"], "30 6 * * *");
    assert_eq!(updated["label"], "daily digest");
    assert_eq!(updated["timezone"], "Europe/Berlin");
    assert_eq!(updated["overlap"], "allow");
    cli.fails(
        &["schedules", "update", &id, "--starting-deadline=0"],
        1,
        "Error [invalid-request]: `startingDeadlineSeconds` must be an integer from 1 to 86400",
    );

    // pause and resume.
    assert_eq!(cli.json(&["schedules", "pause", &id])["status"], "paused");
    cli.fails(
        &["schedules", "pause", &id],
        1,
        "Error [trigger-already-in-state]: The trigger is already paused",
    );
    let paused = cli.json(&["schedules", "list", "--status=paused"]);
    assert_eq!(paused["data"][0]["scheduleId"], id.as_str(), "{paused}");
    assert_eq!(cli.json(&["schedules", "resume", &id])["status"], "active");
    cli.fails(
        &["schedules", "resume", &id],
        1,
        "Error [trigger-already-in-state]: The trigger is already active",
    );

    // run-now: a manual fire that starts a run of the flow.
    let fire = cli.json(&["schedules", "run-now", &id]);
    assert_eq!(fire["scheduleId"], id.as_str());
    assert_eq!(fire["manual"], true);
    let fire_id = s(&fire["fireId"]);
    cli.fails(
        &["schedules", "run-now"],
        2,
        "Error: missing <schedule-id>\nUsage: kindgi schedules run-now --help",
    );

    // fires: the JSON page, then the table, once the fire started its run.
    let mut started = Value::Null;
    for _ in 0..400 {
        let fires = cli.json(&["schedules", "fires", &id]);
        assert_eq!(fires["data"][0]["fireId"], fire_id.as_str(), "{fires}");
        if fires["data"][0]["outcome"] == "started" {
            started = fires["data"][0].clone();
            break;
        }
        assert_eq!(fires["data"][0]["outcome"], "pending", "{fires}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let run_id = s(&started["runId"]);
    let (header, rows) = table(&cli.run(&["schedules", "fires", &id, "--table"]));
    assert_eq!(
        header,
        cols(&["FIRED", "FOR", "OUTCOME", "STARTED", "NOTE"])
    );
    assert_eq!(
        rows,
        vec![cols(&[
            &s(&started["firedAt"]),
            "run-now",
            "started",
            &run_id,
            "-",
        ])]
    );
    cli.fails(
        &["schedules", "fires", MISSING],
        1,
        &format!("Error [not-found]: No schedule with id \"{MISSING}\""),
    );
    let runs = cli.json(&["runs", "list", &format!("--trigger={id}")]);
    assert_eq!(runs["data"][0]["id"], run_id.as_str(), "{runs}");
    assert_eq!(runs["data"][0]["startedBy"], "schedule", "{runs}");

    // take-ownership: the caller again; a service account that isn't there is refused.
    let taken = cli.json(&["schedules", "take-ownership", &id]);
    assert_eq!(taken["owner"], created["owner"]);
    cli.fails(
        &[
            "schedules",
            "take-ownership",
            &id,
            &format!("--run-as={MISSING}"),
        ],
        1,
        &format!("Error [not-found]: No service account with id \"{MISSING}\""),
    );

    // unregister: then it is gone.
    assert_eq!(
        cli.json(&["schedules", "unregister", &id]),
        json!({"scheduleId": id, "unregistered": true})
    );
    cli.fails(
        &["schedules", "unregister", &id],
        1,
        &format!("Error [not-found]: No schedule with id \"{id}\""),
    );
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_triggers_commands() {
    let (dir, server, key) = start(&[]);
    publish(&server, &key).await;
    let cli = Cli::new(&server, &key);

    // create, inline and from a file.
    let spec = json!({
        "address": "Support@Acme.example",
        "flowId": "acme.digest", "flowVersion": "1.0.0",
        "senders": [{"address": "ada@acme.example", "userId": "ada"}],
        "mailbox": {"app": "google"},
        "config": {"input": {"queue": "support"}},
        "label": "support inbox",
    });
    let created = cli.json(&["mail-triggers", "create", &format!("--spec={spec}")]);
    let id = s(&created["triggerId"]);
    assert_eq!(created["address"], "support@acme.example");
    assert_eq!(created["flowId"], "acme.digest");
    assert_eq!(
        created["senders"],
        json!([{"address": "ada@acme.example", "userId": "ada"}])
    );
    assert_eq!(
        created["mailbox"],
        json!({"app": "google", "whose": "company"})
    );
    assert_eq!(created["input"], json!({"queue": "support"}));
    assert_eq!(created["label"], "support inbox");
    assert_eq!(created["status"], "active");
    assert_eq!(created["lastFiredAt"], Value::Null);
    let file = dir.path().join("billing.json");
    let mut billing = spec.clone();
    billing["address"] = json!("billing@acme.example");
    billing["mailbox"] = json!({"app": "google", "whose": "person"});
    std::fs::write(&file, billing.to_string()).unwrap();
    let second = cli.json(&[
        "mail-triggers",
        "create",
        &format!("--spec=@{}", file.display()),
    ]);
    let second_id = s(&second["triggerId"]);
    assert_eq!(second["mailbox"]["whose"], "person");
    cli.fails(
        &["mail-triggers", "create", &format!("--spec={spec}")],
        1,
        "Error [trigger-address-taken]: Another mail trigger already has the address support@acme.example: unregister it, or pick another address",
    );
    cli.fails(
        &["mail-triggers", "create"],
        2,
        "Error: --spec=<json-or-@file> is required\nUsage: kindgi mail-triggers create --help",
    );
    let mut no_senders = spec.clone();
    no_senders["address"] = json!("nobody@acme.example");
    no_senders["senders"] = json!([]);
    let out = cli.run(&["mail-triggers", "create", &format!("--spec={no_senders}")]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("Error [invalid-request]: `senders` must be an array of 1 to "),
        "{out:?}"
    );

    // list: the JSON page and the table, oldest first.
    let page = cli.json(&["mail-triggers", "list"]);
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["triggerId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{page}");
    assert!(ids.contains(&id.as_str()) && ids.contains(&second_id.as_str()));
    let (header, rows) = table(&cli.run(&["mail-triggers", "list", "--table"]));
    assert_eq!(
        header,
        cols(&["ID", "ADDRESS", "FLOW", "VERSION", "STATUS", "LAST FIRED"])
    );
    assert!(
        rows.contains(&cols(&[
            &id,
            "support@acme.example",
            "acme.digest",
            "1.0.0",
            "active",
            "-",
        ])),
        "{rows:?}"
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    let one = cli.json(&["mail-triggers", "list", "--limit=1"]);
    assert_eq!(one["data"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["hasMore"], true, "{one}");
    let cursor = s(&one["nextCursor"]);
    let rest = cli.json(&["mail-triggers", "list", &format!("--cursor={cursor}")]);
    assert_eq!(rest["data"].as_array().unwrap().len(), 1, "{rest}");
    assert_ne!(rest["data"][0]["triggerId"], one["data"][0]["triggerId"]);
    let bad_cursor = cli.run(&["mail-triggers", "list", "--cursor=not-a-cursor"]);
    assert_eq!(bad_cursor.code, 1, "{bad_cursor:?}");
    assert!(
        bad_cursor.stderr.starts_with("Error [invalid-request]: "),
        "{bad_cursor:?}"
    );

    // get.
    assert_eq!(cli.json(&["mail-triggers", "get", &id]), created);
    cli.fails(
        &["mail-triggers", "get", MISSING],
        1,
        &format!("Error [not-found]: No mail trigger with id \"{MISSING}\""),
    );

    // update: only the fields given change; the flow never does.
    let updated = cli.json(&[
        "mail-triggers",
        "update",
        &id,
        r#"--spec={"label":"support","senders":[{"address":"Bob@Acme.example","userId":"bob"}]}"#,
    ]);
    assert_eq!(updated["label"], "support");
    assert_eq!(
        updated["senders"],
        json!([{"address": "bob@acme.example", "userId": "bob"}])
    );
    assert_eq!(updated["address"], "support@acme.example");
    assert_eq!(updated["input"], json!({"queue": "support"}));
    assert_eq!(cli.json(&["mail-triggers", "get", &id]), updated);
    cli.fails(
        &[
            "mail-triggers",
            "update",
            &id,
            r#"--spec={"flowId":"acme.other"}"#,
        ],
        1,
        "Error [invalid-request]: `flowId` never changes: register another trigger to run something else",
    );
    cli.fails(
        &["mail-triggers", "update", &id],
        2,
        "Error: --spec=<json-or-@file> is required\nUsage: kindgi mail-triggers update --help",
    );
    let project = kindgi_api::projects::default_project_id("acme");
    let in_project = cli.json(&["mail-triggers", "list", &format!("--project={project}")]);
    assert_eq!(
        in_project["data"].as_array().unwrap().len(),
        2,
        "{in_project}"
    );
    let elsewhere = cli.json(&["mail-triggers", "list", &format!("--project={MISSING}")]);
    assert_eq!(elsewhere["data"], json!([]), "{elsewhere}");

    // pause and resume.
    assert_eq!(
        cli.json(&["mail-triggers", "pause", &id])["status"],
        "paused"
    );
    cli.fails(
        &["mail-triggers", "pause", &id],
        1,
        "Error [trigger-already-in-state]: The trigger is already paused",
    );
    let paused = cli.json(&["mail-triggers", "list", "--status=paused"]);
    assert_eq!(paused["data"].as_array().unwrap().len(), 1, "{paused}");
    assert_eq!(paused["data"][0]["triggerId"], id.as_str());
    assert_eq!(
        cli.json(&["mail-triggers", "resume", &id])["status"],
        "active"
    );
    cli.fails(
        &["mail-triggers", "resume", &id],
        1,
        "Error [trigger-already-in-state]: The trigger is already active",
    );

    // fires: none yet (mail needs a sender whose DMARC passes, beyond this test).
    assert_eq!(
        cli.json(&["mail-triggers", "fires", &id]),
        json!({"data": [], "hasMore": false})
    );
    let (header, rows) = table(&cli.run(&["mail-triggers", "fires", &id, "--table"]));
    assert_eq!(
        header,
        cols(&["FIRE", "AT", "OUTCOME", "RUN", "DETAIL", "FROM"])
    );
    assert!(rows.is_empty(), "{rows:?}");
    cli.fails(
        &["mail-triggers", "fires"],
        2,
        "Error: missing <trigger-id>\nUsage: kindgi mail-triggers fires --help",
    );

    // unregister: then it is gone, and its address is free again.
    assert_eq!(
        cli.json(&["mail-triggers", "unregister", &id]),
        json!({"triggerId": id, "unregistered": true})
    );
    cli.fails(
        &["mail-triggers", "unregister", &id],
        1,
        &format!("Error [not-found]: No mail trigger with id \"{id}\""),
    );
    let again = cli.json(&["mail-triggers", "create", &format!("--spec={spec}")]);
    assert_ne!(again["triggerId"], id.as_str());
    server.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_commands() {
    let (_dir, server, key) = start(&[("KINDGI_SECRETS_KEY", SECRETS_KEY)]);
    let cli = Cli::new(&server, &key);

    // add: the caller's own (an OAuth 2 token answer on stdin), and the company's (a bare token).
    let answer =
        r#"{"access_token":"tok-person-1","refresh_token":"ref-person-1","expires_in":3600}"#;
    let out = cli.with_stdin(
        &[
            "connections",
            "add",
            "--app=google",
            "--permission=gmail.send",
            "--permission=gmail.read",
            "--access-token-stdin",
        ],
        answer,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains("tok-person-1") && !out.stdout.contains("ref-person-1"));
    let mine: Value = serde_json::from_str(&out.stdout).unwrap();
    let mine_id = s(&mine["id"]);
    assert_eq!(mine["app"], "google");
    assert_eq!(mine["as"], "person");
    let user = s(&mine["userId"]);
    // Stored sorted.
    assert_eq!(mine["permissions"], json!(["gmail.read", "gmail.send"]));
    assert_eq!(mine["status"], "active");
    assert_eq!(mine["refreshable"], false);
    let expires = s(&mine["expiresAt"]);
    let out = cli.with_stdin(
        &[
            "connections",
            "add",
            "--app=slack",
            "--as=company",
            "--permission=chat.write",
            "--access-token-stdin",
            "--token-url=https://slack.example.com/api/oauth.v2.access",
            "--client-id=kindgi-demo",
            "--client-secret-name=SLACK_CLIENT_SECRET",
        ],
        "xoxb-company-1\n",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains("xoxb-company-1"));
    let company: Value = serde_json::from_str(&out.stdout).unwrap();
    let company_id = s(&company["id"]);
    assert_eq!(company["as"], "company");
    assert!(company.get("userId").is_none(), "{company}");
    assert!(company.get("expiresAt").is_none(), "{company}");
    assert_eq!(
        company["tokenUrl"],
        "https://slack.example.com/api/oauth.v2.access"
    );
    assert_eq!(company["clientId"], "kindgi-demo");
    assert_eq!(company["clientSecretName"], "SLACK_CLIENT_SECRET");
    cli.fails(
        &["connections", "add", "--app=google"],
        2,
        "Error: give the tokens on stdin with --access-token-stdin (never as a flag: other users can see a command's flags)\nUsage: kindgi connections add --help",
    );
    let out = cli.with_stdin(
        &["connections", "add", "--app=google", "--access-token-stdin"],
        "{\"access_token\": secret-not-json",
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.trim_end()),
        (
            2,
            "",
            "Error: stdin starts with `{` but is not a JSON object: give a bare access token, or an object with access_token (or accessToken)\nUsage: kindgi connections add --help"
        )
    );
    let out = cli.with_stdin(
        &["connections", "add", "--app=Google", "--access-token-stdin"],
        "tok",
    );
    assert_eq!(
        (out.code, out.stderr.trim_end()),
        (
            1,
            "Error [invalid-request]: Field `app` must be an app's entry id: lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit (e.g. \"google\")"
        ),
        "{out:?}"
    );

    // list: the JSON page (oldest first) and the table; filtered by app and by whose.
    let page = cli.json(&["connections", "list"]);
    let ids: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![mine_id.as_str(), company_id.as_str()], "{page}");
    assert_eq!(page["hasMore"], false);
    assert!(!page.to_string().contains("tok-person-1"));
    let (header, rows) = table(&cli.run(&["connections", "list", "--table"]));
    assert_eq!(
        header,
        cols(&["ID", "APP", "AS", "USER", "STATUS", "EXPIRES", "CREATED"])
    );
    assert_eq!(
        rows,
        vec![
            cols(&[
                &mine_id,
                "google",
                "person",
                &user,
                "active",
                &expires,
                &s(&mine["createdAt"]),
            ]),
            cols(&[
                &company_id,
                "slack",
                "company",
                "-",
                "active",
                "-",
                &s(&company["createdAt"]),
            ]),
        ]
    );
    let slack = cli.json(&["connections", "list", "--app=slack"]);
    assert_eq!(slack["data"].as_array().unwrap().len(), 1, "{slack}");
    assert_eq!(slack["data"][0]["id"], company_id.as_str());
    let people = cli.json(&["connections", "list", "--as=person"]);
    assert_eq!(people["data"].as_array().unwrap().len(), 1, "{people}");
    assert_eq!(people["data"][0]["id"], mine_id.as_str());
    cli.fails(
        &["connections", "list", "--as=robot"],
        1,
        "Error [invalid-request]: `as` must be \"person\" or \"company\"",
    );

    // get.
    assert_eq!(cli.json(&["connections", "get", &mine_id])["app"], "google");
    cli.fails(
        &["connections", "get", MISSING],
        1,
        &format!("Error [not-found]: No connection with id \"{MISSING}\""),
    );

    // connect: what to send to connect an app.
    let how = cli.json(&[
        "connections",
        "connect",
        "--app=github",
        "--permission=repo",
        "--permission=read:org",
    ]);
    assert_eq!(how["app"], "github");
    assert_eq!(how["as"], "person");
    assert_eq!(how["permissions"], json!(["repo", "read:org"]));
    assert_eq!(how["request"]["path"], "/v1/connections");
    assert_eq!(
        how["cli"],
        "kindgi connections add --app=github --as=person --permission=repo --permission=read:org --access-token-stdin"
    );
    cli.fails(
        &["connections", "connect", "--app=github", "--as=robot"],
        1,
        "Error [invalid-request]: `as` must be \"person\" or \"company\"",
    );

    // revoke: the tokens are gone; the record stays, revoked.
    let revoked = cli.json(&["connections", "revoke", &mine_id]);
    assert_eq!(revoked["status"], "revoked");
    assert!(revoked["revokedAt"].is_string(), "{revoked}");
    assert_eq!(
        cli.json(&["connections", "get", &mine_id])["status"],
        "revoked"
    );
    cli.fails(
        &["connections", "revoke", "not-a-uuid"],
        1,
        "Error [not-found]: No connection with id \"not-a-uuid\"",
    );
    server.stop();
}
