//! Kindgi's /v1 REST API.
