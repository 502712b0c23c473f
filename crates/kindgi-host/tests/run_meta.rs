//! What a run records about its start (project, segments, trace, `startedBy`, agent) on
//! every store, list queries answered alike by every store, a sub-flow run inheriting its
//! parent's, and agent turns (`flowId: "agent.turn"`) started, failed and recovered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_runtime::{
    AGENT_TURN_FLOW_ID, AgentSpec, RunMeta, RunOptions, RunQuery, RunStatus, RuntimeError, Segment,
};
use serde_json::json;
use support::{ALL, builder, cleanup, read_only, tool};

fn meta() -> RunMeta {
    RunMeta {
        project_id: Some("p1".into()),
        segments: vec![Segment {
            key: "company".into(),
            value: "acme".into(),
        }],
        trace_id: Some("0af7651916cd43dd8448eb211c80319c".into()),
        started_by: Some(kindgi_core::StartedBy::Person),
        ..RunMeta::default()
    }
}

#[tokio::test]
async fn runs_record_their_start_on_every_store() {
    for backend in ALL {
        let (b, db) = builder(backend).await;
        let rt = b.build();
        rt.tools()
            .insert_tool(tool("t.echo", read_only(), |v| async move { Ok(v) }));
        rt.flows()
            .insert_json(&json!({
                "id": "t.child", "version": "1.0.0",
                "nodes": [{"id": "n", "kind": "tool", "ref": "t.echo"}],
                "edges": [{"id": "e1", "from": "$start", "to": "n"}, {"id": "e2", "from": "n", "to": "$end"}]
            }).to_string())
            .unwrap();
        rt.flows()
            .insert_json(&json!({
                "id": "t.parent", "version": "1.0.0",
                "nodes": [{"id": "sub", "kind": "subgraph", "flowRef": {"flowId": "t.child", "version": "1.0.0"},
                           "inputMapping": {"v": {"path": "runInput.start"}}, "outputSchema": {"type": "object"}, "convergence": "success-only"}],
                "edges": [{"id": "e1", "from": "$start", "to": "sub"}, {"id": "e2", "from": "sub", "to": "$end"}]
            }).to_string())
            .unwrap();
        let options = RunOptions {
            wait: true,
            tenant_id: Some("acme".into()),
            meta: meta(),
            ..RunOptions::default()
        };
        let run = rt
            .start_run("t.parent", None, json!({}), options.clone())
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Completed, "{backend:?}: {run:?}");
        let read = rt.get_run(&run.id).await.unwrap();
        assert_eq!(read.meta, meta(), "{backend:?}");
        // The sub-flow's run inherits project, segments, trace and startedBy.
        let children = rt
            .list_runs(&RunQuery {
                parent_run_id: Some(run.id.clone()),
                ..RunQuery::default()
            })
            .await
            .unwrap();
        assert_eq!(children.len(), 1, "{backend:?}");
        assert_eq!(children[0].meta, meta(), "{backend:?}");
        // Every store answers the same queries the same way.
        let q = |f: fn(&mut RunQuery)| {
            let mut q = RunQuery::default();
            f(&mut q);
            q
        };
        let queries = [
            q(|q| q.top_level_only = true),
            q(|q| q.children_only = true),
            q(|q| q.flow_id = Some("t.child".into())),
            q(|q| q.project_id = Some("p2".into())),
            q(|q| q.tenant_id = Some("acme".into())),
            q(|q| q.statuses = vec![RunStatus::Failed]),
            q(|q| q.started_by = vec![kindgi_core::StartedBy::Person]),
            q(|q| {
                q.started_by = vec![
                    kindgi_core::StartedBy::Schedule,
                    kindgi_core::StartedBy::Key,
                ]
            }),
        ];
        let expected = [1, 1, 1, 0, 2, 0, 2, 0];
        for (query, n) in queries.iter().zip(expected) {
            let got = rt.list_runs(query).await.unwrap();
            assert_eq!(got.len(), n, "{backend:?}: {query:?}");
        }
        cleanup(db).await;
    }
}

#[tokio::test]
async fn agent_turns_are_runs_that_recover() {
    for backend in ALL {
        let (b, db) = builder(backend).await;
        let rt = b.build();
        let mut agent = AgentSpec::new("a.greeter");
        agent.version = "2.0.0".into();
        rt.agents().insert(agent);
        let options = RunOptions {
            wait: true,
            dry_run: true,
            meta: meta(),
            ..RunOptions::default()
        };
        let run = rt
            .start_agent_turn(
                "a.greeter",
                None,
                json!({"userMessage": "hi"}),
                options.clone(),
            )
            .await
            .unwrap();
        assert_eq!(run.flow_id, AGENT_TURN_FLOW_ID);
        assert_eq!(run.flow_version, "2.0.0");
        assert_eq!(run.status, RunStatus::Completed, "{backend:?}: {run:?}");
        let agent = rt.get_run(&run.id).await.unwrap().meta.agent.unwrap();
        assert_eq!(
            (agent.id.as_str(), agent.via.as_deref()),
            ("a.greeter", Some("latest"))
        );
        let e = rt
            .start_agent_turn("a.nope", None, json!({}), options.clone())
            .await
            .unwrap_err();
        assert!(matches!(e, RuntimeError::AgentNotFound { .. }), "{e}");
        let e = rt
            .start_agent_turn("a.greeter", Some("1.0.0"), json!({}), options.clone())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "agent-not-found");
        // A turn left pending by a crash resumes from the store alone.
        if let Some(test_db) = &db {
            rt.shutdown(std::time::Duration::from_secs(5)).await;
            let pending = rt
                .start_agent_turn(
                    "a.greeter",
                    Some("2.0.0"),
                    json!({"userMessage": "again"}),
                    RunOptions {
                        wait: false,
                        ..options.clone()
                    },
                )
                .await
                .unwrap();
            // The stopped runtime's task has stored what it had and left the run unfinished.
            let left = rt.wait_for_run(&pending.id).await.unwrap();
            assert!(!left.status.is_terminal(), "{backend:?}: {left:?}");
            let rt2 = kindgi_runtime::Runtime::over(test_db.db.ports()).build();
            let mut agent = AgentSpec::new("a.greeter");
            agent.version = "2.0.0".into();
            rt2.agents().insert(agent);
            let resumed = rt2.recover().await.unwrap();
            assert!(resumed.contains(&pending.id), "{backend:?}: {resumed:?}");
            let done = rt2.wait_for_run(&pending.id).await.unwrap();
            assert_eq!(done.status, RunStatus::Completed, "{backend:?}: {done:?}");
        }
        cleanup(db).await;
    }
}
