//! The two fixture checks.

pub mod min_length;
pub mod throws;
