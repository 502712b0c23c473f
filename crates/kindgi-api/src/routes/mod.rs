//! Route groups.

pub mod tools;
