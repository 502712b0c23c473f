//! What a run's end does to its waits: its open approvals are withdrawn
//! (`withdrawnBecause: "run-cancelled"` or `"run-ended"`), its pausing calls' links stop
//! answering and its calls waiting for a connection are closed — nothing waits for them
//! any more.

use crate::engine::shared::Shared;
use crate::record::{RunRecord, RunStatus, format_millis, now_millis};
use crate::wait_store::PauseStatus;
use kindgi_core::approval::{ApprovalQuery, ApprovalStatus};

/// Withdraws the open approvals and closes the open pauses and connection waits of `run`,
/// which has ended.
pub(crate) async fn withdraw_open_waits(shared: &Shared, run: &RunRecord) {
    let because = if run.status == RunStatus::Cancelled {
        "run-cancelled"
    } else {
        "run-ended"
    };
    let store = &shared.waits;
    let query = ApprovalQuery {
        tenant_id: run.tenant_id.clone(),
        statuses: vec![
            ApprovalStatus::Pending,
            ApprovalStatus::Assigned,
            ApprovalStatus::InReview,
        ],
        run_id: Some(run.id.clone()),
        limit: 1000,
        ..ApprovalQuery::default()
    };
    let now = format_millis(now_millis());
    match store.list_approvals(&query).await {
        Ok(open) => {
            for a in open {
                let expected = a.status;
                let withdrawn = kindgi_core::approval::Approval {
                    status: ApprovalStatus::Withdrawn,
                    withdrawn_because: Some(because.to_owned()),
                    updated_at: now.clone(),
                    ..a
                };
                if let Err(e) = store.update_approval_if(&withdrawn, expected).await {
                    tracing::warn!(run = %run.id, error = %e, "could not withdraw an approval of an ended run");
                }
            }
        }
        Err(e) => {
            tracing::warn!(run = %run.id, error = %e, "could not list the approvals of an ended run");
        }
    }
    match store.open_pauses_of_run(&run.id).await {
        Ok(open) => {
            for p in open {
                let closed = kindgi_core::pause::PauseRecord {
                    status: PauseStatus::Closed,
                    updated_at: now.clone(),
                    ..p
                };
                if let Err(e) = store.update_pause_if(&closed, PauseStatus::Open).await {
                    tracing::warn!(run = %run.id, error = %e, "could not close a pause of an ended run");
                }
            }
        }
        Err(e) => {
            tracing::warn!(run = %run.id, error = %e, "could not list the pauses of an ended run");
        }
    }
    close_connection_waits(shared, run, &now).await;
}

/// Closes the open connection waits of `run`, which has ended: a connection coming later
/// resumes nothing.
async fn close_connection_waits(shared: &Shared, run: &RunRecord, now: &str) {
    let store = &shared.waits;
    let query = kindgi_core::connection_wait::ConnectionWaitQuery {
        run_id: Some(run.id.clone()),
        ..Default::default()
    };
    match store.open_connection_waits(&query).await {
        Ok(open) => {
            for w in open {
                let closed = kindgi_core::connection_wait::ConnectionWait {
                    status: PauseStatus::Closed,
                    updated_at: now.to_owned(),
                    ..w
                };
                if let Err(e) = store
                    .update_connection_wait_if(&closed, PauseStatus::Open)
                    .await
                {
                    tracing::warn!(run = %run.id, error = %e, "could not close a connection wait of an ended run");
                }
            }
        }
        Err(e) => {
            tracing::warn!(run = %run.id, error = %e, "could not list the connection waits of an ended run");
        }
    }
}
