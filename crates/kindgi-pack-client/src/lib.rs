//! Kindgi pack protocol v2 for hosts (`kindgi-host`, `kindgi-dev`): the pooled HTTP client
//! of a pack service ([`client`]) and pack dispatch ([`dispatch`]: the runtime's
//! [`kindgi_tools::dispatch::PackCaller`] over the service serving now). A pack author
//! needs neither; the SDK and the service are `kindgi-pack`.

pub mod client;
pub mod dispatch;
