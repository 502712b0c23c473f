//! `kindgi dev`'s local SMTP listener: a small RFC 5321 receiver on 127.0.0.1 that hands
//! each message to the inbound mail path ([`kindgi_api::routes::mail_inbound::deliver`]), so
//! a developer can mail a trigger with any SMTP client. Never started by `kindgi server`
//! (there a provider posts mail to `/v1/mail/inbound/{tenantId}`).
//!
//! Commands: `EHLO`/`HELO`, `MAIL FROM`, `RCPT TO` (an address no live trigger has is
//! `550`), `DATA`, `RSET`, `NOOP`, `VRFY` (`252`), `QUIT`; anything else `502`. Budgets: a
//! command line of [`MAX_COMMAND_LINE`] octets, a text line of [`MAX_TEXT_LINE`] (RFC 5321
//! §4.5.3.1), a message of [`SmtpConfig::max_message_bytes`] (`552`, also announced as
//! `SIZE`), [`MAX_RECIPIENTS`] recipients, [`SmtpConfig::idle_timeout`] per read, and
//! [`MAX_CONNECTIONS`] at once. The client's address, `HELO` name and `MAIL FROM` feed SPF;
//! a sender the checks cannot prove is taken (`250`) and recorded as a `refused` fire, as the
//! HTTP receiver does; a DNS failure is `451` (try again later).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use kindgi_api::AppState;
use kindgi_api::routes::mail_inbound::{Delivery, DeliveryError, deliver};
use kindgi_api::routes::mail_sender::Envelope;
use kindgi_api::routes::mail_triggers::{MailTriggers, address_of};
use kindgi_serve::CancellationToken;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The longest command line, CRLF included (RFC 5321 §4.5.3.1.4).
pub const MAX_COMMAND_LINE: usize = 512;
/// The longest line of a message, CRLF included (RFC 5321 §4.5.3.1.6).
pub const MAX_TEXT_LINE: usize = 1000;
/// Recipients per message (RFC 5321 §4.5.3.1.8's minimum is 100; a trigger needs few).
pub const MAX_RECIPIENTS: usize = 50;
/// Connections served at once; more wait for the listener's accept.
pub const MAX_CONNECTIONS: usize = 16;

/// Where and how the listener serves.
#[derive(Debug, Clone)]
pub struct SmtpConfig {
    /// `127.0.0.1:<port>` (port 0 picks a free one).
    pub listen: SocketAddr,
    /// The name it greets with.
    pub hostname: String,
    pub max_message_bytes: usize,
    pub idle_timeout: Duration,
}

impl SmtpConfig {
    pub fn loopback(port: u16) -> SmtpConfig {
        SmtpConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], port)),
            hostname: "kindgi-dev.localhost".into(),
            max_message_bytes: kindgi_api::routes::mail_inbound::MAX_MAIL_BYTES,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// A running listener.
#[derive(Debug)]
pub struct SmtpListener {
    addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl SmtpListener {
    /// Binds `config.listen` and serves until [`SmtpListener::stop`].
    pub async fn start(state: AppState, config: SmtpConfig) -> std::io::Result<SmtpListener> {
        let listener = TcpListener::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let stop = CancellationToken::new();
        let task = tokio::spawn(accept_loop(listener, state, Arc::new(config), stop.clone()));
        Ok(SmtpListener { addr, stop, task })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and ends open sessions.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: AppState,
    config: Arc<SmtpConfig>,
    stop: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            _ = stop.cancelled() => return,
            p = slots.clone().acquire_owned() => p,
        };
        let Ok(permit) = permit else {
            return;
        };
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "smtp: accept failed");
                    continue;
                }
            },
        };
        let (state, config, stop) = (state.clone(), config.clone(), stop.clone());
        tokio::spawn(async move {
            let _permit = permit;
            tokio::select! {
                _ = stop.cancelled() => {}
                r = session(stream, peer, &state, &config) => {
                    if let Err(e) = r {
                        tracing::debug!(peer = %peer, error = %e, "smtp: session ended");
                    }
                }
            }
        });
    }
}

/// Why a session ended early.
#[derive(Debug, thiserror::Error)]
enum SessionEnd {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("the client was idle too long")]
    Idle,
    #[error("the client closed the connection")]
    Closed,
    #[error("a line was over its limit")]
    LineTooLong,
}

/// One mail transaction's state.
#[derive(Debug, Default)]
struct Transaction {
    mail_from: Option<String>,
    rcpt_to: Vec<String>,
}

struct Session<'a, W> {
    out: W,
    state: &'a AppState,
    config: &'a SmtpConfig,
    remote_ip: IpAddr,
    helo: Option<String>,
    tx: Transaction,
}

async fn session(
    stream: TcpStream,
    peer: SocketAddr,
    state: &AppState,
    config: &SmtpConfig,
) -> Result<(), SessionEnd> {
    let (read, write) = stream.into_split();
    let mut input = BufReader::new(read);
    let mut s = Session {
        out: write,
        state,
        config,
        remote_ip: peer.ip(),
        helo: None,
        tx: Transaction::default(),
    };
    s.reply(&format!("220 {} ESMTP kindgi dev", config.hostname))
        .await?;
    loop {
        let line = match read_line(&mut input, MAX_COMMAND_LINE, config.idle_timeout).await {
            Ok(l) => l,
            Err(SessionEnd::LineTooLong) => {
                s.reply("500 5.5.2 Line too long").await?;
                drain_line(&mut input).await;
                return Err(SessionEnd::LineTooLong);
            }
            Err(SessionEnd::Idle) => {
                s.reply("421 4.4.2 Idle too long, closing").await?;
                return Err(SessionEnd::Idle);
            }
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        let (verb, rest) = text.split_once(' ').unwrap_or((text, ""));
        match verb.to_ascii_uppercase().as_str() {
            "EHLO" | "HELO" => s.hello(verb, rest.trim()).await?,
            "MAIL" => s.mail(rest).await?,
            "RCPT" => s.rcpt(rest).await?,
            "DATA" => s.data(&mut input).await?,
            "RSET" => {
                s.tx = Transaction::default();
                s.reply("250 2.0.0 OK").await?;
            }
            "NOOP" => s.reply("250 2.0.0 OK").await?,
            "VRFY" => s.reply("252 2.1.5 Cannot verify, send and see").await?,
            "QUIT" => {
                s.reply("221 2.0.0 Bye").await?;
                return Ok(());
            }
            _ => s.reply("502 5.5.1 Command not implemented").await?,
        }
    }
}

/// The address of `FROM:<a>` / `TO:<a>` (params after it ignored); `Some("")` for `<>`.
fn path_of<'l>(rest: &'l str, keyword: &str) -> Option<&'l str> {
    let rest = rest.trim();
    let head = rest.get(..keyword.len())?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = rest[keyword.len()..].trim_start();
    let inner = rest.strip_prefix('<')?;
    let end = inner.find('>')?;
    Some(&inner[..end])
}

impl<W: AsyncWrite + Unpin> Session<'_, W> {
    async fn reply(&mut self, line: &str) -> Result<(), SessionEnd> {
        self.out.write_all(line.as_bytes()).await?;
        self.out.write_all(b"\r\n").await?;
        self.out.flush().await?;
        Ok(())
    }

    async fn hello(&mut self, verb: &str, name: &str) -> Result<(), SessionEnd> {
        if name.is_empty() {
            return self.reply("501 5.5.4 Say who you are: EHLO <domain>").await;
        }
        self.helo = Some(name.chars().take(255).collect());
        self.tx = Transaction::default();
        let host = self.config.hostname.clone();
        if verb.eq_ignore_ascii_case("HELO") {
            return self.reply(&format!("250 {host}")).await;
        }
        let size = self.config.max_message_bytes;
        self.reply(&format!(
            "250-{host}\r\n250-SIZE {size}\r\n250-8BITMIME\r\n250 PIPELINING"
        ))
        .await
    }

    async fn mail(&mut self, rest: &str) -> Result<(), SessionEnd> {
        if self.helo.is_none() {
            return self.reply("503 5.5.1 EHLO first").await;
        }
        if self.tx.mail_from.is_some() {
            return self.reply("503 5.5.1 Nested MAIL command").await;
        }
        let Some(path) = path_of(rest, "FROM:") else {
            return self.reply("501 5.5.4 Syntax: MAIL FROM:<address>").await;
        };
        let declared = rest
            .split_whitespace()
            .find_map(|p| p.strip_prefix("SIZE=").or_else(|| p.strip_prefix("size=")))
            .and_then(|n| n.parse::<usize>().ok());
        if declared.is_some_and(|n| n > self.config.max_message_bytes) {
            return self.reply("552 5.3.4 Message size exceeds the limit").await;
        }
        self.tx.mail_from = Some(path.to_ascii_lowercase());
        self.reply("250 2.1.0 OK").await
    }

    async fn rcpt(&mut self, rest: &str) -> Result<(), SessionEnd> {
        if self.tx.mail_from.is_none() {
            return self.reply("503 5.5.1 MAIL first").await;
        }
        let Some(path) = path_of(rest, "TO:") else {
            return self.reply("501 5.5.4 Syntax: RCPT TO:<address>").await;
        };
        if self.tx.rcpt_to.len() >= MAX_RECIPIENTS {
            return self.reply("452 4.5.3 Too many recipients").await;
        }
        let Ok(address) = address_of(Some(&serde_json::Value::from(path)), "to") else {
            return self.reply("553 5.1.3 Not a mail address").await;
        };
        match MailTriggers::from_state(self.state)
            .by_address(&address)
            .await
        {
            Ok(Some(_)) => {
                self.tx.rcpt_to.push(address);
                self.reply("250 2.1.5 OK").await
            }
            Ok(None) => {
                self.reply("550 5.1.1 No mail trigger has this address")
                    .await
            }
            Err(_) => self.reply("451 4.3.0 Try again later").await,
        }
    }

    async fn data<R: AsyncRead + Unpin>(
        &mut self,
        input: &mut BufReader<R>,
    ) -> Result<(), SessionEnd> {
        if self.tx.rcpt_to.is_empty() {
            return self.reply("503 5.5.1 RCPT first").await;
        }
        self.reply("354 End data with <CR><LF>.<CR><LF>").await?;
        let max = self.config.max_message_bytes;
        let mut raw: Vec<u8> = Vec::new();
        let mut over = false;
        loop {
            let line = match read_line(input, MAX_TEXT_LINE, self.config.idle_timeout).await {
                Ok(l) => l,
                Err(SessionEnd::LineTooLong) => {
                    self.reply("500 5.5.2 Line too long").await?;
                    drain_line(input).await;
                    return Err(SessionEnd::LineTooLong);
                }
                Err(e) => return Err(e),
            };
            if line == b".\r\n" || line == b".\n" {
                break;
            }
            // Dot-unstuffing (RFC 5321 §4.5.2).
            let line = line.strip_prefix(b".").unwrap_or(&line);
            if raw.len() + line.len() > max {
                over = true;
                raw.clear();
            }
            if !over {
                raw.extend_from_slice(line);
            }
        }
        let tx = std::mem::take(&mut self.tx);
        if over {
            return self.reply("552 5.3.4 Message size exceeds the limit").await;
        }
        let delivery = Delivery {
            envelope: Envelope {
                remote_ip: Some(self.remote_ip),
                helo: self.helo.clone(),
                mail_from: tx.mail_from.filter(|m| !m.is_empty()),
                rcpt_to: tx.rcpt_to,
            },
            raw: raw.into(),
        };
        let check = match self.state.mail_sender_check() {
            Ok(c) => c,
            Err(_) => return self.reply("451 4.4.3 Cannot check senders now").await,
        };
        match deliver(self.state, None, &delivery, &check).await {
            Ok(receipt) => match receipt.rate_limited() {
                // A trigger's or the tenant's mails a minute are used up: the sending server
                // retries later (the fires that took it dedupe on its Message-ID).
                Some((limit, retry)) => {
                    self.reply(&format!(
                        "451 4.7.0 Rate limited ({limit}): try again in {retry} s"
                    ))
                    .await
                }
                None => {
                    let n = receipt.fires.len();
                    self.reply(&format!("250 2.0.0 OK: {n} fire(s)")).await
                }
            },
            Err(DeliveryError::Unparseable) => {
                self.reply("554 5.6.0 Not an RFC 5322 message").await
            }
            Err(e) => {
                tracing::warn!(error = %e, "smtp: delivery deferred");
                self.reply("451 4.4.3 Try again later").await
            }
        }
    }
}

/// One line (with its ending) of at most `max` octets, within `idle`.
async fn read_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    max: usize,
    idle: Duration,
) -> Result<Vec<u8>, SessionEnd> {
    let mut line = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX);
    let n = tokio::time::timeout(idle, (&mut *input).take(limit).read_until(b'\n', &mut line))
        .await
        .map_err(|_| SessionEnd::Idle)??;
    if n == 0 {
        return Err(SessionEnd::Closed);
    }
    if !line.ends_with(b"\n") {
        return Err(SessionEnd::LineTooLong);
    }
    Ok(line)
}

/// Reads what is left of an over-long line (a bounded amount, briefly), so closing the
/// connection does not reset it before the client has read the refusal.
async fn drain_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) {
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        (&mut *input).take(64 * 1024).read_until(b'\n', &mut rest),
    )
    .await;
}
