//! The tenant-state port: whether a tenant is active, suspended or closing, and which of its
//! projects are suspended (platform-api.md §1.9 and §9.2 step 5; `OA:SystemTenant.state`,
//! `OA:ProjectSuspension`). The operator sets them (`kindgi tenant suspend|resume|close
//! --database`, docs/tenancy.md); the API refuses writes and run starts by them, the webhook
//! receiver answers deliveries by them, and the trigger loops skip fires. kindgi-store keeps
//! it in SQLite or PostgreSQL.
//!
//! A second suspend keeps the first one's time and reason; restoring clears both. Closing is
//! one-way, and `closing` wins over `suspended`.

use async_trait::async_trait;

use crate::error::StorageError;

/// One suspension: since when, and why (the operator's words, for the record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspension {
    /// Unix milliseconds.
    pub at: i64,
    pub reason: Option<String>,
}

/// A tenant's state as stored (both absent: active).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantStanding {
    /// Unix milliseconds; set once, never cleared.
    pub closing_at: Option<i64>,
    pub suspended: Option<Suspension>,
}

/// A tenant's state on the wire (`OA:Tenant.state`): `closing` wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantState {
    Active,
    Suspended,
    Closing,
}

impl TenantState {
    pub fn as_str(self) -> &'static str {
        match self {
            TenantState::Active => "active",
            TenantState::Suspended => "suspended",
            TenantState::Closing => "closing",
        }
    }
}

impl TenantStanding {
    pub fn state(&self) -> TenantState {
        match (self.closing_at, &self.suspended) {
            (Some(_), _) => TenantState::Closing,
            (None, Some(_)) => TenantState::Suspended,
            (None, None) => TenantState::Active,
        }
    }
}

/// What stops work in one project of a tenant, read in one go: the first of tenant closing,
/// tenant suspended, project suspended, or nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Active,
    TenantClosing,
    TenantSuspended,
    ProjectSuspended,
}

impl Standing {
    /// The wire code of what stops it (`tenant-closing`, `tenant-suspended`,
    /// `project-suspended`); `None` when active.
    pub fn code(self) -> Option<&'static str> {
        match self {
            Standing::Active => None,
            Standing::TenantClosing => Some("tenant-closing"),
            Standing::TenantSuspended => Some("tenant-suspended"),
            Standing::ProjectSuspended => Some("project-suspended"),
        }
    }
}

/// Tenants' and projects' states.
#[async_trait]
pub trait TenantStates: Send + Sync + std::fmt::Debug {
    /// `tenant`'s state (default: active).
    async fn tenant_standing(&self, tenant: &str) -> Result<TenantStanding, StorageError>;

    /// What stops work in `tenant`'s `project` (`None`: the tenant only), in one read.
    async fn standing(&self, tenant: &str, project: Option<&str>)
    -> Result<Standing, StorageError>;

    /// Suspends `tenant` (`Some`; a second suspend keeps the first one's time and reason) or
    /// restores it (`None`). Returns the state after.
    async fn set_tenant_suspended(
        &self,
        tenant: &str,
        suspension: Option<&Suspension>,
    ) -> Result<TenantStanding, StorageError>;

    /// Starts closing `tenant` at `at` (a second close keeps the first). Returns the state
    /// after.
    async fn close_tenant(&self, tenant: &str, at: i64) -> Result<TenantStanding, StorageError>;

    /// `tenant`'s `project` suspension (`None`: not suspended).
    async fn project_suspension(
        &self,
        tenant: &str,
        project: &str,
    ) -> Result<Option<Suspension>, StorageError>;

    /// Suspends `tenant`'s `project` (`Some`; a second keeps the first) or restores it
    /// (`None`). Returns the suspension after.
    async fn set_project_suspended(
        &self,
        tenant: &str,
        project: &str,
        suspension: Option<&Suspension>,
    ) -> Result<Option<Suspension>, StorageError>;
}
