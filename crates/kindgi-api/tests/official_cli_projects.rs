//! Identity, projects and the tenant on the official wire: `GET /v1/identity/whoami`,
//! `GET|POST /v1/projects`, `GET|PATCH /v1/projects/{id}`, `GET|PATCH /v1/tenant` over real
//! HTTP (SQLite and PostgreSQL), a run started in a created project, and the official CLI's
//! `auth whoami`, `projects list|get|get-default|create|rename`, `tenant get|rename`, and
//! `tokens create --project` with `runs start [--project]` and `runs list` on its key. The CLI
//! part is skipped without the CLI, failed when `KINDGI_REQUIRE_REFERENCE=1` or `CI` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use kindgi_api::{AppState, router};
use kindgi_runtime::Runtime;
use kindgi_store::DatabaseKind;
use kindgi_store::testing::TestDatabase;
use kindgi_store::tokens::{KeyRole, NewToken, Principal};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn required() -> bool {
    std::env::var("KINDGI_REQUIRE_REFERENCE").as_deref() == Ok("1")
        || std::env::var_os("CI").is_some()
}

fn official_cli() -> Option<PathBuf> {
    let path = std::env::var_os("KINDGI_OFFICIAL_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/kindgi")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        !required(),
        "KINDGI_REQUIRE_REFERENCE=1 but the official CLI is missing at {}",
        path.display()
    );
    eprintln!("skipped: the official CLI is not at {}", path.display());
    None
}

struct Server {
    url: String,
    admin: String,
    member: String,
    other: String,
    http: reqwest::Client,
    _db: TestDatabase,
}

async fn server(kind: DatabaseKind) -> Server {
    let db = TestDatabase::new(kind).await.unwrap();
    let rt = Runtime::over(db.db.ports()).build();
    let echo = kindgi_tools::Tool::define("acme.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .mutating(false)
        .handler(|input: Value, _ctx| async move { Ok::<Value, kindgi_tools::HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    let flow = json!({
        "id": "acme.noop", "version": "1.0.0",
        "nodes": [{"id": "n", "kind": "tool", "ref": "acme.echo"}],
        "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
    });
    rt.flows().insert_json(&flow.to_string()).unwrap();
    let state = AppState::new(db.db.clone());
    let admin = state.tokens.create("acme", None).await.unwrap().key;
    let member = state
        .tokens
        .mint(&NewToken {
            tenant: "acme".into(),
            principal: Some(Principal::user("u2")),
            role: KeyRole::Member,
            capabilities: vec![],
            label: None,
            project_id: None,
            created_by: None,
            expires_at: None,
        })
        .await
        .unwrap()
        .key;
    let other = state.tokens.create("other", None).await.unwrap().key;
    let app = router(state.with_runtime(rt));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Server {
        url,
        admin,
        member,
        other,
        http: reqwest::Client::new(),
        _db: db,
    }
}

impl Server {
    async fn call(
        &self,
        key: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

async fn projects_over_http(kind: DatabaseKind) {
    let s = server(kind).await;
    let default_id = kindgi_api::projects::default_project_id("acme");
    let tenant_id = kindgi_api::projects::tenant_uuid("acme");

    let (st, me) = s.call(&s.member, "GET", "/v1/identity/whoami", None).await;
    assert_eq!(st, StatusCode::OK, "{me}");
    assert_eq!(me["tenantId"], json!(tenant_id));
    assert_eq!(me["userId"], "u2");
    assert_eq!(me["actor"], "user:u2");
    assert_eq!(me["role"], "member");
    assert_eq!(me["scopes"], json!([]));

    let (st, page) = s.call(&s.member, "GET", "/v1/projects", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(page["data"][0]["id"], json!(default_id));
    assert_eq!(page["data"][0]["isDefault"], true);
    assert_eq!(page["hasMore"], false);

    // Writes take a tenant admin.
    let spec = json!({"name": "Support bot", "slug": "support-bot", "description": "answers"});
    let (st, e) = s
        .call(&s.member, "POST", "/v1/projects", Some(spec.clone()))
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("permission-denied")),
        "{e}"
    );
    let (st, created) = s
        .call(&s.admin, "POST", "/v1/projects", Some(spec.clone()))
        .await;
    assert_eq!(st, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();

    // Validation, in the reference's shapes.
    for (body, status, code) in [
        (spec.clone(), StatusCode::CONFLICT, "slug-conflict"),
        (
            json!({"name": "x", "slug": "default"}),
            StatusCode::CONFLICT,
            "slug-conflict",
        ),
        (
            json!({"name": "x", "slug": "Bad Slug"}),
            StatusCode::BAD_REQUEST,
            "bad-input",
        ),
        (json!({"slug": "y"}), StatusCode::BAD_REQUEST, "bad-input"),
        (
            json!({"name": "x", "slug": "z", "colour": 1}),
            StatusCode::BAD_REQUEST,
            "unknown-field",
        ),
        (
            json!({"name": "x", "slug": "z", "isDefault": true}),
            StatusCode::CONFLICT,
            "project-default-already-exists",
        ),
        (
            json!({"name": "x", "slug": "z", "orgId": "o1"}),
            StatusCode::NOT_FOUND,
            "org-not-found",
        ),
    ] {
        let (st, e) = s
            .call(&s.admin, "POST", "/v1/projects", Some(body.clone()))
            .await;
        assert_eq!(
            (st, e["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {e}"
        );
    }

    let (st, p) = s
        .call(&s.member, "GET", &format!("/v1/projects/{id}"), None)
        .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(
        (
            p["name"].as_str(),
            p["slug"].as_str(),
            p["isDefault"].as_bool(),
            p["tenantId"].as_str()
        ),
        (
            Some("Support bot"),
            Some("support-bot"),
            Some(false),
            Some(tenant_id.as_str())
        )
    );
    assert_eq!(p["description"], "answers");
    let (st, e) = s
        .call(&s.other, "GET", &format!("/v1/projects/{id}"), None)
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("project-not-found"))
    );

    let (st, _) = s
        .call(
            &s.admin,
            "PATCH",
            &format!("/v1/projects/{id}"),
            Some(json!({"name": "Helpdesk"})),
        )
        .await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (_, p) = s
        .call(&s.member, "GET", &format!("/v1/projects/{id}"), None)
        .await;
    assert_eq!(
        (p["name"].as_str(), p["slug"].as_str()),
        (Some("Helpdesk"), Some("support-bot"))
    );
    // The Default project can be renamed; its id stays.
    let (st, _) = s
        .call(
            &s.admin,
            "PATCH",
            &format!("/v1/projects/{default_id}"),
            Some(json!({"name": "Main"})),
        )
        .await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (_, d) = s.call(&s.member, "GET", "/v1/projects/default", None).await;
    assert_eq!(
        (d["id"].as_str(), d["name"].as_str()),
        (Some(default_id.as_str()), Some("Main"))
    );
    let (_, page) = s.call(&s.member, "GET", "/v1/projects?limit=1", None).await;
    assert_eq!(
        (page["data"][0]["id"].as_str(), page["hasMore"].as_bool()),
        (Some(default_id.as_str()), Some(true))
    );
    let cursor = page["nextCursor"].as_str().unwrap();
    let (_, page) = s
        .call(
            &s.member,
            "GET",
            &format!("/v1/projects?limit=1&cursor={cursor}"),
            None,
        )
        .await;
    assert_eq!(page["data"][0]["id"], json!(id));

    // A created project is a scope runs are started in.
    let (st, run) = s
        .call(
            &s.admin,
            "POST",
            "/v1/runs",
            Some(json!({"flow": "acme.noop", "input": {}, "projectId": id})),
        )
        .await;
    assert!(st.is_success(), "{st} {run}");
    let (st, e) = s
        .call(&s.admin, "POST", "/v1/runs", Some(json!({"flow": "acme.noop", "input": {}, "projectId": "00000000-0000-4000-8000-000000000000"})))
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("project-not-found"))
    );

    // The tenant: its name until renamed; renames take an admin.
    let (st, t) = s.call(&s.member, "GET", "/v1/tenant", None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(
        (t["id"].as_str(), t["name"].as_str(), t["slug"].as_str()),
        (Some(tenant_id.as_str()), Some("acme"), Some("acme"))
    );
    let (st, _) = s
        .call(
            &s.member,
            "PATCH",
            "/v1/tenant",
            Some(json!({"name": "Acme Inc"})),
        )
        .await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    let (st, _) = s
        .call(
            &s.admin,
            "PATCH",
            "/v1/tenant",
            Some(json!({"name": "Acme Inc", "slug": "acme-inc"})),
        )
        .await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (_, t) = s.call(&s.member, "GET", "/v1/tenant", None).await;
    assert_eq!(
        (t["id"].as_str(), t["name"].as_str(), t["slug"].as_str()),
        (Some(tenant_id.as_str()), Some("Acme Inc"), Some("acme-inc"))
    );
    let (st, e) = s
        .call(
            &s.other,
            "PATCH",
            "/v1/tenant",
            Some(json!({"slug": "acme-inc"})),
        )
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("tenant-slug-taken"))
    );
    let (st, e) = s
        .call(
            &s.admin,
            "PATCH",
            "/v1/tenant",
            Some(json!({"plan": "pro"})),
        )
        .await;
    assert_eq!(
        (st, e["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unknown-field"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_and_tenant_over_http_on_sqlite() {
    projects_over_http(DatabaseKind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_and_tenant_over_http_on_postgres() {
    projects_over_http(DatabaseKind::Postgres).await;
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn cli(bin: &PathBuf, s: &Server, home: &std::path::Path, args: &[&str]) -> Out {
    cli_as(bin, s, &s.admin, home, args).await
}

async fn cli_as(
    bin: &PathBuf,
    s: &Server,
    token: &str,
    home: &std::path::Path,
    args: &[&str],
) -> Out {
    let out = tokio::process::Command::new(bin)
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("KINDGI_API_URL", &s.url)
        .env("KINDGI_API_TOKEN", token)
        .output()
        .await
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn cli_json(bin: &PathBuf, s: &Server, home: &std::path::Path, args: &[&str]) -> Value {
    let out = cli(bin, s, home, args).await;
    assert_eq!(out.code, 0, "{args:?}: {}\n{}", out.stdout, out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out.stdout))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_reads_identity_projects_and_tenant() {
    let Some(bin) = official_cli() else { return };
    let s = server(DatabaseKind::Sqlite).await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let tenant_id = kindgi_api::projects::tenant_uuid("acme");
    let default_id = kindgi_api::projects::default_project_id("acme");

    let me = cli_json(&bin, &s, h, &["auth", "whoami", "--json"]).await;
    assert_eq!(me["identity"]["tenantId"], json!(tenant_id), "{me}");

    let created = cli_json(
        &bin,
        &s,
        h,
        &["projects", "create", "--name=Support bot", "--json"],
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    assert_eq!(created["slug"], "support-bot", "{created}");

    let list = cli_json(&bin, &s, h, &["projects", "list", "--json"]).await;
    let text = list.to_string();
    assert!(text.contains(&id) && text.contains(&default_id), "{list}");

    let got = cli_json(&bin, &s, h, &["projects", "get", &id, "--json"]).await;
    assert_eq!(got["name"], "Support bot", "{got}");
    let d = cli_json(&bin, &s, h, &["projects", "get-default", "--json"]).await;
    assert_eq!(d["id"], json!(default_id), "{d}");

    let renamed = cli_json(
        &bin,
        &s,
        h,
        &["projects", "rename", &id, "--name=Helpdesk", "--json"],
    )
    .await;
    assert_eq!(renamed["name"], "Helpdesk", "{renamed}");

    let t = cli_json(&bin, &s, h, &["tenant", "get", "--json"]).await;
    assert_eq!(
        (t["id"].as_str(), t["name"].as_str()),
        (Some(tenant_id.as_str()), Some("acme")),
        "{t}"
    );
    let t = cli_json(
        &bin,
        &s,
        h,
        &["tenant", "rename", "--name=Acme Inc", "--json"],
    )
    .await;
    assert_eq!(t["name"], "Acme Inc", "{t}");

    let out = cli(
        &bin,
        &s,
        h,
        &["projects", "get", "00000000-0000-4000-8000-000000000000"],
    )
    .await;
    assert_ne!(out.code, 0);
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("No project with id"),
        "{}{}",
        out.stdout,
        out.stderr
    );
}

/// `kindgi tokens create --project` mints a key limited to the project; with it `kindgi runs
/// start` runs there, `--project` naming another is refused (`Error [auth]`), and `kindgi runs
/// list` shows its project's runs only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_cli_keeps_a_project_key_in_its_project() {
    let Some(bin) = official_cli() else { return };
    let s = server(DatabaseKind::Sqlite).await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let default_id = kindgi_api::projects::default_project_id("acme");
    let (st, p) = s
        .call(
            &s.admin,
            "POST",
            "/v1/projects",
            Some(json!({"name": "Support", "slug": "support"})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{p}");
    let p = p["id"].as_str().unwrap().to_owned();
    let (st, _) = s
        .call(
            &s.admin,
            "POST",
            "/v1/runs",
            Some(json!({"flow": "acme.noop", "input": {}})),
        )
        .await;
    assert!(st.is_success());

    let minted = cli(
        &bin,
        &s,
        h,
        &["tokens", "create", &format!("--project={p}")],
    )
    .await;
    assert_eq!(minted.code, 0, "{}{}", minted.stdout, minted.stderr);
    let minted: Value = serde_json::from_str(&minted.stdout).unwrap();
    assert_eq!(minted["meta"]["projectId"], json!(p), "{minted}");
    let key = minted["secret"].as_str().unwrap().to_owned();

    let run = cli_as(
        &bin,
        &s,
        &key,
        h,
        &["runs", "start", "--flow=acme.noop", "--input={}"],
    )
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(run["projectId"], json!(p), "{run}");

    let refused = cli_as(
        &bin,
        &s,
        &key,
        h,
        &[
            "runs",
            "start",
            "--flow=acme.noop",
            "--input={}",
            &format!("--project={default_id}"),
        ],
    )
    .await;
    assert_eq!(refused.code, 1, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("Error [auth]")
            && refused
                .stderr
                .contains(&format!("This API key is limited to project {p}")),
        "{}",
        refused.stderr
    );

    let list = cli_as(&bin, &s, &key, h, &["runs", "list"]).await;
    assert_eq!(list.code, 0, "{}{}", list.stdout, list.stderr);
    let list: Value = serde_json::from_str(&list.stdout).unwrap();
    let projects: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["projectId"].as_str())
        .collect();
    assert_eq!(projects, vec![p.as_str()], "{list}");
}
