//! An agent step killed mid-turn resumes from its recorded model answers and tool results:
//! no model call is made twice and no finished tool call runs again (SQLite).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use kindgi_runtime::model::openai::OpenAiCompatProvider;
use kindgi_runtime::{AgentSpec, RunOptions, RunStatus, Runtime};
use kindgi_store::testing::TestDatabase;
use kindgi_store::{Database, DatabaseKind};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::tool;

fn answer(n: usize) -> Value {
    let message = match n {
        1 | 2 => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("c{n}"), "type": "function",
            "function": {"name": "t__write", "arguments": json!({"k": n}).to_string()}}]}),
        _ => json!({"role": "assistant", "content": "finished"}),
    };
    let finish = if n <= 2 { "tool_calls" } else { "stop" };
    json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
}

async fn chat(State(count): State<Arc<AtomicUsize>>, Json(_): Json<Value>) -> Json<Value> {
    Json(answer(count.fetch_add(1, Ordering::SeqCst) + 1))
}

/// The model server lives on its own thread so it outlives the killed runtime.
fn model_server() -> (String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let c = count.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let app = Router::new()
                .route("/v1/chat/completions", post(chat))
                .with_state(c);
            axum::serve(listener, app).await.unwrap();
        });
    });
    (format!("http://{}/v1", rx.recv().unwrap()), count)
}

fn agent_runtime(
    db: Database,
    base: &str,
    calls: Arc<Mutex<HashMap<i64, usize>>>,
    block: Arc<AtomicBool>,
) -> Runtime {
    let model = OpenAiCompatProvider::new(base, None, "m").unwrap();
    let rt = Runtime::over(db.ports()).model(Arc::new(model)).build();
    rt.tools()
        .insert_tool(tool("t.write", json!({}), move |v: Value| {
            let (calls, block) = (calls.clone(), block.clone());
            async move {
                let k = v["k"].as_i64().unwrap_or(-1);
                *calls.lock().unwrap().entry(k).or_default() += 1;
                if k == 2 && block.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_secs(600)).await;
                }
                Ok(json!({"wrote": k}))
            }
        }));
    rt.agents()
        .insert(AgentSpec::new("t.agent").with_tools(["t.write"]));
    rt.flows()
        .insert_json(&json!({"id": "t.turn", "version": "1.0.0", "nodes": [{"id": "ask", "kind": "agent", "ref": "t.agent"}],
            "edges": [{"id": "e1", "from": "$start", "to": "ask"}, {"id": "e2", "from": "ask", "to": "$end"}]}).to_string())
        .unwrap();
    rt
}

#[test]
fn a_killed_agent_turn_resumes_without_repeating_finished_calls() {
    let (base, model_calls) = model_server();
    let calls = Arc::new(Mutex::new(HashMap::new()));
    let block = Arc::new(AtomicBool::new(true));
    let first = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (tdb, run_id) = first.block_on(async {
        let tdb = TestDatabase::new(DatabaseKind::Sqlite).await.unwrap();
        let rt = agent_runtime(tdb.db.clone(), &base, calls.clone(), block.clone());
        let run = rt
            .start_run("t.turn", None, json!("write twice"), RunOptions::default())
            .await
            .unwrap();
        for _ in 0..500 {
            if calls.lock().unwrap().contains_key(&2) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(model_calls.load(Ordering::SeqCst), 2);
        (tdb, run.id)
    });
    first.shutdown_background();

    let second = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    second.block_on(async {
        block.store(false, Ordering::SeqCst);
        let db = tdb.reopen().await.unwrap();
        let rt = agent_runtime(db.clone(), &base, calls.clone(), block.clone());
        assert_eq!(rt.recover().await.unwrap(), vec![run_id.clone()]);
        let run = tokio::time::timeout(Duration::from_secs(30), rt.wait_for_run(&run_id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            run.status,
            RunStatus::Completed,
            "{:?}",
            run.failure_message
        );
        assert_eq!(run.output.as_ref().unwrap()["text"], "finished");
        assert_eq!(
            model_calls.load(Ordering::SeqCst),
            3,
            "model answers 1 and 2 came from the journal"
        );
        let calls = calls.lock().unwrap().clone();
        assert_eq!(
            calls.get(&1),
            Some(&1),
            "the finished tool call did not run again"
        );
        assert_eq!(
            calls.get(&2),
            Some(&2),
            "the call in flight at the crash ran again"
        );
        db.close().await;
    });
    drop(tdb);
}
