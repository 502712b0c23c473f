//! Mail triggers (beyond the reference, which has none; seed 000's "a run a mail started"):
//! an address on this server whose inbound mail starts a flow run for the person who sent it.
//! A [`MailTrigger`] is the record (`/v1/mail-triggers`), a [`MailFire`] one inbound mail's
//! fate (`…/fires`), modelled on the reference's webhook triggers and fires (platform-api.md
//! §9): an owner, a status with a reason, pause/resume/unregister, fires with outcomes.
//!
//! What is particular to mail: the address is unique on the server among live triggers (the
//! recipient finds the trigger); `senders` maps a `From` address to the person (a user id) a
//! run may act for — only a sender whose DMARC passes aligned is looked up there, so a forged
//! `From` never acts for anyone; and `mailbox` is the connection the address is, lent to the
//! run as its own mailbox ([`crate::trigger::Mailbox`]).

use kindgi_spec::tool::ConnectionOwner;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::trigger::{FireOutcome, Mailbox, TriggerOwner, TriggerStatus};

/// One mail trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct MailTrigger {
    /// A UUID.
    pub trigger_id: String,
    /// The tenant's name (as keys carry it).
    pub tenant: String,
    /// The address mail comes to, lower-case (`local@domain`); unique among live triggers.
    pub address: String,
    pub project_id: String,
    pub config: MailTriggerConfig,
    pub status: TriggerStatus,
    /// Why it is paused, when the server paused it (5 failed starts in a row).
    pub status_reason: Option<String>,
    /// Failed starts since the last one that started.
    pub consecutive_failures: u32,
    /// Unix milliseconds.
    pub last_fired_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl MailTrigger {
    /// The mailbox a run of this trigger gets: this address, as the configured connection.
    pub fn mailbox(&self) -> Mailbox {
        Mailbox {
            address: self.address.clone(),
            app: self.config.mailbox.app.clone(),
            whose: self.config.mailbox.whose,
        }
    }

    /// The person `from` (an address, any case) maps to, when `senders` names it.
    pub fn person_for(&self, from: &str) -> Option<&str> {
        self.config
            .senders
            .iter()
            .find(|s| s.address.eq_ignore_ascii_case(from))
            .map(|s| s.user_id.as_str())
    }
}

/// What an admin sets on a mail trigger (stored as one JSON document beside the columns
/// the store queries by).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailTriggerConfig {
    /// What it runs (`flowId`+`flowVersion` or `agentId`+`agentVersion?` in the document).
    #[serde(flatten)]
    pub target: MailTarget,
    pub owner: TriggerOwner,
    /// The key (`tokenId`) the owner registered the trigger with, re-checked at every fire
    /// (revoked, expired: `refused`). Never on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_key_id: Option<String>,
    /// The people the trigger may act for, by the address their mail comes from.
    pub senders: Vec<MailSender>,
    pub mailbox: MailboxConnection,
    /// Fixed input fields; the mail then goes under `mail` (absent: the mail is the input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_allowed_unattended: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Mails a minute the trigger takes (the webhook receiver's limiter counts them).
    #[serde(default = "default_rate_limit")]
    pub rate_limit_per_minute: u32,
}

/// `rateLimitPerMinute` when none was set (a webhook trigger's default too).
pub const DEFAULT_RATE_LIMIT: u32 = crate::webhook::DEFAULT_RATE_LIMIT;

fn default_rate_limit() -> u32 {
    DEFAULT_RATE_LIMIT
}

/// What a mail trigger runs: a flow at an exact version (the mail its input, or under `mail`
/// beside `config.input`), or an agent turn whose `userMessage` is built from the mail. Kept
/// flattened in the config document, so documents from before agent targets read as flows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MailTarget {
    #[serde(rename_all = "camelCase")]
    Flow {
        flow_id: String,
        flow_version: String,
    },
    /// At `agent_version`, else the version registered when the mail comes.
    #[serde(rename_all = "camelCase")]
    Agent {
        agent_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_version: Option<String>,
    },
}

/// A `From` address and the person (user id) mail from it acts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailSender {
    /// Lower-case.
    pub address: String,
    pub user_id: String,
}

/// The connection the trigger's address is: its app and whose it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MailboxConnection {
    pub app: String,
    pub whose: ConnectionOwner,
}

/// One inbound mail to a trigger and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailFire {
    /// A UUID.
    pub fire_id: String,
    pub tenant: String,
    pub trigger_id: String,
    /// Unix milliseconds.
    pub fired_at: i64,
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    /// Why it was refused, skipped or failed (`dmarc-fail`, `sender-unknown`, `paused`, …).
    pub detail: Option<String>,
    /// The `From` address, as the message gave it (data from outside; clipped).
    pub from: Option<String>,
    /// The `Message-ID`, as the message gave it (clipped).
    pub message_id: Option<String>,
    /// What a fire is deduplicated on: a hash of the `Message-ID`, set only on a fire whose
    /// sender was authenticated (so a forged mail cannot use up a genuine one's id).
    pub dedupe_key: Option<String>,
    /// Repeats of the same message after this fire.
    pub duplicates: u32,
    pub last_duplicate_at: Option<i64>,
}

/// What recording a fire did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FireRecorded {
    /// A new fire (this one).
    New,
    /// The trigger already has a fire of this message: that one (its `duplicates` counted).
    Duplicate(Box<MailFire>),
}

/// A page of a tenant's mail triggers: oldest first, after `(created_at, trigger_id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MailTriggerQuery {
    pub tenant: String,
    pub status: Option<TriggerStatus>,
    pub project_id: Option<String>,
    pub after: Option<(i64, String)>,
    pub limit: usize,
}

/// A page of one trigger's fires: newest first, before `(fired_at, fire_id)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MailFireQuery {
    pub tenant: String,
    pub trigger_id: String,
    pub before: Option<(i64, String)>,
    pub limit: usize,
}

/// How a fire ended (after its run was started, or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireEnd {
    pub outcome: FireOutcome,
    pub run_id: Option<String>,
    pub detail: Option<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn documents_from_before_agent_targets_read_as_flows() {
        let old = serde_json::json!({
            "flowId": "pack.answer", "flowVersion": "1.0.0",
            "owner": {"kind": "user", "id": "admin"},
            "senders": [], "mailbox": {"app": "google", "whose": "company"}
        });
        let c: MailTriggerConfig = serde_json::from_value(old).unwrap();
        assert_eq!(
            c.target,
            MailTarget::Flow {
                flow_id: "pack.answer".into(),
                flow_version: "1.0.0".into()
            }
        );
        assert_eq!(c.rate_limit_per_minute, DEFAULT_RATE_LIMIT);
        assert_eq!(c.owner_key_id, None);
        let agent = MailTriggerConfig {
            target: MailTarget::Agent {
                agent_id: "pack.helper".into(),
                agent_version: None,
            },
            owner_key_id: Some("k".into()),
            ..c
        };
        let text = serde_json::to_value(&agent).unwrap();
        assert_eq!(text["agentId"], "pack.helper");
        assert!(text.get("flowId").is_none() && text.get("agentVersion").is_none());
        let back: MailTriggerConfig = serde_json::from_value(text).unwrap();
        assert_eq!(back, agent);
    }
}
