//! Kindgi storage: the embedded SQLite default and PostgreSQL, for the tool registry, runs and their journal.
