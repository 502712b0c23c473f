//! What each check needs of the fixture: the tools and checks it calls and the index variants
//! it starts the service with. A fixture that lacks one (the official TypeScript service's
//! echo-only fixture, a pack author's own service) gets `skip N title: the fixture has no …`
//! for that check instead of a failure that only says `tool-not-in-pack`; `--require-all`
//! turns every skip back into a failure, which is how this repository runs its own fixtures.
//!
//! Ids the checks send on purpose to a member no pack has (`conformance.nope`) are not needs,
//! and members that only an index variant has are covered by needing the variant.

use std::path::Path;

use serde_json::Value;

use crate::service::ServiceCommand;

/// One thing a check needs of the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// A tool in the base index (`tools[].id`).
    Tool(&'static str),
    /// A guardrail check in the base index (`guardrails[].checkId`).
    Check(&'static str),
    /// An index variant shipped beside the base index (`index.<name>.json`).
    Variant(&'static str),
}

use Need::{Check, Tool, Variant};

/// What check `n` needs (nothing for the transport and process checks).
pub(crate) fn needs(n: u32) -> &'static [Need] {
    match n {
        3 => &[
            Check("conformance.checks.min-length"),
            Check("conformance.checks.throws"),
            Tool("conformance.echo"),
        ],
        6 | 10..=16 | 21..=26 | 29..=35 | 74..=78 => &[Tool("conformance.echo")],
        17 | 39 | 49 => &[Variant("extras")],
        27..=28 | 53..=57 | 60 => &[Check("conformance.checks.min-length")],
        36 => &[Tool("conformance.bad-output")],
        37..=38 => &[Tool("conformance.defaults")],
        40 => &[Tool("conformance.throws")],
        41..=43 => &[Tool("conformance.context")],
        44 | 82..=84 => &[Tool("conformance.process-env")],
        45 => &[Tool("conformance.noisy")],
        46 => &[Tool("conformance.context"), Tool("conformance.echo")],
        47..=48 => &[Tool("conformance.sleep")],
        50 | 52 | 73 => &[Tool("conformance.hold")],
        51 | 72 => &[Tool("conformance.echo"), Tool("conformance.hold")],
        59 => &[Check("conformance.checks.throws")],
        68 => &[Variant("import-throws")],
        _ => &[],
    }
}

/// The first need of check `n` the fixture does not meet, said as `tool "…"`, `check "…"`
/// or `index variant …`.
pub(crate) fn unmet(n: u32, base_index: &Value, cmd: &ServiceCommand) -> Option<String> {
    needs(n).iter().find_map(|need| match need {
        Tool(id) => (!has(base_index, "tools", "id", id)).then(|| format!("tool \"{id}\"")),
        Check(id) => {
            (!has(base_index, "guardrails", "checkId", id)).then(|| format!("check \"{id}\""))
        }
        Variant(name) => {
            let path = cmd.sibling_variant(name);
            (!path.is_file()).then(|| format!("index variant {}", shown(&path)))
        }
    })
}

/// Whether `index[list]` has an entry whose `field` is `id`.
fn has(index: &Value, list: &str, field: &str, id: &str) -> bool {
    index[list]
        .as_array()
        .is_some_and(|items| items.iter().any(|item| item[field] == id))
}

fn shown(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
