//! Connections: a tenant's accounts at other apps (`google`, `github`) that tools act with
//! (seed 000, `needsSpec.connections`). A connection is a person's (the run's person) or the
//! company's (the tenant's), grants permission keys of its app, and holds an access token
//! (and, when it can be refreshed, a refresh token and the token endpoint to refresh at). The
//! tokens are never part of [`ConnectionRecord`]: they travel only as [`ConnectionTokens`],
//! whose `Debug` prints no token, and are sealed at rest by the store. See docs/connections.md.

use kindgi_spec::tool::ConnectionOwner;

/// Whose a connection is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConnectionHolder {
    /// A person's, by user id (the `<id>` of `user:<id>`).
    Person(String),
    /// The tenant's own.
    Company,
}

impl ConnectionHolder {
    /// `person` or `company` (`needsSpec.connections.*.as`).
    pub fn whose(&self) -> ConnectionOwner {
        match self {
            ConnectionHolder::Person(_) => ConnectionOwner::Person,
            ConnectionHolder::Company => ConnectionOwner::Company,
        }
    }

    /// The wire word of [`ConnectionHolder::whose`].
    pub fn as_str(&self) -> &'static str {
        match self {
            ConnectionHolder::Person(_) => "person",
            ConnectionHolder::Company => "company",
        }
    }

    /// The person's user id; `None` for the company.
    pub fn user_id(&self) -> Option<&str> {
        match self {
            ConnectionHolder::Person(u) => Some(u),
            ConnectionHolder::Company => None,
        }
    }

    /// From the stored columns: `person` + a user id, or `company`.
    pub fn from_columns(kind: &str, user_id: &str) -> Option<ConnectionHolder> {
        match kind {
            "person" if !user_id.is_empty() => Some(ConnectionHolder::Person(user_id.to_owned())),
            "company" => Some(ConnectionHolder::Company),
            _ => None,
        }
    }
}

/// How an expired access token is refreshed: an OAuth 2 token endpoint (RFC 6749 §6,
/// `grant_type=refresh_token`) and the client to authenticate as. The client secret is a
/// tenant secret, by name (`kindgi secrets set`), never stored here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshClient {
    pub token_url: String,
    pub client_id: String,
    pub client_secret_name: Option<String>,
}

/// A stored connection, without its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRecord {
    /// A UUID.
    pub id: String,
    /// The tenant's name (as keys carry it).
    pub tenant: String,
    /// The app's entry id (`google`).
    pub app: String,
    pub holder: ConnectionHolder,
    /// The app's permission keys the connection grants (`gmail.send`), sorted, unique.
    pub permissions: Vec<String>,
    /// Unix milliseconds: when the access token expires (`None`: it says no expiry).
    pub expires_at: Option<i64>,
    /// Whether a refresh token is stored.
    pub refreshable: bool,
    pub refresh: Option<RefreshClient>,
    /// `user:<id>` | `service_account:<id>`: who added it.
    pub created_by: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    /// Unix milliseconds; set once revoked (a revoked connection is never used).
    pub revoked_at: Option<i64>,
}

impl ConnectionRecord {
    /// Whether the access token has expired at `now` (Unix milliseconds).
    pub fn expired_at(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|e| e <= now)
    }

    /// `active`, `expired` (the access token has, and no refresh is possible) or `revoked`.
    pub fn status(&self, now: i64) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.expired_at(now) && !(self.refreshable && self.refresh.is_some()) {
            "expired"
        } else {
            "active"
        }
    }

    /// The permission keys of `wanted` this connection does not grant, in `wanted`'s order.
    pub fn missing_permissions<'a>(&self, wanted: &'a [String]) -> Vec<&'a str> {
        wanted
            .iter()
            .filter(|p| !self.permissions.iter().any(|g| g == *p))
            .map(String::as_str)
            .collect()
    }
}

/// A connection's tokens. `Debug` prints none of them.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectionTokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Unix milliseconds (`None`: no expiry given).
    pub expires_at: Option<i64>,
}

impl std::fmt::Debug for ConnectionTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionTokens")
            .field("access_token", &"<redacted>")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// What to add: `(tenant, app, holder)` is the connection's identity — adding again replaces
/// its permissions, tokens and refresh client, keeps its id and un-revokes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConnection {
    pub tenant: String,
    pub app: String,
    pub holder: ConnectionHolder,
    pub permissions: Vec<String>,
    pub tokens: ConnectionTokens,
    pub refresh: Option<RefreshClient>,
    pub created_by: Option<String>,
    /// Unix milliseconds.
    pub now: i64,
}

/// A page of a tenant's connections: oldest first, after `(created_at, id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionQuery {
    pub tenant: String,
    pub app: Option<String>,
    /// Only this holder's (`None`: all).
    pub holder: Option<ConnectionHolder>,
    /// Also the company's when `holder` is a person (what a person may see).
    pub with_company: bool,
    pub after: Option<(i64, String)>,
    /// At most this many rows.
    pub limit: usize,
}

impl ConnectionQuery {
    /// Whether `r` is in this query's set (before paging).
    pub fn matches(&self, r: &ConnectionRecord) -> bool {
        r.tenant == self.tenant
            && self.app.as_ref().is_none_or(|a| *a == r.app)
            && match &self.holder {
                None => true,
                Some(h) => {
                    *h == r.holder || (self.with_company && r.holder == ConnectionHolder::Company)
                }
            }
            && self
                .after
                .as_ref()
                .is_none_or(|(at, id)| (r.created_at, r.id.as_str()) > (*at, id.as_str()))
    }
}

/// Sorted, unique permission keys.
pub fn normalize_permissions(mut permissions: Vec<String>) -> Vec<String> {
    permissions.sort();
    permissions.dedup();
    permissions
}
