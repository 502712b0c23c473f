//! Schema compile + validate, MCP dialects (the one `$schema` names, not strict): a schema, a NUL
//! byte, an instance (kindgi_fuzz::schema::check lists the invariants).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kindgi_fuzz::schema::check(data, kindgi_schema::Mode::Mcp);
});
