//! API keys: bearer tokens that name a tenant and whom they act for (a person, or a service
//! account), stored only as SHA-256 hashes.
//!
//! A key is `kgi_` followed by 43 base64url characters (32 random bytes from the OS-seeded
//! CSPRNG), so hashing without a salt is safe: there is nothing to guess. The hash is the
//! primary key, so a lookup is one indexed read; the stored hash is then compared in
//! constant time. A key is shown once, at creation. Afterwards it is named by its
//! `token_id` (a UUID, the API's `tokenId`) or its `key_id` (the first 16 hex digits of the
//! hash, what `kindgi tokens revoke --key-id` and `kindgi dev` use).
//!
//! Each key records its principal (platform-api.md §10.1): `user:<id>` for a person's key,
//! `service-account:<id>` for a service account's (see [`crate::service_accounts`]), or none
//! for a key that is its own service account (keys made before principals existed). A
//! service account's keys stop authenticating when it is unregistered, and so do the keys it
//! minted (`created_by` `service_account:<id>`): keys are revoked with their minter. The role
//! (`member`/`admin`) and capabilities say the most the key may do; [`KeyStatus::Valid`]
//! carries them, and whether the caller is a tenant admin, so the API decides from one read.
//!
//! "Every capability this runtime checks" is a recorded grant (`all_capabilities`), never
//! inferred from an empty list: only [`TokenStore::create`] and [`TokenStore::create_for_user`]
//! (`kindgi tokens create --database`, `kindgi dev`) set it; a key minted through the API holds
//! exactly its list.
//!
//! Every statement is written once for both databases ([`crate::on_pool`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use sha2::{Digest, Sha256};
use sqlx::Row as _;
use subtle::ConstantTimeEq as _;
use thiserror::Error;

use crate::epoch::EpochKind;
use crate::{Backend, Database, StoreError, now_millis};

/// The prefix of every key (recognizable in logs and secret scanners).
pub const KEY_PREFIX: &str = "kgi_";

/// The user id the operator's keys carried before the operator had a UUID (`user:admin`).
/// Such keys still authenticate as that person, and what they did (`createdBy`,
/// `decidedBy`, roster rows) reads as it was written; new ones name [`operator_user_id`].
pub const LEGACY_BOOTSTRAP_USER: &str = "admin";

/// The namespace of operator user ids (a fixed random UUID).
const OPERATOR_NAMESPACE: uuid::Uuid =
    uuid::Uuid::from_u128(0x9c4e_21d7_6a0b_4f38_b5e1_3d7f_0a92_c64e);

/// The person of a key made by [`TokenStore::create`] (`kindgi tokens create --database`,
/// `kindgi dev`): the tenant's first person, a tenant admin. A UUID v5 derived from the
/// tenant, the same across restarts, processes and databases, as the official wire has
/// `User.id` and `Reviewer.userId` (`format: uuid`).
pub fn operator_user_id(tenant: &str) -> String {
    uuid::Uuid::new_v5(
        &OPERATOR_NAMESPACE,
        format!("kindgi-operator:{tenant}").as_bytes(),
    )
    .to_string()
}

const TABLE_SQLITE: &str = "CREATE TABLE IF NOT EXISTS api_keys (
        key_hash   TEXT PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
    )";

const TABLE_POSTGRES: &str = "CREATE TABLE IF NOT EXISTS api_keys (
        key_hash   TEXT PRIMARY KEY,
        key_id     TEXT NOT NULL UNIQUE,
        tenant     TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        revoked_at BIGINT
    )";

/// Columns added after the first release, as `name definition` (the same on both
/// databases). A key made before them is its own service account with role `admin`, as it
/// could do everything then.
const ADDED_COLUMNS: &[(&str, &str)] = &[
    ("token_id", "TEXT"),
    ("principal_kind", "TEXT"),
    ("principal_id", "TEXT"),
    ("role", "TEXT NOT NULL DEFAULT 'admin'"),
    ("capabilities", "TEXT NOT NULL DEFAULT '[]'"),
    ("label", "TEXT"),
    ("project_id", "TEXT"),
    ("created_by", "TEXT"),
    ("last_used_at", "BIGINT"),
    // NULL on rows from before it: [`FILL_ALL_CAPABILITIES`] decides them once.
    ("all_capabilities", "BIGINT"),
];

/// The one-time decision for keys stored before `all_capabilities` existed: a key the
/// operator made (no `created_by`: `kindgi tokens create --database`, `kindgi dev`, or a key
/// from before principals) with role `admin` and no list keeps every capability; every other
/// key — an API-minted admin key with an empty list included — holds exactly its list.
const FILL_ALL_CAPABILITIES: &str = "UPDATE api_keys SET all_capabilities = CASE WHEN created_by IS NULL AND role = 'admin' AND capabilities = '[]' THEN 1 ELSE 0 END WHERE all_capabilities IS NULL";

/// Keys for a person minted through the API by someone other than that person (possible
/// before the rule "a person's key comes from that person or the operator"): revoked, so
/// no stored key acts for a person nobody vouched for. Idempotent (none can be made now).
const REVOKE_IMPERSONATIONS_SQLITE: &str = "UPDATE api_keys SET revoked_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000 WHERE revoked_at IS NULL AND principal_kind = 'user' AND created_by IS NOT NULL AND created_by <> 'user:' || principal_id";
const REVOKE_IMPERSONATIONS_POSTGRES: &str = "UPDATE api_keys SET revoked_at = CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT) WHERE revoked_at IS NULL AND principal_kind = 'user' AND created_by IS NOT NULL AND created_by <> 'user:' || principal_id";

/// How stale `last_used_at` may get before an authentication writes it again.
pub const LAST_USED_RESOLUTION_MS: i64 = 60_000;

/// Keys made before `token_id` existed get one derived from their hash (UUID-shaped).
const FILL_TOKEN_IDS: &str = "UPDATE api_keys SET token_id = substr(key_hash, 1, 8) || '-' || substr(key_hash, 9, 4) || '-' || substr(key_hash, 13, 4) || '-' || substr(key_hash, 17, 4) || '-' || substr(key_hash, 21, 12) WHERE token_id IS NULL";

const INDEXES: &[&str] = &[
    "CREATE UNIQUE INDEX IF NOT EXISTS api_keys_token_id ON api_keys (token_id)",
    "CREATE INDEX IF NOT EXISTS api_keys_tenant_created ON api_keys (tenant, created_at, token_id)",
    "CREATE INDEX IF NOT EXISTS api_keys_tenant_created_by ON api_keys (tenant, created_by)",
];

/// Create or upgrade the `api_keys` table (idempotent; `service_accounts` has its own).
pub async fn migrate(db: &Database) -> Result<(), StoreError> {
    db.apply_schema("tokens", &[TABLE_SQLITE], &[TABLE_POSTGRES])
        .await?;
    add_columns(db).await?;
    let mut rest = vec![FILL_TOKEN_IDS, FILL_ALL_CAPABILITIES];
    rest.extend_from_slice(INDEXES);
    let mut sqlite = rest.clone();
    sqlite.push(REVOKE_IMPERSONATIONS_SQLITE);
    rest.push(REVOKE_IMPERSONATIONS_POSTGRES);
    db.apply_schema("tokens", &sqlite, &rest).await
}

/// Adds [`ADDED_COLUMNS`] that an older table lacks. PostgreSQL says `IF NOT EXISTS`
/// (under the migration lock); SQLite has no such clause, so its columns are read first and
/// a column another process added meanwhile ("duplicate column") is not an error.
async fn add_columns(db: &Database) -> Result<(), StoreError> {
    let err = |source| StoreError::Migrate {
        module: "tokens",
        source,
    };
    match db.backend() {
        Backend::Postgres(_) => {
            let stmts: Vec<String> = ADDED_COLUMNS
                .iter()
                .map(|(n, d)| format!("ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS {n} {d}"))
                .collect();
            let refs: Vec<&str> = stmts.iter().map(String::as_str).collect();
            db.apply_schema("tokens", &[], &refs).await
        }
        Backend::Sqlite(p) => {
            let have: Vec<String> = sqlx::query("SELECT name FROM pragma_table_info('api_keys')")
                .fetch_all(&p.writer)
                .await
                .map_err(err)?
                .iter()
                .map(|r| r.try_get::<String, _>(0))
                .collect::<Result<_, _>>()
                .map_err(err)?;
            for (name, def) in ADDED_COLUMNS {
                if have.iter().any(|h| h == name) {
                    continue;
                }
                let stmt = format!("ALTER TABLE api_keys ADD COLUMN {name} {def}");
                match sqlx::query(&stmt).execute(&p.writer).await {
                    Ok(_) => {}
                    Err(sqlx::Error::Database(e)) if e.message().contains("duplicate column") => {}
                    Err(e) => return Err(err(e)),
                }
            }
            Ok(())
        }
    }
}

/// Whom a key acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub kind: PrincipalKind,
    pub id: String,
}

/// A person (`user`) or a service account (`service-account` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    User,
    ServiceAccount,
}

impl PrincipalKind {
    /// The wire name: `user` or `service-account`.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::User => "user",
            PrincipalKind::ServiceAccount => "service-account",
        }
    }

    /// The wire name back.
    pub fn parse(s: &str) -> Option<PrincipalKind> {
        match s {
            "user" => Some(PrincipalKind::User),
            "service-account" => Some(PrincipalKind::ServiceAccount),
            _ => None,
        }
    }
}

impl Principal {
    pub fn user(id: impl Into<String>) -> Principal {
        Principal {
            kind: PrincipalKind::User,
            id: id.into(),
        }
    }

    pub fn service_account(id: impl Into<String>) -> Principal {
        Principal {
            kind: PrincipalKind::ServiceAccount,
            id: id.into(),
        }
    }

    /// The actor string of `createdBy`: `user:<id>` or `service_account:<id>` (underscore,
    /// as the official API writes it, while the principal kind has a hyphen).
    pub fn actor(&self) -> String {
        match self.kind {
            PrincipalKind::User => format!("user:{}", self.id),
            PrincipalKind::ServiceAccount => format!("service_account:{}", self.id),
        }
    }

    /// What a run started with this principal's key records as `startedBy`: `person` for a
    /// person's key, `key` for a service account's.
    pub fn started_by(&self) -> &'static str {
        match self.kind {
            PrincipalKind::User => "person",
            PrincipalKind::ServiceAccount => "key",
        }
    }
}

/// The most a key may do, under its principal's grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRole {
    Member,
    Admin,
}

impl KeyRole {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRole::Member => "member",
            KeyRole::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<KeyRole> {
        match s {
            "member" => Some(KeyRole::Member),
            "admin" => Some(KeyRole::Admin),
            _ => None,
        }
    }
}

/// A stored key, without its secret or hash (`OA:ApiToken`). Times are ms since the epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub token_id: String,
    pub key_id: String,
    pub tenant: String,
    pub principal: Option<Principal>,
    pub role: KeyRole,
    pub capabilities: Vec<String>,
    pub label: Option<String>,
    pub project_id: Option<String>,
    /// `user:<id>` or `service_account:<id>`.
    pub created_by: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// When the key last authenticated a request (kept to [`LAST_USED_RESOLUTION_MS`]).
    pub last_used_at: Option<i64>,
    /// The operator's grant of every capability this runtime checks (see the module doc).
    pub all_capabilities: bool,
}

impl TokenRecord {
    /// The actor this key is: its principal's, or `service_account:<tokenId>` for a key that
    /// is its own service account.
    pub fn actor(&self) -> String {
        match &self.principal {
            Some(p) => p.actor(),
            None => format!("service_account:{}", self.token_id),
        }
    }

    /// `startedBy` for runs this key starts: `person` for a person's key, else `key`.
    pub fn started_by(&self) -> &'static str {
        self.principal.as_ref().map_or("key", Principal::started_by)
    }
}

/// What a new key is for; see [`TokenStore::mint`].
#[derive(Debug, Clone)]
pub struct NewToken {
    pub tenant: String,
    pub principal: Option<Principal>,
    pub role: KeyRole,
    pub capabilities: Vec<String>,
    pub label: Option<String>,
    pub project_id: Option<String>,
    pub created_by: Option<String>,
    pub expires_at: Option<i64>,
}

/// A key just minted: `key` is the secret, shown once.
#[derive(Debug, Clone)]
pub struct MintedToken {
    pub key: String,
    pub record: TokenRecord,
}

/// A key just created by [`TokenStore::create`]: `key` is the secret, shown once.
#[derive(Debug, Clone)]
pub struct CreatedKey {
    pub key: String,
    pub key_id: String,
    pub token_id: String,
    pub tenant: String,
}

/// A key that authenticates: its record, and whether its holder is a tenant admin (an
/// `admin` key of a person, of a service account granted `tenant-admin`, or a key that is
/// its own service account with role `admin`; never a key limited to a project).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidKey {
    pub record: TokenRecord,
    pub tenant_admin: bool,
}

impl ValidKey {
    /// The capabilities this key holds; see [`HeldCapabilities`].
    pub fn held_capabilities(&self) -> HeldCapabilities {
        if self.tenant_admin && self.record.all_capabilities {
            HeldCapabilities::Runtime
        } else {
            HeldCapabilities::Listed(self.record.capabilities.clone())
        }
    }
}

/// The capabilities this runtime's routes check (platform-api.md §1.2).
pub const RUNTIME_CAPABILITIES: &[&str] = &[
    "env:write",
    "secrets:write",
    "secrets:rotate",
    "secrets:revoke",
    "secrets:revoke:hard",
    "secrets:use",
];

/// The capabilities (`env:write`, `secrets:write`, …) a key holds. The check is fail-closed
/// (platform-api.md §1.2): a key holds what its list names and nothing else, except a tenant
/// admin's key carrying the operator's recorded all-capabilities grant
/// ([`TokenRecord::all_capabilities`]: the key `kindgi dev` and `kindgi tokens create
/// --database` make, and operator keys from before capabilities existed), which holds every
/// capability this runtime checks ([`RUNTIME_CAPABILITIES`]). An empty list is never "all".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldCapabilities {
    /// [`RUNTIME_CAPABILITIES`] (the operator's all-capabilities grant).
    Runtime,
    /// Exactly these.
    Listed(Vec<String>),
}

impl HeldCapabilities {
    /// Whether `cap` is held.
    pub fn holds(&self, cap: &str) -> bool {
        match self {
            HeldCapabilities::Runtime => RUNTIME_CAPABILITIES.contains(&cap),
            HeldCapabilities::Listed(list) => list.iter().any(|c| c == cap),
        }
    }

    /// What is held, written out (the wire's `capabilities` of an all-capabilities key).
    pub fn names(&self) -> Vec<String> {
        match self {
            HeldCapabilities::Runtime => RUNTIME_CAPABILITIES
                .iter()
                .map(|c| (*c).to_owned())
                .collect(),
            HeldCapabilities::Listed(list) => list.clone(),
        }
    }
}

/// What a presented key turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStatus {
    Valid {
        tenant: String,
        key_id: String,
        /// Whom the key acts for (`None`: the key is its own service account).
        principal: Option<Principal>,
        key: Box<ValidKey>,
    },
    Unknown,
    /// Revoked, or a service account's key whose account is unregistered.
    Revoked,
    Expired,
}

impl KeyStatus {
    /// `startedBy` for a run this key starts (`person` or `key`); `None` unless valid.
    pub fn started_by(&self) -> Option<&'static str> {
        match self {
            KeyStatus::Valid { key, .. } => Some(key.record.started_by()),
            _ => None,
        }
    }
}

/// A failure creating or revoking a key.
#[derive(Debug, Error)]
pub enum TokenError {
    #[error("tenant name {tenant:?} is not valid: use 1 to 128 characters from A-Z a-z 0-9 . _ -")]
    InvalidTenant { tenant: String },
    #[error("no API key with id {key_id:?}")]
    UnknownKey { key_id: String },
    #[error(
        "the key given for tenant {tenant:?} is already a key of another tenant, or revoked or expired: give a fresh one"
    )]
    KeyHeldElsewhere { tenant: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The key was made, but its person could not be put on the reviewer roster.
    #[error("the key was created, but its person could not be registered as a reviewer: {0}")]
    Roster(#[from] kindgi_core::StorageError),
}

/// True when `tenant` is an acceptable tenant name.
pub fn valid_tenant(tenant: &str) -> bool {
    !tenant.is_empty()
        && tenant.len() <= 128
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// SHA-256 of a key, lowercase hex.
pub fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// A fresh random key.
pub fn generate_key() -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "{KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Every column of a key row but the hash, in [`record_from_row!`]'s order.
const COLUMNS: &str = "token_id, key_id, tenant, principal_kind, principal_id, role, capabilities, label, project_id, created_by, created_at, expires_at, revoked_at, last_used_at, all_capabilities";

/// Decodes a row selected with [`COLUMNS`] into a [`TokenRecord`] (a macro: the row type
/// differs per backend).
macro_rules! record_from_row {
    ($row:expr) => {{
        let row = &$row;
        let corrupt = |e: sqlx::Error| StoreError::Corrupt {
            what: "api_keys row".into(),
            reason: e.to_string(),
        };
        let kind: Option<String> = row.try_get("principal_kind").map_err(corrupt)?;
        let pid: Option<String> = row.try_get("principal_id").map_err(corrupt)?;
        let role: String = row.try_get("role").map_err(corrupt)?;
        let caps: String = row.try_get("capabilities").map_err(corrupt)?;
        TokenRecord {
            token_id: row.try_get("token_id").map_err(corrupt)?,
            key_id: row.try_get("key_id").map_err(corrupt)?,
            tenant: row.try_get("tenant").map_err(corrupt)?,
            principal: match (kind.as_deref().and_then(PrincipalKind::parse), pid) {
                (Some(kind), Some(id)) => Some(Principal { kind, id }),
                _ => None,
            },
            role: KeyRole::parse(&role).unwrap_or(KeyRole::Member),
            capabilities: serde_json::from_str(&caps).map_err(|e| StoreError::Corrupt {
                what: "api_keys.capabilities".into(),
                reason: e.to_string(),
            })?,
            label: row.try_get("label").map_err(corrupt)?,
            project_id: row.try_get("project_id").map_err(corrupt)?,
            created_by: row.try_get("created_by").map_err(corrupt)?,
            created_at: row.try_get("created_at").map_err(corrupt)?,
            expires_at: row.try_get("expires_at").map_err(corrupt)?,
            revoked_at: row.try_get("revoked_at").map_err(corrupt)?,
            last_used_at: row.try_get("last_used_at").map_err(corrupt)?,
            all_capabilities: row
                .try_get::<Option<i64>, _>("all_capabilities")
                .map_err(corrupt)?
                == Some(1),
        }
    }};
}

/// Which keys [`TokenStore::list`] returns, and from where (newest first).
#[derive(Debug, Clone, Default)]
pub struct TokenFilter {
    /// Only this principal's keys.
    pub principal: Option<Principal>,
    /// Only keys minted by this actor (`user:<id>`, `service_account:<id>`).
    pub created_by: Option<String>,
    /// Only keys older than this `(created_at, token_id)` (the previous page's last).
    pub before: Option<(i64, String)>,
    pub limit: usize,
}

/// API-key storage over a [`Database`].
#[derive(Debug, Clone)]
pub struct TokenStore {
    db: Database,
    /// Valid keys by hash, each with the keys epoch it was read at (see [`crate::epoch`]):
    /// used only while no key or service account changed in any process since.
    cache: Arc<Mutex<HashMap<String, CachedKey>>>,
}

/// A valid key as last read.
#[derive(Debug, Clone)]
struct CachedKey {
    status: KeyStatus,
    epoch: u64,
    /// When it was read (ms): an entry older than [`LAST_USED_RESOLUTION_MS`] is read again,
    /// which also records the key's use.
    read_at: i64,
    expires_at: Option<i64>,
}

/// The most keys cached; past it the cache starts over.
const MAX_CACHED_KEYS: usize = 10_000;

impl TokenStore {
    pub fn new(db: Database) -> TokenStore {
        TokenStore {
            db,
            cache: Arc::default(),
        }
    }

    fn cached(&self, hash: &str, epoch: Option<u64>, now: i64) -> Option<KeyStatus> {
        let epoch = epoch?;
        let g = self.cache.lock().ok()?;
        let c = g.get(hash)?;
        let fresh = c.epoch == epoch
            && now - c.read_at < LAST_USED_RESOLUTION_MS
            && c.expires_at.is_none_or(|t| t > now);
        fresh.then(|| c.status.clone())
    }

    fn remember(&self, hash: String, status: &KeyStatus, epoch: Option<u64>, now: i64) {
        let (Some(epoch), KeyStatus::Valid { key, .. }) = (epoch, status) else {
            return;
        };
        if let Ok(mut g) = self.cache.lock() {
            if g.len() >= MAX_CACHED_KEYS {
                g.clear();
            }
            g.insert(
                hash,
                CachedKey {
                    status: status.clone(),
                    epoch,
                    read_at: now,
                    expires_at: key.record.expires_at,
                },
            );
        }
    }

    /// Create a tenant admin's key for `tenant` (a person, [`operator_user_id`]), optionally
    /// expiring at `expires_at` (ms since the epoch): `kindgi tokens create --database`.
    pub async fn create(
        &self,
        tenant: &str,
        expires_at: Option<i64>,
    ) -> Result<CreatedKey, TokenError> {
        self.create_for_user(tenant, &operator_user_id(tenant), expires_at)
            .await
    }

    /// The operator's key for the person `user` of `tenant` (`kindgi tokens create --database
    /// --for user:<id>`): a tenant admin's, with the all-capabilities grant. The one way a key
    /// for a person is made other than by that person. The person is put on the tenant's
    /// reviewer roster as `admin` unless the roster already names them (docs/approvals.md).
    pub async fn create_for_user(
        &self,
        tenant: &str,
        user: &str,
        expires_at: Option<i64>,
    ) -> Result<CreatedKey, TokenError> {
        let minted = self
            .insert(
                &NewToken {
                    tenant: tenant.to_owned(),
                    principal: Some(Principal::user(user)),
                    role: KeyRole::Admin,
                    capabilities: Vec::new(),
                    label: None,
                    project_id: None,
                    created_by: None,
                    expires_at,
                },
                true,
            )
            .await?;
        crate::reviewers::ensure_admin(&self.db, tenant, user).await?;
        Ok(CreatedKey {
            key: minted.key,
            key_id: minted.record.key_id,
            token_id: minted.record.token_id,
            tenant: minted.record.tenant,
        })
    }

    /// Store a new key as `new` says (the caller has checked who may mint it). It holds
    /// exactly `new.capabilities`: never the all-capabilities grant.
    pub async fn mint(&self, new: &NewToken) -> Result<MintedToken, TokenError> {
        self.insert(new, false).await
    }

    /// Adopt `key`, a secret chosen elsewhere, as a tenant admin's key for the person `user`
    /// of `tenant` (the dev token of the official `kindgi dev --runtime-url`'s `runtime.env`).
    /// A key already held for that tenant is kept as it is; held for another tenant, refused.
    /// Like [`TokenStore::create_for_user`], the person becomes an `admin` reviewer.
    pub async fn adopt_for_user(
        &self,
        tenant: &str,
        user: &str,
        key: &str,
    ) -> Result<(), TokenError> {
        match self.authenticate(key).await? {
            KeyStatus::Valid { tenant: held, .. } if held == tenant => return Ok(()),
            KeyStatus::Unknown => {}
            _ => {
                return Err(TokenError::KeyHeldElsewhere {
                    tenant: tenant.to_owned(),
                });
            }
        }
        let new = NewToken {
            tenant: tenant.to_owned(),
            principal: Some(Principal::user(user)),
            role: KeyRole::Admin,
            capabilities: Vec::new(),
            label: Some("runtime.env dev token".to_owned()),
            project_id: None,
            created_by: None,
            expires_at: None,
        };
        self.insert_key(&new, true, key.to_owned()).await?;
        crate::reviewers::ensure_admin(&self.db, tenant, user).await?;
        Ok(())
    }

    async fn insert(&self, new: &NewToken, all: bool) -> Result<MintedToken, TokenError> {
        self.insert_key(new, all, generate_key()).await
    }

    async fn insert_key(
        &self,
        new: &NewToken,
        all: bool,
        key: String,
    ) -> Result<MintedToken, TokenError> {
        if !valid_tenant(&new.tenant) {
            return Err(TokenError::InvalidTenant {
                tenant: new.tenant.clone(),
            });
        }
        let hash = hash_key(&key);
        let record = TokenRecord {
            token_id: uuid::Uuid::new_v4().to_string(),
            key_id: hash[..16].to_owned(),
            tenant: new.tenant.clone(),
            principal: new.principal.clone(),
            role: new.role,
            capabilities: new.capabilities.clone(),
            label: new.label.clone(),
            project_id: new.project_id.clone(),
            created_by: new.created_by.clone(),
            created_at: now_millis(),
            expires_at: new.expires_at,
            revoked_at: None,
            last_used_at: None,
            all_capabilities: all,
        };
        let caps = serde_json::to_string(&record.capabilities).unwrap_or_else(|_| "[]".into());
        let kind = record.principal.as_ref().map(|p| p.kind.as_str());
        let pid = record.principal.as_ref().map(|p| p.id.as_str());
        crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "INSERT INTO api_keys (key_hash, key_id, tenant, created_at, expires_at, token_id, principal_kind, principal_id, role, capabilities, label, project_id, created_by, all_capabilities) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(&hash)
            .bind(&record.key_id)
            .bind(&record.tenant)
            .bind(record.created_at)
            .bind(record.expires_at)
            .bind(&record.token_id)
            .bind(kind)
            .bind(pid)
            .bind(record.role.as_str())
            .bind(&caps)
            .bind(&record.label)
            .bind(&record.project_id)
            .bind(&record.created_by)
            .bind(i64::from(all))
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(StoreError::query("tokens.mint"))?;
        Ok(MintedToken { key, record })
    }

    /// Look a presented key up (and its service account, when it is one's).
    pub async fn authenticate(&self, key: &str) -> Result<KeyStatus, StoreError> {
        if !key.starts_with(KEY_PREFIX) || key.len() > 256 {
            return Ok(KeyStatus::Unknown);
        }
        let hash = hash_key(key);
        // The epoch is read before the row: a change committed after this read bumps it,
        // so what is cached below is never newer than the epoch it is cached under.
        let epoch = self.db.epochs().current(EpochKind::Keys);
        let now = now_millis();
        if let Some(status) = self.cached(&hash, epoch, now) {
            return Ok(status);
        }
        let status = self.read_status(key, &hash).await?;
        self.remember(hash, &status, epoch, now);
        Ok(status)
    }

    async fn read_status(&self, _key: &str, hash: &str) -> Result<KeyStatus, StoreError> {
        let hash = hash.to_owned();
        let found = crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(
                "SELECT k.key_hash, k.token_id, k.key_id, k.tenant, k.principal_kind, k.principal_id, k.role, k.capabilities, k.label, k.project_id, k.created_by, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, k.all_capabilities, s.id AS sa_id, s.unregistered_at AS sa_unregistered_at, s.grants AS sa_grants, m.unregistered_at AS minter_unregistered_at FROM api_keys k LEFT JOIN service_accounts s ON k.principal_kind = 'service-account' AND s.id = k.principal_id AND s.tenant = k.tenant LEFT JOIN service_accounts m ON substr(k.created_by, 1, 16) = 'service_account:' AND m.id = substr(k.created_by, 17) AND m.tenant = k.tenant WHERE k.key_hash = $1",
            )
            .bind(&hash)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("tokens.authenticate"))?;
            match row {
                None => Ok::<_, StoreError>(None),
                Some(row) => {
                    let corrupt = |e: sqlx::Error| StoreError::Corrupt {
                        what: "api_keys row".into(),
                        reason: e.to_string(),
                    };
                    let stored: String = row.try_get("key_hash").map_err(corrupt)?;
                    let sa_id: Option<String> = row.try_get("sa_id").map_err(corrupt)?;
                    let sa_gone: Option<i64> =
                        row.try_get("sa_unregistered_at").map_err(corrupt)?;
                    let grants: Option<String> = row.try_get("sa_grants").map_err(corrupt)?;
                    let minter_gone: Option<i64> =
                        row.try_get("minter_unregistered_at").map_err(corrupt)?;
                    let record = record_from_row!(row);
                    Ok(Some((
                        stored,
                        record,
                        sa_id.is_some() && sa_gone.is_none(),
                        grants,
                        minter_gone.is_some(),
                    )))
                }
            }
        })?;
        let Some((stored, record, sa_active, grants, minter_gone)) = found else {
            return Ok(KeyStatus::Unknown);
        };
        if !bool::from(stored.as_bytes().ct_eq(hash.as_bytes())) {
            return Ok(KeyStatus::Unknown);
        }
        let is_sa = matches!(&record.principal, Some(p) if p.kind == PrincipalKind::ServiceAccount);
        // A key is revoked with the service account that minted it.
        if record.revoked_at.is_some() || (is_sa && !sa_active) || minter_gone {
            return Ok(KeyStatus::Revoked);
        }
        if record.expires_at.is_some_and(|t| t <= now_millis()) {
            return Ok(KeyStatus::Expired);
        }
        let now = now_millis();
        if record
            .last_used_at
            .is_none_or(|t| t < now - LAST_USED_RESOLUTION_MS)
        {
            self.touch(&hash, now).await;
        }
        // A key limited to a project takes no admin action on the tenant (the official
        // `keyCeilingDeny`), whoever holds it.
        let tenant_admin = record.role == KeyRole::Admin
            && record.project_id.is_none()
            && (!is_sa || grants.is_some_and(|g| crate::service_accounts::grants_tenant_admin(&g)));
        Ok(KeyStatus::Valid {
            tenant: record.tenant.clone(),
            key_id: record.key_id.clone(),
            principal: record.principal.clone(),
            key: Box::new(ValidKey {
                record,
                tenant_admin,
            }),
        })
    }

    /// Record that the key hashed `hash` was used at `now` (at most once a
    /// [`LAST_USED_RESOLUTION_MS`] per key). A failure is logged, not returned: it must not
    /// refuse the request.
    async fn touch(&self, hash: &str, now: i64) {
        let result = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE api_keys SET last_used_at = $1 WHERE key_hash = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
            )
            .bind(now)
            .bind(hash)
            .bind(now - LAST_USED_RESOLUTION_MS)
            .execute(pool)
            .await
            .map(drop)
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot record when an API key was last used");
        }
    }

    /// Revoke the key named `key_id`. Revoking twice is not an error.
    pub async fn revoke(&self, key_id: &str) -> Result<(), TokenError> {
        let now = now_millis();
        let change = self.db.epochs().before_change(EpochKind::Keys);
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE key_id = $2",
            )
            .bind(now)
            .bind(key_id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("tokens.revoke"))?;
        if affected == 0 {
            return Err(TokenError::UnknownKey {
                key_id: key_id.to_owned(),
            });
        }
        self.db.epochs().announced(change).await;
        Ok(())
    }

    /// Revoke `tenant`'s key `token_id`; the key as it is now, `None` when there is none.
    pub async fn revoke_token(
        &self,
        tenant: &str,
        token_id: &str,
    ) -> Result<Option<TokenRecord>, StoreError> {
        let now = now_millis();
        let change = self.db.epochs().before_change(EpochKind::Keys);
        let affected = crate::on_pool!(self.db, write, |pool| {
            sqlx::query(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE tenant = $2 AND token_id = $3",
            )
            .bind(now)
            .bind(tenant)
            .bind(token_id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::query("tokens.revoke_token"))?;
        if affected > 0 {
            self.db.epochs().announced(change).await;
        }
        self.get(tenant, token_id).await
    }

    /// `tenant`'s key `token_id`, revoked or not.
    pub async fn get(
        &self,
        tenant: &str,
        token_id: &str,
    ) -> Result<Option<TokenRecord>, StoreError> {
        crate::on_pool!(self.db, read, |pool| {
            let row = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM api_keys WHERE tenant = $1 AND token_id = $2"
            ))
            .bind(tenant)
            .bind(token_id)
            .fetch_optional(pool)
            .await
            .map_err(StoreError::query("tokens.get"))?;
            match row {
                None => Ok(None),
                Some(row) => Ok(Some(record_from_row!(row))),
            }
        })
    }

    /// `tenant`'s keys, newest first (revoked ones included), as `filter` says.
    pub async fn list(
        &self,
        tenant: &str,
        filter: &TokenFilter,
    ) -> Result<Vec<TokenRecord>, StoreError> {
        let kind = filter.principal.as_ref().map(|p| p.kind.as_str());
        let pid = filter.principal.as_ref().map(|p| p.id.clone());
        let (before_at, before_id) = match &filter.before {
            Some((at, id)) => (Some(*at), Some(id.clone())),
            None => (None, None),
        };
        let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM api_keys WHERE tenant = $1 \
                 AND ($2 IS NULL OR (principal_kind = $2 AND principal_id = $3)) \
                 AND ($4 IS NULL OR created_at < $4 OR (created_at = $4 AND token_id < $5)) \
                 AND ($6 IS NULL OR created_by = $6) \
                 ORDER BY created_at DESC, token_id DESC LIMIT $7"
            ))
            .bind(tenant)
            .bind(kind)
            .bind(&pid)
            .bind(before_at)
            .bind(&before_id)
            .bind(&filter.created_by)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("tokens.list"))?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                out.push(record_from_row!(row));
            }
            Ok(out)
        })
    }
}

/// A key that still authenticates, as [`TokenStore::active_keys`] lists it (never the
/// secret or its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveKey {
    pub key_id: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

impl TokenStore {
    /// The keys of `tenant` that are neither revoked nor expired, oldest first.
    pub async fn active_keys(&self, tenant: &str) -> Result<Vec<ActiveKey>, StoreError> {
        let now = now_millis();
        crate::on_pool!(self.db, read, |pool| {
            let rows = sqlx::query(
                "SELECT key_id, created_at, expires_at FROM api_keys WHERE tenant = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) ORDER BY created_at, key_id",
            )
            .bind(tenant)
            .bind(now)
            .fetch_all(pool)
            .await
            .map_err(StoreError::query("tokens.active_keys"))?;
            let corrupt = |e: sqlx::Error| StoreError::Corrupt {
                what: "api_keys row".into(),
                reason: e.to_string(),
            };
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                out.push(ActiveKey {
                    key_id: r.try_get(0).map_err(corrupt)?,
                    created_at: r.try_get(1).map_err(corrupt)?,
                    expires_at: r.try_get(2).map_err(corrupt)?,
                });
            }
            Ok(out)
        })
    }
}
