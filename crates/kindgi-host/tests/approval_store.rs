//! The approval store answers the same on memory, SQLite and PostgreSQL: tenant-scoped
//! reads, the list's order and `(createdAt, id)` cursor, its filters (statuses, run, wait
//! tokens, role ceiling, created after, decided by), `limit + 1` rows, the compare-and-set
//! of a status change, and `ask_on_first_use`'s conversation memory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kindgi_runtime::record::format_millis;
use kindgi_runtime::{
    Approval, ApprovalDecision, ApprovalQuery, ApprovalStatus, DecisionKind, ReviewerRole,
};
use serde_json::json;
use support::{ALL, Backend, builder, cleanup};

fn approval(i: i64, tenant: &str, role: ReviewerRole, status: ApprovalStatus) -> Approval {
    Approval {
        id: format!("00000000-0000-0000-0000-{i:012}"),
        tenant_id: tenant.into(),
        project_id: None,
        subject_kind: "tool-call:pending".into(),
        subject_ref: json!({"conversationId": "c1", "toolId": "t.pay", "argsHash": format!("h{}", i % 2)}),
        required_role: role,
        status,
        title: Some(format!("HITL review: t.pay #{i}")),
        description: None,
        wait_token_id: Some(format!("token-{i}")),
        run_id: Some(if i < 3 { "run-a" } else { "run-b" }.into()),
        created_at: format_millis(1_700_000_000_000 + (i / 2) * 1000),
        updated_at: format_millis(1_700_000_000_000),
        decided_at: None,
        expires_at: Some(format_millis(1_700_000_100_000 + i)),
        decision: (status == ApprovalStatus::Approved).then(|| ApprovalDecision {
            id: format!("d{i}"),
            approval_id: format!("00000000-0000-0000-0000-{i:012}"),
            decision: DecisionKind::Approve,
            decided_by: Some("user:rita".into()),
            reviewer_id: "rita".into(),
            reviewer_role_at_decision: role,
            decided_at: format_millis(1_700_000_050_000),
            rationale: None,
        }),
        requested_by: Some("system:runtime".into()),
        separate_approver: false,
        withdrawn_because: None,
        escalated_from: None,
        escalated_to: None,
    }
}

fn ids(page: &[Approval]) -> Vec<i64> {
    page.iter()
        .map(|a| a.id.rsplit('-').next().unwrap().parse().unwrap())
        .collect()
}

async fn behaves(backend: Backend) {
    let (b, db) = builder(backend).await;
    let rt = b.build();
    let store = rt.wait_store();
    use ApprovalStatus::*;
    use ReviewerRole::*;
    let rows = [
        approval(0, "acme", Standard, Pending),
        approval(1, "acme", Senior, Pending),
        approval(2, "acme", Standard, Approved),
        approval(3, "acme", Admin, Pending),
        approval(4, "acme", Standard, Pending),
        approval(5, "other", Standard, Pending),
    ];
    for a in &rows {
        store.insert_approval(a).await.unwrap();
    }
    let q = |f: &dyn Fn(&mut ApprovalQuery)| {
        let mut q = ApprovalQuery {
            tenant_id: "acme".into(),
            limit: 10,
            ..Default::default()
        };
        f(&mut q);
        q
    };
    let rt = &rt;
    let list = |q: ApprovalQuery| async move { ids(&rt.list_approvals(&q).await.unwrap()) };

    // Newest first by (createdAt, id); three pairs share a createdAt.
    assert_eq!(list(q(&|_| {})).await, [4, 3, 2, 1, 0]);
    assert_eq!(list(q(&|q| q.ascending = true)).await, [0, 1, 2, 3, 4]);
    // limit + 1 rows, then the cursor continues after the last row shown.
    let first = rt.list_approvals(&q(&|q| q.limit = 2)).await.unwrap();
    assert_eq!(ids(&first), [4, 3, 2]);
    let cursor = (first[1].created_at.clone(), first[1].id.clone());
    assert_eq!(
        list(q(&|q| {
            q.limit = 2;
            q.after = Some(cursor.clone());
        }))
        .await,
        [2, 1, 0]
    );
    assert_eq!(list(q(&|q| q.statuses = vec![Approved])).await, [2]);
    assert_eq!(
        list(q(&|q| q.run_id = Some("run-a".into()))).await,
        [2, 1, 0]
    );
    assert_eq!(
        list(q(
            &|q| q.wait_token_ids = vec!["token-1".into(), "token-3".into()]
        ))
        .await,
        [3, 1]
    );
    assert_eq!(list(q(&|q| q.max_role = Some(Senior))).await, [4, 2, 1, 0]);
    assert_eq!(list(q(&|q| q.required_role = Some(Admin))).await, [3]);
    assert_eq!(
        list(q(
            &|q| q.created_after = Some(format_millis(1_700_000_000_000))
        ))
        .await,
        [4, 3, 2]
    );
    assert_eq!(
        list(q(&|q| q.decided_by = Some("user:rita".into()))).await,
        [2]
    );

    // Tenant-scoped.
    assert!(
        store
            .get_approval("acme", &rows[5].id)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store.get_approval("other", &rows[5].id).await.unwrap(),
        Some(rows[5].clone())
    );

    // Compare-and-set: the second of two moves from `pending` loses.
    let approved = Approval {
        status: Approved,
        ..rows[0].clone()
    };
    assert!(store.update_approval_if(&approved, Pending).await.unwrap());
    let rejected = Approval {
        status: Rejected,
        ..rows[0].clone()
    };
    assert!(!store.update_approval_if(&rejected, Pending).await.unwrap());
    assert_eq!(
        store
            .get_approval("acme", &rows[0].id)
            .await
            .unwrap()
            .unwrap()
            .status,
        Approved
    );

    // Conversation memory: approved rows only, exact tool and arguments hash.
    assert!(
        store
            .approved_in_conversation("acme", "c1", "t.pay", "h0")
            .await
            .unwrap()
    );
    assert!(
        !store
            .approved_in_conversation("acme", "c1", "t.pay", "h1")
            .await
            .unwrap()
    );
    assert!(
        !store
            .approved_in_conversation("acme", "c2", "t.pay", "h0")
            .await
            .unwrap()
    );
    assert!(
        !store
            .approved_in_conversation("other", "c1", "t.pay", "h0")
            .await
            .unwrap()
    );

    // Deadlines: open rows only.
    let due = store.approvals_due(1_700_000_100_003).await.unwrap();
    let mut due_ids = ids(&due);
    due_ids.sort();
    assert_eq!(due_ids, [1, 3], "row 0 is approved now, row 2 was approved");
    assert_eq!(
        store.next_deadline().await.unwrap(),
        Some(1_700_000_100_001)
    );
    cleanup(db).await;
}

#[tokio::test]
async fn the_approval_store_behaves_the_same_on_every_backend() {
    for backend in ALL {
        behaves(backend).await;
    }
}
