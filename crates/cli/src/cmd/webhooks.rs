//! `kindgi webhooks register|list|get|update|pause|resume|unregister|fires|take-ownership`:
//! the official CLI's commands, flags, presets and wire (platform-api.md §9, §12.3), through
//! the one API client ([`crate::api`]).
//!
//! `--preset` sets the scheme and the delivery-id header, exactly as the official CLI maps
//! them: `woocommerce` (base64 `X-WC-Webhook-Signature`, `X-WC-Webhook-Delivery-ID`),
//! `drupal-webhooks` and `github` (hex `X-Hub-Signature-256`, prefix `sha256=`,
//! `X-Drupal-Delivery` / `X-GitHub-Delivery`), `shopify` (base64 `X-Shopify-Hmac-Sha256`,
//! `X-Shopify-Webhook-Id`), `standard-webhooks`. Flag mistakes are the official CLI's plain
//! errors (exit 1).

use std::io::Write as _;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::args::json_input;
use crate::api::output::{Column, cell};
use crate::api::{ApiArgs, CliError, push, segment};

/// The presets' names, as the official CLI has them.
pub const PRESET_NAMES: &[&str] = &[
    "woocommerce",
    "drupal-webhooks",
    "github",
    "shopify",
    "standard-webhooks",
];

/// A sender's scheme: its signature, delivery id header and where to set it up.
pub fn preset(name: &str) -> Option<(Value, Option<&'static str>, &'static str)> {
    let github_style = || json!({"kind": "hmac-sha256", "encoding": "hex", "header": "X-Hub-Signature-256", "prefix": "sha256="});
    Some(match name {
        "woocommerce" => (
            json!({"kind": "hmac-sha256", "encoding": "base64", "header": "X-WC-Webhook-Signature"}),
            Some("X-WC-Webhook-Delivery-ID"),
            "In WooCommerce: Settings → Advanced → Webhooks → Add webhook. One webhook per topic (`order.created`, …); Delivery URL: the receive URL; Secret: the secret. WooCommerce never resends a delivery Kindgi refuses, and switches the webhook off after 7 in a row.",
        ),
        "drupal-webhooks" => (
            github_style(),
            Some("X-Drupal-Delivery"),
            "In Drupal's Webhooks module: add an outgoing webhook with the receive URL as its Payload URL and the secret as its Secret (it signs only with one).",
        ),
        "github" => (
            github_style(),
            Some("X-GitHub-Delivery"),
            "In GitHub: the repository's or organization's Settings → Webhooks → Add webhook; Payload URL: the receive URL; Content type: application/json; Secret: the secret.",
        ),
        "shopify" => (
            json!({"kind": "hmac-sha256", "encoding": "base64", "header": "X-Shopify-Hmac-Sha256"}),
            Some("X-Shopify-Webhook-Id"),
            "In Shopify: a webhook subscription to the receive URL; Shopify signs with the app's client secret, so store that as the secret.",
        ),
        "standard-webhooks" => (
            json!({"kind": "standard-webhooks"}),
            None,
            "In the sender: the receive URL as the endpoint, and the secret (`whsec_…`) as its signing secret.",
        ),
        _ => return None,
    })
}

fn preset_names() -> String {
    PRESET_NAMES.join("|")
}

/// How the sender signs and dedupes (register and update).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SignatureFlags {
    /// How the sender signs, by sender: woocommerce|drupal-webhooks|github|shopify|standard-webhooks.
    #[arg(long)]
    preset: Option<String>,
    /// Instead of --preset: the header that carries an HMAC-SHA256 of the raw body.
    #[arg(long = "signature-header")]
    signature_header: Option<String>,
    /// With --signature-header: `hex` or `base64`.
    #[arg(long = "signature-encoding")]
    signature_encoding: Option<String>,
    /// With --signature-header: stripped before decoding (e.g. `sha256=`).
    #[arg(long = "signature-prefix")]
    signature_prefix: Option<String>,
    /// The header whose value, with the body, dedupes deliveries (`none` on update stops).
    #[arg(long = "delivery-id-header")]
    delivery_id_header: Option<String>,
    /// The largest body it takes, in bytes (1024 to 1048576; default 262144).
    #[arg(long = "body-limit")]
    body_limit: Option<String>,
    /// Accepted deliveries a minute (1 to 6000; default 600); past it, 429.
    #[arg(long = "rate-limit")]
    rate_limit: Option<String>,
    /// A short label.
    #[arg(long)]
    label: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum WebhooksCommand {
    /// Start a flow's run when a signed request arrives. The event the flow gets is data
    /// from outside, never instructions: check it in a step before any agent.
    Register {
        /// The flow each delivery starts.
        #[arg(long)]
        flow: Option<String>,
        /// The flow version.
        #[arg(long = "flow-version")]
        flow_version: Option<String>,
        /// The signing secret's name (or the name --generate-secret stores it under).
        #[arg(long)]
        secret: Option<String>,
        /// Make a new signing secret, store it as --secret in the project, show it once.
        #[arg(long = "generate-secret")]
        generate_secret: bool,
        /// The flow's input on every delivery, in place of the event (JSON or `@<file>`).
        #[arg(long)]
        input: Option<String>,
        /// The trigger's project, by id (default: the tenant's Default project).
        #[arg(long)]
        project: Option<String>,
        /// A service account, by id: the trigger's owner instead of you.
        #[arg(long = "run-as")]
        run_as: Option<String>,
        #[command(flatten)]
        signing: SignatureFlags,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List webhook triggers.
    List {
        #[arg(long)]
        project: Option<String>,
        /// Only `active` or only `paused` triggers.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        limit: Option<String>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Fetch a webhook trigger, with its receive URL.
    Get {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change a webhook trigger: its flow version, input, secret, scheme, delivery-id header
    /// or limits. Its flow stays.
    Update {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[arg(long = "flow-version")]
        flow_version: Option<String>,
        #[arg(long)]
        input: Option<String>,
        /// Verify with another secret, by name.
        #[arg(long)]
        secret: Option<String>,
        #[command(flatten)]
        signing: SignatureFlags,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Pause a webhook trigger: deliveries are taken, recorded as skipped, start nothing.
    Pause {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Resume a paused webhook trigger.
    Resume {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Unregister a webhook trigger: its receive URL answers 410 to signed deliveries.
    Unregister {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// A webhook trigger's deliveries, newest first.
    Fires {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[arg(long)]
        limit: Option<String>,
        #[arg(long)]
        cursor: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Become a webhook trigger's owner (or, with --run-as, make a service account it).
    TakeOwnership {
        #[arg(value_name = "TRIGGER_ID")]
        id: Option<String>,
        #[arg(long = "run-as")]
        run_as: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
}

pub async fn run(command: WebhooksCommand) -> ExitCode {
    let (name, api) = match &command {
        WebhooksCommand::Register { api, .. } => ("webhooks register", api.clone()),
        WebhooksCommand::List { api, .. } => ("webhooks list", api.clone()),
        WebhooksCommand::Get { api, .. } => ("webhooks get", api.clone()),
        WebhooksCommand::Update { api, .. } => ("webhooks update", api.clone()),
        WebhooksCommand::Pause { api, .. } => ("webhooks pause", api.clone()),
        WebhooksCommand::Resume { api, .. } => ("webhooks resume", api.clone()),
        WebhooksCommand::Unregister { api, .. } => ("webhooks unregister", api.clone()),
        WebhooksCommand::Fires { api, .. } => ("webhooks fires", api.clone()),
        WebhooksCommand::TakeOwnership { api, .. } => ("webhooks take-ownership", api.clone()),
    };
    match dispatch(command, name, &api).await {
        Ok(code) => code,
        Err(e) => e.report(name, api.quiet, api.verbose),
    }
}

fn trigger_id(id: Option<String>) -> Result<String, CliError> {
    id.filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::Usage("Missing required argument: trigger-id".into()))
}

fn integer(flag: &str, raw: &Option<String>) -> Result<Option<i64>, CliError> {
    match raw {
        None => Ok(None),
        Some(s) => s
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| CliError::Local(format!("--{flag} must be an integer"))),
    }
}

/// The scheme, delivery-id header and limits fields of `flags` (the official CLI's
/// `signatureFields` + `limitFields`). `(fields, preset's note)`.
pub fn signature_fields(
    flags: &SignatureFlags,
) -> Result<(Map<String, Value>, Option<&'static str>), CliError> {
    let mut out = Map::new();
    let mut note = None;
    let delivery = flags.delivery_id_header.as_ref().map(|d| {
        if d == "none" {
            Value::Null
        } else {
            Value::String(d.clone())
        }
    });
    let extra_signing = flags.signature_header.is_some()
        || flags.signature_encoding.is_some()
        || flags.signature_prefix.is_some();
    if let Some(preset) = &flags.preset {
        if extra_signing {
            return Err(CliError::Local(
                "--preset sets the scheme: not with --signature-header/-encoding/-prefix".into(),
            ));
        }
        let Some((signature, header, where_)) = self::preset(preset) else {
            return Err(CliError::Local(format!(
                "--preset must be one of {}",
                preset_names()
            )));
        };
        out.insert("signature".into(), signature);
        if let Some(h) = header {
            out.insert("deliveryIdHeader".into(), json!(h));
        }
        note = Some(where_);
    } else if let Some(header) = &flags.signature_header {
        let encoding = match flags.signature_encoding.as_deref() {
            Some(e @ ("hex" | "base64")) => e,
            _ => {
                return Err(CliError::Local(
                    "--signature-header needs --signature-encoding=hex|base64".into(),
                ));
            }
        };
        let mut s = json!({"kind": "hmac-sha256", "encoding": encoding, "header": header});
        if let (Some(p), Some(o)) = (&flags.signature_prefix, s.as_object_mut()) {
            o.insert("prefix".into(), json!(p));
        }
        out.insert("signature".into(), s);
    } else if extra_signing {
        return Err(CliError::Local(
            "--signature-encoding and --signature-prefix go with --signature-header".into(),
        ));
    }
    if let Some(d) = delivery {
        out.insert("deliveryIdHeader".into(), d);
    }
    if let Some(n) = integer("body-limit", &flags.body_limit)? {
        out.insert("bodyLimitBytes".into(), json!(n));
    }
    if let Some(n) = integer("rate-limit", &flags.rate_limit)? {
        out.insert("rateLimitPerMinute".into(), json!(n));
    }
    if let Some(l) = &flags.label {
        out.insert("label".into(), json!(l));
    }
    Ok((out, note))
}

/// Where to point the sender, or why there is nothing to point it at yet.
fn receive_note(t: &Value) -> String {
    match t.get("receiveUrl").and_then(Value::as_str) {
        Some(url) => format!("  Receive URL (the sender posts here): {url}"),
        None => format!(
            "  No receive URL: this deployment has no public URL configured. Set KINDGI_PUBLIC_URL on the runtime to the address your sender reaches it at, then `kindgi webhooks get {}` shows it.",
            cell(t, "/triggerId")
        ),
    }
}

fn note(lines: &[String]) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\n{}\n", lines.join("\n"));
}

#[allow(clippy::too_many_arguments)]
async fn register(
    name: &str,
    api: &ApiArgs,
    flow: Option<String>,
    flow_version: Option<String>,
    secret: Option<String>,
    generate: bool,
    input: Option<String>,
    project: Option<String>,
    run_as: Option<String>,
    signing: &SignatureFlags,
) -> Result<(), CliError> {
    let (Some(flow), Some(version)) = (flow, flow_version) else {
        return Err(CliError::Local(
            "--flow=<id> and --flow-version=<v> are required".into(),
        ));
    };
    let Some(secret) = secret else {
        return Err(CliError::Local("--secret=<name> is required".into()));
    };
    let (fields, where_) = signature_fields(signing)?;
    let mut body = Map::new();
    body.insert("flowId".into(), json!(flow));
    body.insert("flowVersion".into(), json!(version));
    body.insert("hmacSecretName".into(), json!(secret));
    if generate {
        body.insert("generateSecret".into(), json!(true));
    }
    for (k, v) in fields {
        // A register never sends `deliveryIdHeader: null`.
        if !(k == "deliveryIdHeader" && v.is_null()) {
            body.insert(k, v);
        }
    }
    if let Some(i) = input {
        body.insert("config".into(), json!({"input": json_input("input", &i)?}));
    }
    if let Some(p) = project {
        body.insert("projectId".into(), json!(p));
    }
    if let Some(r) = &run_as {
        body.insert("runAsServiceAccountId".into(), json!(r));
    }
    let t = api
        .connect(name)?
        .post("/v1/webhooks", &Value::Object(body), None)
        .await?;
    api.output().json(&t);
    let mut lines = vec![format!(
        "  Registered webhook trigger {}: each signed delivery starts {flow}@{version}.",
        cell(&t, "/triggerId")
    )];
    if run_as.is_some() {
        lines.push(format!(
            "  Its runs act as service account {} ({}).",
            cell(&t, "/owner/id"),
            cell(&t, "/owner/kind")
        ));
    }
    lines.push(receive_note(&t));
    if let Some(s) = t.get("signingSecret").and_then(Value::as_str) {
        lines.push(format!(
            "  Signing secret (stored as {secret} in project {}; shown this once): {s}",
            cell(&t, "/projectId")
        ));
    }
    if t.get("hmacSecretScope").is_some_and(Value::is_null) {
        lines.push(format!(
            "  Nothing is read for {secret} until a project admin names it again (`kindgi webhooks update {} --secret={secret}`). Or register with --generate-secret, which stores a new one in the project.",
            cell(&t, "/triggerId")
        ));
    }
    if let Some(w) = where_ {
        lines.push(format!("  {w}"));
    }
    if !api.quiet {
        note(&lines);
    }
    Ok(())
}

async fn dispatch(
    command: WebhooksCommand,
    name: &str,
    api: &ApiArgs,
) -> Result<ExitCode, CliError> {
    let out = api.output();
    match command {
        WebhooksCommand::Register {
            flow,
            flow_version,
            secret,
            generate_secret,
            input,
            project,
            run_as,
            signing,
            ..
        } => {
            register(
                name,
                api,
                flow,
                flow_version,
                secret,
                generate_secret,
                input,
                project,
                run_as,
                &signing,
            )
            .await?;
        }
        WebhooksCommand::List {
            project,
            status,
            limit,
            cursor,
            ..
        } => {
            if status
                .as_deref()
                .is_some_and(|s| s != "active" && s != "paused")
            {
                return Err(CliError::Local(
                    "--status must be `active` or `paused`".into(),
                ));
            }
            let mut q = Vec::new();
            push(&mut q, "limit", limit);
            push(&mut q, "cursor", cursor);
            push(&mut q, "status", status);
            push(&mut q, "projectId", project);
            out.page(
                &api.connect(name)?.get("/v1/webhooks", q).await?,
                TRIGGER_COLUMNS,
            );
        }
        WebhooksCommand::Get { id, .. } => {
            let path = format!("/v1/webhooks/{}", segment(&trigger_id(id)?));
            let t = api.connect(name)?.get(&path, vec![]).await?;
            out.json(&t);
            if !api.quiet {
                note(&[receive_note(&t)]);
            }
        }
        WebhooksCommand::Update {
            id,
            flow_version,
            input,
            secret,
            signing,
            ..
        } => {
            let path = format!("/v1/webhooks/{}", segment(&trigger_id(id)?));
            let mut body = Map::new();
            if let Some(v) = flow_version {
                body.insert("flowVersion".into(), json!(v));
            }
            if let Some(i) = input {
                body.insert("config".into(), json!({"input": json_input("input", &i)?}));
            }
            if let Some(s) = secret {
                body.insert("hmacSecretName".into(), json!(s));
            }
            body.extend(signature_fields(&signing)?.0);
            out.json(
                &api.connect(name)?
                    .patch(&path, &Value::Object(body))
                    .await?,
            );
        }
        WebhooksCommand::Pause { id, .. } => {
            let t = lifecycle(api, name, &trigger_id(id)?, "pause").await?;
            out.json(&t);
            if !api.quiet {
                note(&["  Paused. Deliveries are taken and recorded as skipped (`kindgi webhooks fires`), and start nothing: their events are dropped. WooCommerce never resends them, so resuming does not bring them back.".to_owned()]);
            }
        }
        WebhooksCommand::Resume { id, .. } => {
            out.json(&lifecycle(api, name, &trigger_id(id)?, "resume").await?);
        }
        WebhooksCommand::Unregister { id, .. } => {
            out.json(&lifecycle(api, name, &trigger_id(id)?, "unregister").await?);
        }
        WebhooksCommand::Fires {
            id, limit, cursor, ..
        } => {
            let path = format!("/v1/webhooks/{}/fires", segment(&trigger_id(id)?));
            let mut q = Vec::new();
            push(&mut q, "limit", limit);
            push(&mut q, "cursor", cursor);
            out.page(&api.connect(name)?.get(&path, q).await?, FIRE_COLUMNS);
        }
        WebhooksCommand::TakeOwnership { id, run_as, .. } => {
            let path = format!("/v1/webhooks/{}/owner", segment(&trigger_id(id)?));
            let body = match run_as {
                Some(r) => json!({"runAsServiceAccountId": r}),
                None => json!({}),
            };
            let t = api.connect(name)?.post(&path, &body, None).await?;
            out.json(&t);
            if !api.quiet {
                note(&[format!(
                    "  Trigger {} now runs as {} ({}), from the next delivery.",
                    cell(&t, "/triggerId"),
                    t.pointer("/owner/displayName")
                        .and_then(Value::as_str)
                        .map_or_else(|| cell(&t, "/owner/id"), str::to_owned),
                    cell(&t, "/owner/kind")
                )]);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `POST /v1/webhooks/{id}/<action>` with `{}`.
async fn lifecycle(api: &ApiArgs, name: &str, id: &str, action: &str) -> Result<Value, CliError> {
    let path = format!("/v1/webhooks/{}/{action}", segment(id));
    api.connect(name)?
        .post(&path, &Value::Object(Map::new()), None)
        .await
}

const TRIGGER_COLUMNS: &[Column] = &[
    ("ID", |t| cell(t, "/triggerId")),
    ("FLOW", |t| {
        format!("{}@{}", cell(t, "/flowId"), cell(t, "/flowVersion"))
    }),
    ("SIGNED", |t| match cell(t, "/signature/kind").as_str() {
        "standard-webhooks" => "standard-webhooks".to_owned(),
        _ => {
            let prefix = t
                .pointer("/signature/prefix")
                .and_then(Value::as_str)
                .map(|p| format!(" ({p}…)"))
                .unwrap_or_default();
            format!(
                "{} {}{prefix}",
                cell(t, "/signature/encoding"),
                cell(t, "/signature/header")
            )
        }
    }),
    ("STATUS", |t| cell(t, "/status")),
    ("OWNER", |t| {
        t.pointer("/owner/displayName")
            .and_then(Value::as_str)
            .map_or_else(|| cell(t, "/owner/id"), str::to_owned)
    }),
    ("LAST", |t| cell(t, "/lastFiredAt")),
    ("LABEL", |t| cell(t, "/label")),
];

const FIRE_COLUMNS: &[Column] = &[
    ("RECEIVED", |f| cell(f, "/firedAt")),
    ("OUTCOME", |f| cell(f, "/outcome")),
    ("RUN", |f| cell(f, "/runId")),
    ("NOTE", |f| cell(f, "/detail")),
    ("REPEATS", |f| cell(f, "/duplicates")),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_map_as_the_official_cli_does() {
        let flags = SignatureFlags {
            preset: Some("github".into()),
            ..SignatureFlags::default()
        };
        let (f, note) = signature_fields(&flags).unwrap();
        assert_eq!(
            Value::Object(f),
            json!({"signature": {"kind": "hmac-sha256", "encoding": "hex", "header": "X-Hub-Signature-256", "prefix": "sha256="}, "deliveryIdHeader": "X-GitHub-Delivery"})
        );
        assert!(note.is_some());
        let bad = SignatureFlags {
            preset: Some("github".into()),
            signature_header: Some("X".into()),
            ..SignatureFlags::default()
        };
        assert!(signature_fields(&bad).is_err());
        let none = SignatureFlags {
            delivery_id_header: Some("none".into()),
            ..SignatureFlags::default()
        };
        assert_eq!(
            Value::Object(signature_fields(&none).unwrap().0),
            json!({"deliveryIdHeader": null})
        );
    }
}
