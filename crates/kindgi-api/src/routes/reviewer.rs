//! The reviewer gate of `/v1/approvals` (platform-api.md §4): who may read and decide
//! approvals, at which tier, and as whom.
//!
//! This runtime has no reviewer roster and its keys carry no reviewer-role claim, so the
//! rule is the key's: a key whose holder is a tenant admin (the `kindgi dev` key, a
//! `kindgi server`'s admin key, a service account granted `tenant-admin`) is an `admin`
//! reviewer; every other key gets the reference's `403 permission-denied`. Deciding also
//! needs a person: the key's `user:<id>` principal is who decided (`decidedBy`), and its
//! reviewer id is a UUID derived from the tenant and user (stable, so `decidedBy=me` and
//! `reviewerId` name the same person across restarts). See docs/approvals.md.

use kindgi_runtime::approval::ReviewerRole;
use kindgi_store::tokens::{Principal, PrincipalKind};

use super::key_holder::{KeyHolder, denied};
use crate::error::ApiError;
use crate::projects::tenant_uuid;

/// The message of the `403` for a caller that is not a reviewer (the reference's words).
pub const NOT_A_REVIEWER: &str = "The caller isn't a reviewer: its token carries no reviewer role, and its user isn't registered as one (`kindgi reviewers register`). The approvals surface is reviewer-only.";

/// The message of the `403` for a decision by a key without a person.
pub const NO_USER_IDENTITY: &str =
    "Token has a reviewer role but no user identity — cannot resolve reviewer for decision.";

/// The namespace of derived reviewer ids (a fixed random UUID).
const REVIEWER_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x9c4e_21f7_0b5d_4a38_8e6a_5f13_c7d2_04b9);

/// A caller the gate let through.
#[derive(Debug, Clone)]
pub struct Reviewer {
    pub tenant: String,
    pub role: ReviewerRole,
    /// The person behind the key, when it has one.
    pub user_id: Option<String>,
}

impl Reviewer {
    /// `decidedBy`: `user:<id>`.
    pub fn decided_by(&self) -> Option<String> {
        self.user_id.as_ref().map(|u| format!("user:{u}"))
    }

    /// The reviewer id of this person (a UUID, as `OA:ReviewDecision.reviewerId` is).
    pub fn reviewer_id(&self) -> Option<String> {
        self.user_id.as_ref().map(|u| {
            uuid::Uuid::new_v5(
                &REVIEWER_NAMESPACE,
                format!("kindgi-reviewer:{}:{u}", self.tenant).as_bytes(),
            )
            .to_string()
        })
    }

    /// `tenant:<tenantId>`, the resource a refusal names.
    pub fn resource(&self) -> String {
        format!("tenant:{}", tenant_uuid(&self.tenant))
    }
}

/// The gate: `read` for GETs, `admin` for decisions (the refusal's `details.action`).
pub fn gate(caller: &KeyHolder, action: &str) -> Result<Reviewer, ApiError> {
    if !caller.is_admin() {
        return Err(denied(
            NOT_A_REVIEWER,
            action,
            &format!("tenant:{}", tenant_uuid(&caller.tenant)),
            NOT_A_REVIEWER,
        ));
    }
    // A person decides only with a key that person or the operator made (no `createdBy`),
    // so `decidedBy` never names a person someone else invented.
    let vouched = |p: &&Principal| {
        caller
            .key
            .record
            .created_by
            .as_ref()
            .is_none_or(|by| *by == p.actor())
    };
    let user_id = caller
        .principal()
        .filter(|p| p.kind == PrincipalKind::User)
        .filter(vouched)
        .map(|p| p.id.clone());
    Ok(Reviewer {
        tenant: caller.tenant.clone(),
        role: ReviewerRole::Admin,
        user_id,
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
