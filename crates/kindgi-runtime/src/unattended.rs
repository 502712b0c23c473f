//! The unattended rule (seed 000 `needsApprovalWhenUnattended`, `needsSpec.connections`;
//! seed 004 "mutating: false doesn't lift every wait"; platform-api.md §13): which tool calls
//! need a person's yes in a run no person started, and why. One pure function,
//! [`approval_required`]; an agent step's gate turns its answer into an `always_ask`
//! approval, a flow's tool step into the failure [`refusal`] words.
//!
//! Only a run a person started is attended (`startedBy: person`); a run a key, a schedule,
//! a webhook, an event or a mail started — or one stored before `startedBy` was recorded —
//! is not, and its child runs inherit that. In such a run a call needs a person's yes when
//! (in this order, the first that holds is the reason):
//! - (a) the tool declares `needsApprovalWhenUnattended: true`;
//! - (b) it declares a connection `as: "person"` in `needsSpec.connections` (a person's
//!   account acts, reads included, whatever `mutating` says);
//! - (c) a mail started the run and the tool isn't `mutating: false`;
//! - (d) a mail started the run and the tool declares a connection of the run's own mailbox
//!   (the same app and `as` as the mail trigger's address).
//!
//! A trigger's `toolsAllowedUnattended` naming the tool (exactly) lifts all four, in that
//! trigger's runs only (`RunMeta.unattended`, inherited by their child runs).

use kindgi_core::StartedBy;
use kindgi_core::run::RunMeta;
use kindgi_spec::{ConnectionOwner, ToolManifest};

/// The code of a flow tool step refused by the rule (its `step.failed.code`, and the
/// failure message's `<code>: ` prefix).
pub const APPROVAL_REQUIRED_CODE: &str = "unattended-approval-required";

/// Why a call needs a person's yes in a run no person started: the rule that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnattendedReason {
    /// (a) The tool declares `needsApprovalWhenUnattended: true`.
    Declared,
    /// (b) The tool acts with a person's connection (`needsSpec.connections.<name>.as:
    /// "person"`), reads included.
    PersonConnection { connection: String },
    /// (c) A mail started the run and the tool isn't `mutating: false`.
    MailNotReadOnly,
    /// (d) A mail started the run and the tool acts with the run's own mailbox (a
    /// connection of the mailbox's app and owner).
    MailMailbox { connection: String },
}

impl UnattendedReason {
    /// The rule's name, as data (an approval's `subjectRef.unattended.rule`, a step
    /// failure's `rule`).
    pub fn rule(&self) -> &'static str {
        match self {
            UnattendedReason::Declared => "needsApprovalWhenUnattended",
            UnattendedReason::PersonConnection { .. } => "person-connection",
            UnattendedReason::MailNotReadOnly => "mail-not-read-only",
            UnattendedReason::MailMailbox { .. } => "mail-mailbox",
        }
    }

    /// The rule in words, for a person reading an approval or a failure.
    pub fn explain(&self) -> String {
        match self {
            UnattendedReason::Declared => "needsApprovalWhenUnattended".to_owned(),
            UnattendedReason::PersonConnection { connection } => format!(
                "it acts with connection \"{connection}\", a person's (needsSpec.connections, as: person), reads included"
            ),
            UnattendedReason::MailNotReadOnly => {
                "a mail started this run and the tool isn't mutating: false".to_owned()
            }
            UnattendedReason::MailMailbox { connection } => format!(
                "a mail started this run and the tool acts with connection \"{connection}\", the run's own mailbox"
            ),
        }
    }
}

/// Whether a call of `tool` in a run with `meta` needs a person's yes, and why; `None` when
/// the run is attended, when its trigger's `toolsAllowedUnattended` names the tool, or when
/// no rule holds.
pub fn approval_required(meta: &RunMeta, tool: &ToolManifest) -> Option<UnattendedReason> {
    if meta.attended() || meta.unattended.allows(&tool.id) {
        return None;
    }
    if tool.needs_approval_when_unattended() {
        return Some(UnattendedReason::Declared);
    }
    let connections = tool
        .needs_spec
        .as_ref()
        .and_then(|n| n.connections.as_ref());
    let person = connections.and_then(|c| {
        c.iter()
            .find(|(_, need)| need.as_ == ConnectionOwner::Person)
            .map(|(name, _)| name.clone())
    });
    if let Some(connection) = person {
        return Some(UnattendedReason::PersonConnection { connection });
    }
    if meta.started_by != Some(StartedBy::Mail) {
        return None;
    }
    if tool.mutating != Some(false) {
        return Some(UnattendedReason::MailNotReadOnly);
    }
    let mailbox = meta.unattended.mailbox.as_ref()?;
    connections
        .and_then(|c| {
            c.iter()
                .find(|(_, need)| need.app == mailbox.app && need.as_ == mailbox.whose)
        })
        .map(|(name, _)| UnattendedReason::MailMailbox {
            connection: name.clone(),
        })
}

/// Who started the run, in words (`schedule`, …; a run stored before `startedBy` was
/// recorded has none).
pub fn started_by_words(meta: &RunMeta) -> String {
    match meta.started_by {
        Some(s) => s.as_str().to_owned(),
        None => "nobody recorded (a run stored before startedBy was)".to_owned(),
    }
}

/// The failure message of a flow tool step calling `tool_id` for `reason`.
pub fn refusal(tool_id: &str, reason: &UnattendedReason, meta: &RunMeta) -> String {
    format!(
        "{APPROVAL_REQUIRED_CODE}: tool \"{tool_id}\" needs a person's yes in a run no person started ({}); this run was started by {}: call it from an agent step (which asks a reviewer), or list it in the trigger's toolsAllowedUnattended",
        reason.explain(),
        started_by_words(meta)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kindgi_core::{Mailbox, Unattended};
    use serde_json::{Value, json};

    fn tool(extra: Value) -> ToolManifest {
        let mut m = json!({"id": "acme.send", "description": "d", "version": "1.0.0",
            "input": {"type": "object"}, "output": {}});
        if let (Value::Object(o), Value::Object(e)) = (&mut m, extra) {
            o.extend(e);
        }
        serde_json::from_value(m).unwrap()
    }

    fn conn(app: &str, whose: &str) -> Value {
        json!({"app": app, "permissions": ["x.read"], "as": whose})
    }

    fn run(by: Option<StartedBy>) -> RunMeta {
        RunMeta {
            started_by: by,
            ..RunMeta::default()
        }
    }

    fn mail_run(app: &str, whose: ConnectionOwner) -> RunMeta {
        RunMeta {
            started_by: Some(StartedBy::Mail),
            unattended: Unattended {
                tools_allowed: vec![],
                mailbox: Some(Mailbox {
                    address: "in@acme.test".into(),
                    app: app.into(),
                    whose,
                }),
            },
            ..RunMeta::default()
        }
    }

    const UNATTENDED: [Option<StartedBy>; 5] = [
        Some(StartedBy::Key),
        Some(StartedBy::Schedule),
        Some(StartedBy::Webhook),
        Some(StartedBy::Event),
        None,
    ];

    #[test]
    fn a_declared_tool_needs_a_yes_in_every_unattended_run_and_none_in_a_persons() {
        let t = tool(json!({"needsApprovalWhenUnattended": true, "mutating": false}));
        for by in UNATTENDED {
            assert_eq!(
                approval_required(&run(by), &t),
                Some(UnattendedReason::Declared),
                "{by:?}"
            );
        }
        assert_eq!(
            approval_required(&mail_run("google", ConnectionOwner::Company), &t),
            Some(UnattendedReason::Declared)
        );
        assert_eq!(approval_required(&run(Some(StartedBy::Person)), &t), None);
    }

    #[test]
    fn a_persons_connection_counts_as_declaring_it_reads_included() {
        let t = tool(
            json!({"mutating": false, "needsApprovalWhenUnattended": false,
            "needsSpec": {"connections": {"files": conn("dropbox", "company"),
                                          "inbox": conn("google", "person")}}}),
        );
        let want = Some(UnattendedReason::PersonConnection {
            connection: "inbox".into(),
        });
        for by in UNATTENDED {
            assert_eq!(approval_required(&run(by), &t), want, "{by:?}");
        }
        assert_eq!(approval_required(&run(Some(StartedBy::Person)), &t), None);
    }

    #[test]
    fn a_company_connection_or_nothing_declared_needs_no_yes_outside_mail_runs() {
        for t in [
            tool(json!({})),
            tool(json!({"mutating": true})),
            tool(json!({"mutating": false,
                "needsSpec": {"connections": {"files": conn("google", "company")}}})),
        ] {
            for by in UNATTENDED {
                assert_eq!(approval_required(&run(by), &t), None, "{by:?}");
            }
        }
    }

    #[test]
    fn in_a_mail_run_a_tool_that_isnt_read_only_needs_a_yes() {
        let meta = mail_run("google", ConnectionOwner::Company);
        for t in [tool(json!({})), tool(json!({"mutating": true}))] {
            assert_eq!(
                approval_required(&meta, &t),
                Some(UnattendedReason::MailNotReadOnly)
            );
        }
        assert_eq!(
            approval_required(&run(Some(StartedBy::Mail)), &tool(json!({}))),
            Some(UnattendedReason::MailNotReadOnly),
            "a mail run without a recorded mailbox"
        );
        assert_eq!(
            approval_required(&meta, &tool(json!({"mutating": false}))),
            None
        );
    }

    #[test]
    fn in_a_mail_run_a_read_of_the_runs_own_mailbox_needs_a_yes() {
        let meta = mail_run("google", ConnectionOwner::Company);
        let reads = |app: &str, whose: &str| {
            tool(json!({"mutating": false,
                "needsSpec": {"connections": {"box": conn(app, whose)}}}))
        };
        assert_eq!(
            approval_required(&meta, &reads("google", "company")),
            Some(UnattendedReason::MailMailbox {
                connection: "box".into()
            })
        );
        // Another app, or the same app's other owner, is not the run's mailbox.
        assert_eq!(approval_required(&meta, &reads("github", "company")), None);
        assert_eq!(
            approval_required(&run(Some(StartedBy::Mail)), &reads("google", "company")),
            None,
            "no mailbox recorded"
        );
        // A person's mailbox is a person's connection first (rule b).
        let personal = mail_run("google", ConnectionOwner::Person);
        assert_eq!(
            approval_required(&personal, &reads("google", "person")),
            Some(UnattendedReason::PersonConnection {
                connection: "box".into()
            })
        );
        // The mailbox rule applies in mail runs only.
        assert_eq!(
            approval_required(&run(Some(StartedBy::Schedule)), &reads("google", "company")),
            None
        );
    }

    #[test]
    fn tools_allowed_unattended_lifts_every_rule_for_the_named_tool_only() {
        let allowed = |mut meta: RunMeta| {
            meta.unattended.tools_allowed = vec!["acme.send".into()];
            meta
        };
        let declared = tool(json!({"needsApprovalWhenUnattended": true}));
        let personal =
            tool(json!({"needsSpec": {"connections": {"me": conn("google", "person")}}}));
        let mail = allowed(mail_run("google", ConnectionOwner::Company));
        for t in [&declared, &personal] {
            assert_eq!(
                approval_required(&allowed(run(Some(StartedBy::Schedule))), t),
                None
            );
            assert_eq!(approval_required(&mail, t), None);
        }
        assert_eq!(approval_required(&mail, &tool(json!({}))), None);
        let mut other = declared.clone();
        other.id = "acme.other".into();
        assert_eq!(
            approval_required(&allowed(run(Some(StartedBy::Webhook))), &other),
            Some(UnattendedReason::Declared)
        );
    }

    #[test]
    fn a_refusal_names_the_tool_the_rule_and_who_started_the_run() {
        let meta = run(Some(StartedBy::Schedule));
        assert_eq!(
            refusal("acme.send", &UnattendedReason::Declared, &meta),
            "unattended-approval-required: tool \"acme.send\" needs a person's yes in a run no person started (needsApprovalWhenUnattended); this run was started by schedule: call it from an agent step (which asks a reviewer), or list it in the trigger's toolsAllowedUnattended"
        );
        let why = UnattendedReason::PersonConnection {
            connection: "inbox".into(),
        };
        assert_eq!(why.rule(), "person-connection");
        assert!(refusal("acme.read", &why, &run(None)).contains("connection \"inbox\""));
        for (r, name) in [
            (UnattendedReason::Declared, "needsApprovalWhenUnattended"),
            (UnattendedReason::MailNotReadOnly, "mail-not-read-only"),
            (
                UnattendedReason::MailMailbox {
                    connection: "b".into(),
                },
                "mail-mailbox",
            ),
        ] {
            assert_eq!(r.rule(), name);
        }
    }
}
