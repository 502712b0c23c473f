//! Pack index validation: the pack service's reader (`IndexFile::parse`: JSON, the `v: 1`
//! envelope, the typed `PackIndex`) and the canonical text (`to_canonical_string`).
//! Invariants:
//! - a refusal is a sentence in the reference's words (`Cannot read the pack index…` or
//!   `Index envelope v… is not v1`);
//! - an accepted index has canonical text; that text reads back as the same (sorted) index,
//!   and canonicalising it again changes nothing;
//! - each tool entry's schemas compile or are refused with an error, within budget.
#![no_main]

use kindgi_fuzz::within_budget;
use kindgi_pack::service::IndexFile;
use kindgi_schema::{CompileOptions, Mode, Side};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let file = match within_budget("IndexFile::parse", || IndexFile::parse(data)) {
        Ok(f) => f,
        Err(message) => {
            assert!(
                message.starts_with("Cannot read the pack index")
                    || (message.starts_with("Index envelope v") && message.ends_with(" is not v1")),
                "an index refusal in unexpected words: {message}"
            );
            return;
        }
    };
    assert!(file.hash.starts_with("sha256:") && file.hash.len() == 7 + 64);
    let canonical = match file.index.to_canonical_string() {
        Ok(t) => t,
        Err(e) => panic!("an accepted index has no canonical text: {e}"),
    };
    let back = match IndexFile::parse(canonical.as_bytes()) {
        Ok(f) => f,
        Err(e) => panic!("the canonical text of an accepted index is refused: {e}\n{canonical}"),
    };
    match back.index.to_canonical_string() {
        Ok(again) => assert_eq!(again, canonical, "canonical text is not a fixed point"),
        Err(e) => panic!("the re-read index has no canonical text: {e}"),
    }
    let mut sorted = file.index.clone();
    sorted.sort();
    let sorted =
        kindgi_spec::pack_index::canonicalize(&serde_json::to_value(&sorted).unwrap_or_default());
    let reread = kindgi_spec::pack_index::canonicalize(
        &serde_json::to_value(&back.index).unwrap_or_default(),
    );
    assert_eq!(sorted, reread, "the canonical text lost or changed data");
    for tool in file.index.tools.iter().take(4) {
        for (schema, side) in [(&tool.input, Side::Input), (&tool.output, Side::Output)] {
            let options = CompileOptions {
                mode: Mode::Pack,
                side,
            };
            let _ = within_budget("compile an index tool's schema", || {
                kindgi_schema::compile(schema, options)
            });
        }
    }
});
