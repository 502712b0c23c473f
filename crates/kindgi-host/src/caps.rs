//! The operator's caps on what readers can hold: open run streams per key, per tenant and
//! in all (`kindgi_api::stream_caps`), and the bytes all paged answers and streams may hold
//! unwritten (`kindgi_api::body_budget`). Each comes from a `kindgi server` flag, else the
//! `limits` of its `--config` file, else the default; [`resolve`] checks them together, and
//! a refusal names where the value came from (the flag, or the file's key) so the operator
//! knows what to change.

use std::path::Path;

use kindgi_api::body_budget::DEFAULT_TOTAL_BYTES;
use kindgi_api::stream_caps::{DEFAULT_PER_KEY, DEFAULT_PER_TENANT, DEFAULT_TOTAL, StreamLimits};
use serde::Deserialize;

/// The smallest body budget: the budget counts whole KiB.
pub const MIN_BODY_BUDGET_BYTES: u64 = 1024;

/// The caps one source gives (every one optional): the `limits` of a `--config` file, or
/// the flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigLimits {
    pub max_streams_per_key: Option<u64>,
    pub max_streams_per_tenant: Option<u64>,
    pub max_streams: Option<u64>,
    pub body_budget_bytes: Option<u64>,
}

/// The resolved caps, for [`crate::HostConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub streams: StreamLimits,
    pub body_budget_bytes: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            streams: StreamLimits::default(),
            body_budget_bytes: DEFAULT_TOTAL_BYTES,
        }
    }
}

/// One cap: its flag, its key under the file's `limits`, its default.
struct Knob {
    flag: &'static str,
    key: &'static str,
    default: u64,
    pick: fn(&ConfigLimits) -> Option<u64>,
}

const PER_KEY: Knob = Knob {
    flag: "--max-streams-per-key",
    key: "maxStreamsPerKey",
    default: DEFAULT_PER_KEY as u64,
    pick: |l| l.max_streams_per_key,
};
const PER_TENANT: Knob = Knob {
    flag: "--max-streams-per-tenant",
    key: "maxStreamsPerTenant",
    default: DEFAULT_PER_TENANT as u64,
    pick: |l| l.max_streams_per_tenant,
};
const TOTAL: Knob = Knob {
    flag: "--max-streams",
    key: "maxStreams",
    default: DEFAULT_TOTAL as u64,
    pick: |l| l.max_streams,
};
const BUDGET: Knob = Knob {
    flag: "--body-budget-bytes",
    key: "bodyBudgetBytes",
    default: DEFAULT_TOTAL_BYTES as u64,
    pick: |l| l.body_budget_bytes,
};

/// A value and where it came from, as the operator would name it.
struct Given {
    value: u64,
    named: String,
}

fn given(knob: &Knob, flags: &ConfigLimits, file: Option<(&Path, &ConfigLimits)>) -> Given {
    if let Some(value) = (knob.pick)(flags) {
        return Given {
            value,
            named: format!("{} {value}", knob.flag),
        };
    }
    if let Some((path, limits)) = file {
        if let Some(value) = (knob.pick)(limits) {
            return Given {
                value,
                named: format!("limits.{} {value} in {}", knob.key, path.display()),
            };
        }
    }
    Given {
        value: knob.default,
        named: format!("{} {} (the default)", knob.flag, knob.default),
    }
}

/// The caps from `flags`, else the file's `limits`, else the defaults — or every problem:
/// a cap below its minimum, a key's cap above its tenant's, a tenant's above the total.
pub fn resolve(
    flags: &ConfigLimits,
    file: Option<(&Path, &ConfigLimits)>,
) -> Result<Caps, Vec<String>> {
    let per_key = given(&PER_KEY, flags, file);
    let per_tenant = given(&PER_TENANT, flags, file);
    let total = given(&TOTAL, flags, file);
    let budget = given(&BUDGET, flags, file);
    let mut problems = Vec::new();
    for g in [&per_key, &per_tenant, &total] {
        if g.value == 0 {
            problems.push(format!(
                "{}: a stream cap must be at least 1 (0 would refuse every stream)",
                g.named
            ));
        }
    }
    if per_key.value > per_tenant.value {
        problems.push(format!(
            "{} is more than {}: a key's streams count against its tenant's",
            per_key.named, per_tenant.named
        ));
    }
    if per_tenant.value > total.value {
        problems.push(format!(
            "{} is more than {}: a tenant's streams count against the total",
            per_tenant.named, total.named
        ));
    }
    if budget.value < MIN_BODY_BUDGET_BYTES {
        problems.push(format!(
            "{}: the body budget must be at least {MIN_BODY_BUDGET_BYTES} bytes (it counts whole KiB)",
            budget.named
        ));
    }
    let size = |g: &Given| usize::try_from(g.value).unwrap_or(usize::MAX);
    if problems.is_empty() {
        Ok(Caps {
            streams: StreamLimits {
                per_key: size(&per_key),
                per_tenant: size(&per_tenant),
                total: size(&total),
            },
            body_budget_bytes: size(&budget),
        })
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(key: Option<u64>, tenant: Option<u64>, total: Option<u64>) -> ConfigLimits {
        ConfigLimits {
            max_streams_per_key: key,
            max_streams_per_tenant: tenant,
            max_streams: total,
            body_budget_bytes: None,
        }
    }

    #[test]
    fn nothing_given_is_the_defaults() {
        let caps = resolve(&ConfigLimits::default(), None).unwrap();
        assert_eq!(caps, Caps::default());
        assert_eq!(caps.streams.per_key, 16);
        assert_eq!(caps.streams.per_tenant, 64);
        assert_eq!(caps.streams.total, 256);
        assert_eq!(caps.body_budget_bytes, 256 * 1024 * 1024);
    }

    #[test]
    fn a_flag_wins_over_the_file_and_the_file_over_the_default() {
        let file = ConfigLimits {
            max_streams_per_key: Some(4),
            max_streams_per_tenant: Some(8),
            body_budget_bytes: Some(1 << 20),
            ..ConfigLimits::default()
        };
        let caps = resolve(
            &flags(Some(2), None, None),
            Some((Path::new("k.json"), &file)),
        )
        .unwrap();
        assert_eq!(
            caps.streams,
            StreamLimits {
                per_key: 2,
                per_tenant: 8,
                total: 256
            }
        );
        assert_eq!(caps.body_budget_bytes, 1 << 20);
    }

    #[test]
    fn each_problem_names_where_its_values_came_from() {
        let file = flags(None, Some(300), None);
        let problems = resolve(
            &flags(Some(0), None, None),
            Some((Path::new("k.json"), &file)),
        )
        .unwrap_err();
        assert_eq!(
            problems,
            [
                "--max-streams-per-key 0: a stream cap must be at least 1 (0 would refuse every stream)",
                "limits.maxStreamsPerTenant 300 in k.json is more than --max-streams 256 (the default): a tenant's streams count against the total",
            ]
        );
        let problems = resolve(&flags(Some(65), None, None), None).unwrap_err();
        assert_eq!(
            problems,
            [
                "--max-streams-per-key 65 is more than --max-streams-per-tenant 64 (the default): a key's streams count against its tenant's"
            ]
        );
        let small = ConfigLimits {
            body_budget_bytes: Some(1023),
            ..ConfigLimits::default()
        };
        let problems = resolve(&small, None).unwrap_err();
        assert_eq!(
            problems,
            [
                "--body-budget-bytes 1023: the body budget must be at least 1024 bytes (it counts whole KiB)"
            ]
        );
        // Equal caps are fine: one key may take all of its tenant's, one tenant all of them.
        assert!(resolve(&flags(Some(5), Some(5), Some(5)), None).is_ok());
    }
}
