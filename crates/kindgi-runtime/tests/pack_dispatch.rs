//! Pack tools through a `PackCaller`: a real pack-like service process on loopback HTTP that
//! answers, reports a tool failure, and dies mid-run. The run names what failed and where,
//! and nothing hangs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use async_trait::async_trait;
use kindgi_runtime::{PackCallError, PackCaller, RunOptions, RunStatus, Runtime, ToolTransport};
use kindgi_spec::ToolManifest;
use kindgi_tools::ToolContext;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::manifest;
use tokio::io::AsyncBufReadExt;

const SERVICE: &str = r#"
import http.server, json, os
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
        if body['toolId'] == 'p.crash':
            os._exit(3)
        if body['toolId'] == 'p.fail':
            out = {'error': {'code': 'handler-error', 'message': 'Tool "p.fail" handler threw: disk full'}}
        else:
            out = {'output': {'echo': body['input']}}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

/// A minimal HTTP pack caller (the real pack client implements the same trait).
#[derive(Debug)]
struct HttpPack {
    url: String,
    http: reqwest::Client,
}

#[async_trait]
impl PackCaller for HttpPack {
    async fn call_tool(
        &self,
        m: &ToolManifest,
        input: Value,
        _ctx: &ToolContext,
    ) -> Result<Value, PackCallError> {
        let resp = self
            .http
            .post(&self.url)
            .json(&json!({"toolId": m.id, "version": m.version, "input": input}))
            .send()
            .await
            .map_err(|e| PackCallError::Transport {
                message: format!("POST {}: {e}", self.url),
            })?;
        let body: Value = resp.json().await.map_err(|e| PackCallError::Transport {
            message: e.to_string(),
        })?;
        match body.get("error") {
            Some(e) => Err(PackCallError::Tool {
                code: e["code"].as_str().unwrap_or("").into(),
                message: e["message"].as_str().unwrap_or("").into(),
                issues: vec![],
            }),
            None => Ok(body["output"].clone()),
        }
    }
}

fn chain(id: &str, refs: &[&str]) -> String {
    let mut nodes = vec![];
    let mut edges = vec![json!({"id": "e0", "from": "$start", "to": "n1"})];
    for (i, r) in refs.iter().enumerate() {
        nodes.push(json!({"id": format!("n{}", i + 1), "kind": "tool", "ref": r}));
        let to = if i + 1 == refs.len() {
            "$end".to_string()
        } else {
            format!("n{}", i + 2)
        };
        edges.push(json!({"id": format!("e{}", i + 1), "from": format!("n{}", i + 1), "to": to}));
    }
    json!({"id": id, "version": "1.0.0", "nodes": nodes, "edges": edges}).to_string()
}

#[tokio::test]
async fn pack_tools_answer_fail_and_die_with_clear_messages() {
    let mut child = tokio::process::Command::new("python3")
        .arg("-c")
        .arg(SERVICE)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the pack-like service");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    let caller: Arc<dyn PackCaller> = Arc::new(HttpPack {
        url: format!("http://127.0.0.1:{port}/invoke"),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    });
    let rt = Runtime::in_memory().build();
    for id in ["p.ok", "p.fail", "p.crash"] {
        rt.tools().insert_pack_tool(
            manifest(id, json!({"mutating": false})),
            "python-pack",
            caller.clone(),
        );
    }
    assert_eq!(
        rt.tools().get("p.ok").unwrap().transport(),
        ToolTransport::Pack
    );
    rt.flows()
        .insert_json(&chain("p.good", &["p.ok", "p.ok"]))
        .unwrap();
    rt.flows()
        .insert_json(&chain("p.failing", &["p.ok", "p.fail"]))
        .unwrap();
    rt.flows()
        .insert_json(&chain("p.dying", &["p.ok", "p.crash", "p.ok"]))
        .unwrap();
    let wait = RunOptions {
        wait: true,
        ..Default::default()
    };

    let run = rt
        .start_run("p.good", None, json!({"x": 1}), wait.clone())
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output, Some(json!({"echo": {"echo": {"x": 1}}})));

    let run = rt
        .start_run("p.failing", None, json!({}), wait.clone())
        .await
        .unwrap();
    assert_eq!(
        run.failure_message.as_deref(),
        Some("handler-error: Tool \"p.fail\" handler threw: disk full")
    );

    let run = tokio::time::timeout(
        Duration::from_secs(20),
        rt.start_run("p.dying", None, json!({}), wait.clone()),
    )
    .await
    .expect("nothing hangs")
    .unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    let m = run.failure_message.unwrap();
    assert!(m.starts_with("pack-unreachable: tool \"p.crash\" in pack \"python-pack\" could not be called: POST http://127.0.0.1:"), "{m}");
    assert!(m.ends_with("(node \"n2\")"), "{m}");
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(3), "the service really died");

    // With the service gone, the next run fails at its first step, again by name.
    let run = rt.start_run("p.good", None, json!({}), wait).await.unwrap();
    assert!(
        run.failure_message
            .unwrap()
            .starts_with("pack-unreachable: tool \"p.ok\" in pack \"python-pack\"")
    );
}
