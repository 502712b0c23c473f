//! Two servers on one database (finding 9 of issue 19): 20 parallel answers to one wait
//! token — or 20 parallel decisions of one approval — alternating between the servers, with
//! different values, for 15 rounds. Exactly one is `200` each round, every other one `409`,
//! the journal holds exactly one answer (`wait.resumed`, `approval.completed`), and the run
//! goes on with the winner's value. On PostgreSQL the servers are two runtimes with their
//! own pools and in-process locks (a second `kindgi server` process); on SQLite the same
//! atomic path is taken through one file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_runtime::{JournalKind, Runtime};
use kindgi_store::DatabaseKind;
use serde_json::{Value, json};
use support::gated::server;

const ROUNDS: usize = 15;
const ANSWERS: usize = 20;

/// POSTs each `(url, body)` at once; answers `(index, status, body)` in index order.
async fn all_at_once(key: &str, posts: Vec<(String, Value)>) -> Vec<(usize, u16, Value)> {
    let http = reqwest::Client::new();
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(posts.len()));
    let mut set = tokio::task::JoinSet::new();
    for (i, (url, body)) in posts.into_iter().enumerate() {
        let (http, key, start) = (http.clone(), key.to_owned(), start.clone());
        set.spawn(async move {
            start.wait().await;
            let r = http
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            (
                i,
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        });
    }
    let mut out = set.join_all().await;
    out.sort_by_key(|(i, _, _)| *i);
    out
}

/// The one `200` of a round (its index and body); every other answer is a `409`.
fn the_one_winner(round: usize, got: &[(usize, u16, Value)], codes: &[&str]) -> (usize, Value) {
    let wins: Vec<_> = got.iter().filter(|(_, s, _)| *s == 200).collect();
    assert_eq!(
        wins.len(),
        1,
        "round {round}: exactly one answer wins, got {:?}",
        got.iter().map(|(_, s, b)| (s, b)).collect::<Vec<_>>()
    );
    for (i, status, body) in got.iter().filter(|(_, s, _)| *s != 200) {
        let code = body["error"]["code"].as_str().unwrap_or_default();
        assert!(
            *status == 409 && codes.contains(&code),
            "round {round}, answer {i}: a loser is 409 {codes:?}, got {status} {body}"
        );
    }
    (wins[0].0, wins[0].2.clone())
}

async fn entries_of(rt: &Runtime, run: &str, kind: JournalKind) -> Vec<Value> {
    rt.store()
        .journal(run, None, None)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.payload.unwrap_or(Value::Null))
        .collect()
}

async fn a_wait_token_is_answered_once_across_servers(kind: DatabaseKind) {
    let s = server(kind).await;
    let twin = s.twin().await;
    let urls = [s.url.clone(), twin.url.clone()];
    for round in 0..ROUNDS {
        let (run, ticket) = s.paused_run().await;
        let posts = (0..ANSWERS)
            .map(|i| {
                let url = format!("{}/v1/waits/{}", urls[i % 2], ticket.token);
                (url, json!({"value": {"answer": format!("r{round}-a{i}")}}))
            })
            .collect();
        let got = all_at_once(&s.admin, posts).await;
        let (winner, body) = the_one_winner(
            round,
            &got,
            &["wait-already-answered", "run-already-terminal"],
        );
        assert_eq!(body["runId"], json!(run), "{body}");
        let value = json!({"answer": format!("r{round}-a{winner}")});
        let resumed = entries_of(&s.rt, &run, JournalKind::WaitResumed).await;
        assert_eq!(
            resumed.len(),
            1,
            "round {round}: one wait.resumed: {resumed:?}"
        );
        assert_eq!(resumed[0]["value"], value, "round {round}");
        let (_, after) = s.get(&format!("/v1/runs/{run}")).await;
        assert_eq!(after["status"], "completed", "round {round}: {after}");
        assert_eq!(after["output"], value, "round {round}: the winner's value");
    }
}

async fn an_approval_is_decided_once_across_servers(kind: DatabaseKind) {
    let s = server(kind).await;
    let twin = s.twin().await;
    let urls = [s.url.clone(), twin.url.clone()];
    for round in 0..ROUNDS {
        let writes_before = s.writes();
        let (run, approval) = s.gated_turn().await;
        let decision = |i: usize| if i % 4 < 2 { "approve" } else { "reject" };
        let posts = (0..ANSWERS)
            .map(|i| {
                let url = format!("{}/v1/approvals/{approval}/complete", urls[i % 2]);
                let rationale = format!("r{round}-a{i}");
                (
                    url,
                    json!({"decision": decision(i), "rationale": rationale}),
                )
            })
            .collect();
        let got = all_at_once(&s.admin, posts).await;
        let (winner, body) = the_one_winner(
            round,
            &got,
            &["approval-already-decided", "run-already-terminal"],
        );
        assert_eq!(body["decision"]["decision"], decision(winner), "{body}");
        let completed = entries_of(&s.rt, &run, JournalKind::ApprovalCompleted).await;
        assert_eq!(completed.len(), 1, "round {round}: {completed:?}");
        let resumed = entries_of(&s.rt, &run, JournalKind::WaitResumed).await;
        assert_eq!(resumed.len(), 1, "round {round}: {resumed:?}");
        assert_eq!(
            resumed[0]["value"]["rationale"],
            json!(format!("r{round}-a{winner}")),
            "round {round}: the winner's decision"
        );
        let (_, after) = s.get(&format!("/v1/runs/{run}")).await;
        assert_eq!(after["status"], "completed", "round {round}: {after}");
        let ran = usize::from(decision(winner) == "approve");
        assert_eq!(
            s.writes() - writes_before,
            ran,
            "round {round}: the call ran as the winner decided"
        );
    }
}

macro_rules! both_stores_threaded {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() { super::$name(kindgi_store::DatabaseKind::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() { super::$name(kindgi_store::DatabaseKind::Postgres).await })*
        }
    };
}

both_stores_threaded!(
    a_wait_token_is_answered_once_across_servers,
    an_approval_is_decided_once_across_servers
);
