//! The reviewer gate of `/v1/approvals` (platform-api.md §4): who may read and decide
//! approvals, at which tier, and as whom.
//!
//! The role is the roster's: the row of the key's person (`user:<id>`) on the tenant's reviewer
//! roster (`/v1/approvals/reviewers`, [`ReviewerRoster`]); this runtime's keys carry no
//! reviewer-role claim (the official token bodies have none either). A tenant admin without a
//! row (or with a lower one) still reads at every tier, as the reference's authorization does;
//! deciding needs a row, and the row's role is the one checked. Anyone else gets the
//! reference's `403 permission-denied`. The person is who decided (`decidedBy`), the row's id
//! the `reviewerId`. See docs/approvals.md.

use std::sync::Arc;

use axum::extract::FromRef;
use axum::http::StatusCode;
use kindgi_core::ports::{ReviewerRecord, ReviewerRoster};
use kindgi_runtime::approval::ReviewerRole;
use kindgi_store::tokens::{Principal, PrincipalKind};
use serde_json::json;

use super::key_holder::{KeyHolder, denied};
use crate::error::ApiError;
use crate::projects::tenant_uuid;
use crate::state::AppState;

/// The message of the `403` for a caller that is not a reviewer (the reference's words).
pub const NOT_A_REVIEWER: &str = "The caller isn't a reviewer: its token carries no reviewer role, and its user isn't registered as one (`kindgi reviewers register`). The approvals surface is reviewer-only.";

/// The message of the `403` for a decision by a key without a person.
pub const NO_USER_IDENTITY: &str =
    "Token has a reviewer role but no user identity — cannot resolve reviewer for decision.";

/// The message of the `403` for a decision by a person with no roster row (the reference's).
pub const NO_ROSTER_ROW: &str = "No reviewer row registered for this user under this tenant.";

/// The tenant's reviewer roster as handlers take it (`State<Roster>`), over the server's
/// database.
#[derive(Debug, Clone)]
pub struct Roster(pub Arc<dyn ReviewerRoster>);

impl FromRef<AppState> for Roster {
    fn from_ref(state: &AppState) -> Roster {
        Roster(Arc::new(kindgi_store::reviewers::ReviewerStore::new(
            state.db.clone(),
        )))
    }
}

/// A caller the gate let through.
#[derive(Debug, Clone)]
pub struct Reviewer {
    pub tenant: String,
    /// The tier it reads at: its row's role, `admin` for a tenant admin.
    pub role: ReviewerRole,
    /// The person behind the key, when it has one.
    pub user_id: Option<String>,
    /// Its roster row (active or unregistered), when it has one.
    pub row: Option<ReviewerRecord>,
    /// The project the caller's key is limited to, if it is ([`crate::key_project`]): it
    /// sees and decides only the approvals of that project's runs.
    pub project: Option<String>,
}

impl Reviewer {
    /// `decidedBy`: `user:<id>`.
    pub fn decided_by(&self) -> Option<String> {
        self.user_id.as_ref().map(|u| format!("user:{u}"))
    }

    /// Whether the caller's key reaches an approval of `project` (the tenant's Default
    /// project when `None`): always, for a key limited to none.
    pub fn reaches(&self, project: Option<&str>) -> bool {
        let Some(limit) = &self.project else {
            return true;
        };
        match project {
            Some(p) => p.eq_ignore_ascii_case(limit),
            None => crate::projects::default_project_id(&self.tenant).eq_ignore_ascii_case(limit),
        }
    }

    /// `tenant:<tenantId>`, the resource a refusal names.
    pub fn resource(&self) -> String {
        format!("tenant:{}", tenant_uuid(&self.tenant))
    }
}

/// The person behind the key: its `user:<id>` principal, when that person or the operator
/// (no `createdBy`) made the key, so `decidedBy` never names a person someone else invented.
pub fn key_person(caller: &KeyHolder) -> Option<String> {
    let vouched = |p: &&Principal| {
        caller
            .key
            .record
            .created_by
            .as_ref()
            .is_none_or(|by| *by == p.actor())
    };
    caller
        .principal()
        .filter(|p| p.kind == PrincipalKind::User)
        .filter(vouched)
        .map(|p| p.id.clone())
}

/// The gate: `read` for GETs, `admin` for decisions (the refusal's `details.action`).
pub async fn gate(caller: &KeyHolder, roster: &Roster, action: &str) -> Result<Reviewer, ApiError> {
    let user_id = key_person(caller);
    let row = match &user_id {
        Some(u) => roster
            .0
            .reviewer_for_user(&caller.tenant, u)
            .await
            .map_err(|e| ApiError::internal(&e))?,
        None => None,
    };
    let role = match (&row, caller.is_admin()) {
        (_, true) => ReviewerRole::Admin,
        (Some(r), false) => r.role,
        (None, false) => {
            return Err(denied(
                NOT_A_REVIEWER,
                action,
                &format!("tenant:{}", tenant_uuid(&caller.tenant)),
                NOT_A_REVIEWER,
            ));
        }
    };
    Ok(Reviewer {
        tenant: caller.tenant.clone(),
        role,
        user_id,
        row,
        project: caller.key.record.project_id.clone(),
    })
}

/// `403 permission-denied` (action `read`) for a `requiredRole` above the caller's.
pub fn above_role(reviewer: &Reviewer, asked: ReviewerRole) -> ApiError {
    let message = format!(
        "Role {} cannot query approvals scoped to {}.",
        reviewer.role.as_str(),
        asked.as_str()
    );
    denied(message.clone(), "read", &reviewer.resource(), &message)
}

/// `403 permission-denied` (action `admin`) for a decision by a key without a person.
pub fn no_user(reviewer: &Reviewer) -> ApiError {
    denied(
        NO_USER_IDENTITY,
        "admin",
        &reviewer.resource(),
        NO_USER_IDENTITY,
    )
}

/// The row that decides, else the reference's refusals: `403` without a row, `409
/// reviewer-deactivated` for an unregistered one.
pub fn deciding_row(reviewer: &Reviewer) -> Result<&ReviewerRecord, ApiError> {
    let Some(row) = &reviewer.row else {
        return Err(denied(
            NO_ROSTER_ROW,
            "admin",
            &reviewer.resource(),
            NO_ROSTER_ROW,
        ));
    };
    if row.deactivated_at.is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "reviewer-deactivated",
            format!(
                "Reviewer {} was unregistered and can no longer decide approvals; register the user again (`kindgi reviewers register`) to restore them",
                row.id
            ),
        )
        .with_details(json!({"reviewerId": row.id})));
    }
    Ok(row)
}
