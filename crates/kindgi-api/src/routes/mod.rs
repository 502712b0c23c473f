//! Route groups.

pub mod env;
pub mod secrets;
pub mod tools;
pub mod values;
