//! Modules that fail to load (only `index.import-throws.json` lists them).

pub mod import_throws;
