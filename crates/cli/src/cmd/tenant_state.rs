//! `kindgi tenant suspend|resume|close --database D --tenant T [--project P] [--reason R]`:
//! the operator's path to a tenant's or a project's state (docs/tenancy.md). The contract sets
//! them through `/v1/system/tenants/…` with a system key (`system:suspend`,
//! `system:tenants`); this runtime has no system principals, and a tenant's own keys must not
//! lift their own suspension, so the operator sets them in the database, as `kindgi tokens
//! create --database` makes the first key. A running server sees the change at its next
//! request or fire: the state is read from the database, never cached.
//!
//! * `suspend [--project P] [--reason R]`: a second suspend keeps the first one's time and
//!   reason; a closing tenant is refused (`tenant-closing`, exit 1).
//! * `resume [--project P]`: clears the suspension (time and reason); closing stays.
//! * `close`: one-way; a second close keeps the first.
//!
//! Prints the tenant (`{tenant, state, suspendedAt?, suspendedReason?, closingAt?}`) or the
//! project (`OA:ProjectSuspension`) as JSON.

use std::process::ExitCode;

use kindgi_api::projects::default_project_id;
use kindgi_store::Database;
use kindgi_store::projects::{ProjectDirectory, ProjectStore};
use kindgi_store::tenant_states::{
    Suspension, TenantStanding, TenantState, TenantStateStore, TenantStates,
};
use serde_json::{Value, json};

use super::server::DEFAULT_DATABASE;

/// What an operator command changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Suspend,
    Resume,
    Close,
}

#[derive(Debug, Clone, clap::Args)]
pub struct StateArgs {
    /// The database the server runs on (a SQLite path or postgres:// URL). Default kindgi.db.
    #[arg(long, env = "KINDGI_DATABASE_URL")]
    pub database: Option<String>,
    /// The tenant (as its keys carry it: A-Z a-z 0-9 . _ -, at most 128).
    #[arg(long)]
    pub tenant: String,
    /// One of its projects (a UUID, or `default`) instead of the whole tenant.
    #[arg(long)]
    pub project: Option<String>,
    /// Why, for the operator's record (1 to 500 characters; `suspend` only).
    #[arg(long)]
    pub reason: Option<String>,
}

/// Runs `change` and prints the state after.
pub async fn run(change: Change, a: StateArgs) -> ExitCode {
    match apply(change, a).await {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(Refused::Usage(m)) => {
            eprintln!("Error: {m}\nUsage: kindgi tenant --help");
            ExitCode::from(2)
        }
        Err(Refused::Conflict(code, m)) => {
            eprintln!("Error [{code}]: {m}");
            ExitCode::from(1)
        }
        Err(Refused::Failed(e)) => {
            eprintln!("kindgi: {e:#}");
            ExitCode::from(1)
        }
    }
}

enum Refused {
    Usage(String),
    Conflict(&'static str, String),
    Failed(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Refused {
    fn from(e: E) -> Refused {
        Refused::Failed(e.into())
    }
}

async fn apply(change: Change, a: StateArgs) -> Result<Value, Refused> {
    kindgi_host::config::check_tenant(&a.tenant).map_err(Refused::Usage)?;
    let reason = match a.reason {
        Some(_) if change != Change::Suspend => {
            return Err(Refused::Usage("--reason goes with suspend only".into()));
        }
        Some(r) if r.trim().is_empty() || r.chars().count() > 500 => {
            return Err(Refused::Usage(
                "--reason must be 1 to 500 characters, not only spaces".into(),
            ));
        }
        r => r,
    };
    let project = match a.project.as_deref() {
        None => None,
        Some(_) if change == Change::Close => {
            return Err(Refused::Usage(
                "close takes the whole tenant: leave out --project".into(),
            ));
        }
        Some("default") => Some(default_project_id(&a.tenant)),
        Some(p) if is_uuid(p) => Some(p.to_ascii_lowercase()),
        Some(p) => {
            return Err(Refused::Usage(format!(
                "--project={p}: a project id (a UUID) or `default`"
            )));
        }
    };
    let database = a.database.unwrap_or_else(|| DEFAULT_DATABASE.to_owned());
    let db = Database::connect(&database).await?;
    db.migrate().await?;
    let result = change_state(&db, change, &a.tenant, project.as_deref(), reason).await;
    db.close().await;
    result
}

async fn change_state(
    db: &Database,
    change: Change,
    tenant: &str,
    project: Option<&str>,
    reason: Option<String>,
) -> Result<Value, Refused> {
    let states = TenantStateStore::new(db.clone());
    let standing = states.tenant_standing(tenant).await?;
    if change == Change::Suspend && standing.state() == TenantState::Closing {
        return Err(Refused::Conflict(
            "tenant-closing",
            format!("Tenant {tenant} is closing: it can't be suspended (closing wins)"),
        ));
    }
    let suspension = Suspension {
        at: kindgi_store::now_millis(),
        reason,
    };
    let wanted = (change == Change::Suspend).then_some(&suspension);
    if let Some(project) = project {
        if project != default_project_id(tenant)
            && ProjectStore::new(db.clone())
                .project(tenant, project)
                .await
                .map(|p| p.is_none())?
        {
            return Err(Refused::Conflict(
                "project-not-found",
                format!("Tenant {tenant} has no project {project}"),
            ));
        }
        let after = states
            .set_project_suspended(tenant, project, wanted)
            .await?;
        let mut v = json!({"projectId": project, "suspended": after.is_some()});
        if let Some(s) = after {
            v["suspendedAt"] = json!(iso(s.at));
            if let Some(r) = s.reason {
                v["suspendedReason"] = json!(r);
            }
        }
        return Ok(v);
    }
    let after = match change {
        Change::Close => states.close_tenant(tenant, suspension.at).await?,
        _ => states.set_tenant_suspended(tenant, wanted).await?,
    };
    Ok(tenant_json(tenant, &after))
}

fn tenant_json(tenant: &str, s: &TenantStanding) -> Value {
    let mut v = json!({"tenant": tenant, "state": s.state().as_str()});
    if let Some(at) = s.closing_at {
        v["closingAt"] = json!(iso(at));
    }
    if let Some(sus) = &s.suspended {
        v["suspendedAt"] = json!(iso(sus.at));
        if let Some(r) = &sus.reason {
            v["suspendedReason"] = json!(r);
        }
    }
    v
}

fn iso(ms: i64) -> String {
    kindgi_runtime::record::format_millis(ms)
}

/// A UUID's text form (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids() {
        assert!(is_uuid("00000000-0000-4000-8000-00000000000a"));
        assert!(!is_uuid("00000000-0000-4000-8000-00000000000"));
        assert!(!is_uuid("default"));
        assert!(!is_uuid("0000000g-0000-4000-8000-00000000000a"));
    }
}
