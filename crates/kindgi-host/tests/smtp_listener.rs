//! `kindgi dev`'s SMTP listener end to end over loopback, with raw SMTP lines as any client
//! sends them: the greeting, `EHLO` (announcing `SIZE`), the order rules (`MAIL` before
//! `EHLO` is `503`), `RCPT` to an address no trigger has is `550`, `NOOP`, `RSET`, `VRFY`; a
//! DKIM-signed message (offline resolver, key generated here) to a trigger's address
//! through `DATA` (dot-stuffed) starts a run `startedBy: mail` for the mapped person; a
//! message over the size limit is `552`; a command line over 512 octets is `500` and ends the
//! session; `QUIT` is `221`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kindgi_api::AppState;
use kindgi_api::routes::mail_sender::SenderCheck;
use kindgi_core::mail_trigger::MailFireQuery;
use kindgi_core::mail_trigger::{
    MailSender, MailTarget, MailTrigger, MailTriggerConfig, MailboxConnection,
};
use kindgi_core::ports::MailTriggerStore;
use kindgi_core::trigger::{FireOutcome, OwnerKind, StartedBy, TriggerOwner, TriggerStatus};
use kindgi_host::smtp::{SmtpConfig, SmtpListener};
use kindgi_runtime::Runtime;
use kindgi_spec::tool::ConnectionOwner;
use kindgi_store::DatabaseKind;
use kindgi_store::mail_triggers::MailTriggerSql;
use kindgi_store::testing::TestDatabase;
use kindgi_tools::{HandlerError, Tool};
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

struct Client {
    read: BufReader<tokio::net::tcp::OwnedReadHalf>,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: std::net::SocketAddr) -> (Client, String) {
        let (r, w) = TcpStream::connect(addr).await.unwrap().into_split();
        let mut c = Client {
            read: BufReader::new(r),
            write: w,
        };
        let greeting = c.reply().await;
        (c, greeting)
    }

    /// A whole (possibly multi-line) reply.
    async fn reply(&mut self) -> String {
        let mut all = String::new();
        loop {
            let mut line = String::new();
            if self.read.read_line(&mut line).await.unwrap() == 0 {
                return all;
            }
            let last = line.as_bytes().get(3) != Some(&b'-');
            all.push_str(&line);
            if last {
                return all;
            }
        }
    }

    async fn say(&mut self, line: &str) -> String {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\r\n").await.unwrap();
        self.reply().await
    }
}

#[tokio::test]
async fn a_signed_mail_over_smtp_starts_a_run() {
    let t = TestDatabase::new(DatabaseKind::Sqlite).await.unwrap();
    let rt = Runtime::over(t.db.ports()).build();
    let echo = Tool::define("acme.echo")
        .version("1.0.0")
        .description("echoes")
        .input(json!({"type": "object"}))
        .output(json!({"type": "object"}))
        .handler(|input: Value, _ctx| async move { Ok::<Value, HandlerError>(input) })
        .build()
        .unwrap();
    rt.tools().insert_tool(echo);
    rt.flows()
        .insert_json(
            &json!({"id": "acme.answer", "version": "1.0.0",
                "nodes": [{"id": "echo", "kind": "tool", "ref": "acme.echo"}],
                "edges": [{"id": "e1", "from": "$start", "to": "echo"},
                          {"id": "e2", "from": "echo", "to": "$end"}]})
            .to_string(),
        )
        .unwrap();
    let key = Ed25519Key::generate_pkcs8().unwrap();
    let public = Ed25519Key::from_pkcs8_der(&key).unwrap().public_key();
    let check = SenderCheck::offline("kindgi-dev.localhost").unwrap();
    check
        .preload_txt(
            "sel._domainkey.example.test",
            &format!("v=DKIM1; k=ed25519; p={}", STANDARD.encode(public)),
        )
        .unwrap();
    check
        .preload_txt("example.test", "v=spf1 ip4:127.0.0.1 -all")
        .unwrap();
    check
        .preload_txt("_dmarc.example.test", "v=DMARC1; p=reject")
        .unwrap();
    let state = AppState::new(t.db.clone())
        .with_runtime(rt.clone())
        .with_mail_sender_check(check);
    let triggers = MailTriggerSql::new(t.db.clone());
    triggers
        .create(&MailTrigger {
            trigger_id: uuid::Uuid::new_v4().to_string(),
            tenant: "dev".into(),
            address: "support@acme.test".into(),
            project_id: kindgi_api::projects::default_project_id("dev"),
            config: MailTriggerConfig {
                target: MailTarget::Flow {
                    flow_id: "acme.answer".into(),
                    flow_version: "1.0.0".into(),
                },
                owner: TriggerOwner {
                    kind: OwnerKind::User,
                    id: "dev".into(),
                    display_name: None,
                },
                owner_key_id: None,
                senders: vec![MailSender {
                    address: "ada@example.test".into(),
                    user_id: "ada".into(),
                }],
                mailbox: MailboxConnection {
                    app: "google".into(),
                    whose: ConnectionOwner::Company,
                },
                input: None,
                tools_allowed_unattended: vec![],
                label: None,
                rate_limit_per_minute: 600,
            },
            status: TriggerStatus::Active,
            status_reason: None,
            consecutive_failures: 0,
            last_fired_at: None,
            created_at: 1,
            updated_at: 1,
        })
        .await
        .unwrap();
    let mut config = SmtpConfig::loopback(0);
    config.max_message_bytes = 64 * 1024;
    let smtp = SmtpListener::start(state, config).await.unwrap();
    let addr = smtp.local_addr();

    let (mut c, greeting) = Client::connect(addr).await;
    assert!(greeting.starts_with("220 "), "{greeting}");
    assert!(
        c.say("MAIL FROM:<ada@example.test>")
            .await
            .starts_with("503")
    );
    let ehlo = c.say("EHLO client.example.test").await;
    assert!(
        ehlo.starts_with("250-") && ehlo.contains("SIZE 65536"),
        "{ehlo}"
    );
    assert!(c.say("NOOP").await.starts_with("250"));
    assert!(c.say("VRFY ada").await.starts_with("252"));
    assert!(
        c.say("RCPT TO:<support@acme.test>")
            .await
            .starts_with("503")
    );
    assert!(
        c.say("MAIL FROM:<ada@example.test>")
            .await
            .starts_with("250")
    );
    assert!(c.say("RCPT TO:<nobody@acme.test>").await.starts_with("550"));
    assert!(c.say("RSET").await.starts_with("250"));
    assert!(
        c.say("MAIL FROM:<ada@example.test> SIZE=100000")
            .await
            .starts_with("552")
    );
    assert!(
        c.say("MAIL FROM:<ada@example.test>")
            .await
            .starts_with("250")
    );
    assert!(
        c.say("RCPT TO:<Support@Acme.test>")
            .await
            .starts_with("250")
    );
    assert!(c.say("DATA").await.starts_with("354"));
    let body = "From: Ada <ada@example.test>\r\nTo: support@acme.test\r\nSubject: Hi\r\nMessage-ID: <s1@example.test>\r\n\r\nHello\r\n.a line that starts with a dot\r\n";
    let signature = DkimSigner::from_key(Ed25519Key::from_pkcs8_der(&key).unwrap())
        .domain("example.test")
        .selector("sel")
        .headers(["From", "To", "Subject", "Message-ID"])
        .sign(body.as_bytes())
        .unwrap();
    let stuffed = body.replace("\r\n.", "\r\n..");
    c.write
        .write_all(format!("{}{stuffed}.\r\n", signature.to_header()).as_bytes())
        .await
        .unwrap();
    let queued = c.reply().await;
    assert!(queued.starts_with("250 "), "{queued}");
    assert!(queued.contains("1 fire"), "{queued}");

    // Too big: refused after the data, the session goes on.
    assert!(
        c.say("MAIL FROM:<ada@example.test>")
            .await
            .starts_with("250")
    );
    assert!(
        c.say("RCPT TO:<support@acme.test>")
            .await
            .starts_with("250")
    );
    assert!(c.say("DATA").await.starts_with("354"));
    let line = format!("{}\r\n", "x".repeat(900));
    for _ in 0..80 {
        c.write.write_all(line.as_bytes()).await.unwrap();
    }
    assert!(c.say(".").await.starts_with("552"));
    assert!(c.say("QUIT").await.starts_with("221"));

    // A command line over its limit ends the session.
    let (mut c, _) = Client::connect(addr).await;
    assert!(c.say(&"N".repeat(600)).await.starts_with("500"));

    let fires = triggers
        .fires(&MailFireQuery {
            tenant: "dev".into(),
            trigger_id: triggers
                .by_address("support@acme.test")
                .await
                .unwrap()
                .unwrap()
                .trigger_id,
            before: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(fires.len(), 1, "{fires:?}");
    assert_eq!(fires[0].outcome, FireOutcome::Started, "{fires:?}");
    let run = rt
        .store()
        .get_run(fires[0].run_id.as_deref().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.meta.started_by, Some(StartedBy::Mail));
    assert_eq!(run.meta.started_by_actor.as_deref(), Some("user:ada"));
    assert!(
        run.input["text"]
            .as_str()
            .unwrap()
            .contains("\n.a line that starts with a dot"),
        "dot-unstuffed: {}",
        run.input
    );
    smtp.stop().await;
    t.cleanup().await.unwrap();
}
