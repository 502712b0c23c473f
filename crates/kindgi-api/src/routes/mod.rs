//! Route groups.

pub mod key_holder;
pub mod service_accounts;
pub mod tokens;
pub mod tools;
