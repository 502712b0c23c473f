//! An inbound mail as a run's input (`mail-parser`): `{from, to, cc?, subject, text, html?,
//! messageId, date, attachments: [{filename?, contentType, size}]}`. Everything here is data
//! from outside that nobody checked; the text and HTML are clipped to [`MAX_BODY_CHARS`] (and
//! say so), attachments are described, never copied.

use mail_parser::{Address, Message, MessageParser, MimeHeaders};
use serde_json::{Map, Value, json};

/// The most characters of the text or the HTML body a run gets.
pub const MAX_BODY_CHARS: usize = 256 * 1024;
/// The most attachments described, and the most recipients listed.
pub const MAX_LISTED: usize = 100;
/// The longest header value kept (subject, an address, a file name).
pub const MAX_HEADER_CHARS: usize = 998;

/// A parsed inbound mail.
#[derive(Debug)]
pub struct InboundMail<'x> {
    message: Message<'x>,
}

impl<'x> InboundMail<'x> {
    /// `None`: `raw` is no RFC 5322 message (no header at all).
    pub fn parse(raw: &'x [u8]) -> Option<InboundMail<'x>> {
        let message = MessageParser::default().parse(raw)?;
        if message.root_part().headers.is_empty() {
            return None;
        }
        Some(InboundMail { message })
    }

    /// The first `From` address, lower-case.
    pub fn author(&self) -> Option<String> {
        first_address(self.message.from())
    }

    /// The `Message-ID`, clipped.
    pub fn message_id(&self) -> Option<String> {
        self.message.message_id().map(clip_header)
    }

    /// `To` and `Cc` addresses, lower-case: the recipients when no envelope names them.
    pub fn header_recipients(&self) -> Vec<String> {
        let mut out = addresses(self.message.to());
        out.extend(addresses(self.message.cc()));
        out.dedup();
        out.truncate(MAX_LISTED);
        out
    }

    /// The run's input.
    pub fn input(&self) -> Value {
        let m = &self.message;
        let mut o = Map::new();
        o.insert("from".into(), json!(self.author()));
        o.insert("to".into(), json!(addresses(m.to())));
        let cc = addresses(m.cc());
        if !cc.is_empty() {
            o.insert("cc".into(), json!(cc));
        }
        o.insert("subject".into(), json!(m.subject().map(clip_header)));
        let (text, text_clipped) = clip_body(m.body_text(0).as_deref().unwrap_or_default());
        o.insert("text".into(), json!(text));
        if let Some(html) = m.body_html(0).filter(|_| has_html(m)) {
            let (html, html_clipped) = clip_body(&html);
            o.insert("html".into(), json!(html));
            if html_clipped {
                o.insert("htmlTruncated".into(), json!(true));
            }
        }
        if text_clipped {
            o.insert("textTruncated".into(), json!(true));
        }
        o.insert("messageId".into(), json!(self.message_id()));
        o.insert("date".into(), json!(m.date().map(|d| d.to_rfc3339())));
        let attachments: Vec<Value> = m
            .attachments()
            .take(MAX_LISTED)
            .map(|a| {
                let content_type = a.content_type().map_or_else(
                    || "application/octet-stream".to_owned(),
                    |c| match c.subtype() {
                        Some(sub) => format!("{}/{}", c.ctype(), sub),
                        None => c.ctype().to_owned(),
                    },
                );
                let mut d = Map::new();
                if let Some(name) = a.attachment_name() {
                    d.insert("filename".into(), json!(clip_header(name)));
                }
                d.insert("contentType".into(), json!(clip_header(&content_type)));
                d.insert("size".into(), json!(a.len()));
                Value::Object(d)
            })
            .collect();
        o.insert("attachments".into(), Value::Array(attachments));
        Value::Object(o)
    }
}

/// True when the message has an HTML part of its own (mail-parser renders text as HTML too).
fn has_html(m: &Message<'_>) -> bool {
    !m.html_body.is_empty()
        && m.html_body
            .iter()
            .any(|id| m.part(*id).is_some_and(|p| p.is_text_html()))
}

fn first_address(a: Option<&Address<'_>>) -> Option<String> {
    a?.first()?
        .address()
        .map(|s| clip_header(s).to_ascii_lowercase())
}

fn addresses(a: Option<&Address<'_>>) -> Vec<String> {
    let Some(a) = a else {
        return Vec::new();
    };
    a.iter()
        .filter_map(|x| x.address())
        .take(MAX_LISTED)
        .map(|s| clip_header(s).to_ascii_lowercase())
        .collect()
}

fn clip_header(s: &str) -> String {
    s.chars().take(MAX_HEADER_CHARS).collect()
}

fn clip_body(s: &str) -> (String, bool) {
    match s.char_indices().nth(MAX_BODY_CHARS) {
        Some((at, _)) => (s[..at].to_owned(), true),
        None => (s.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_message_is_its_fields() {
        let raw = b"From: Ada <Ada@Example.test>\r\nTo: support@acme.test\r\nSubject: Hi\r\nMessage-ID: <m1@example.test>\r\nDate: Thu, 03 Dec 2026 09:00:00 +0000\r\n\r\nHello there\r\n";
        let mail = InboundMail::parse(raw).unwrap();
        assert_eq!(mail.author().as_deref(), Some("ada@example.test"));
        let input = mail.input();
        assert_eq!(input["to"], json!(["support@acme.test"]));
        assert_eq!(input["subject"], "Hi");
        assert_eq!(input["messageId"], "m1@example.test");
        assert!(input["text"].as_str().unwrap().starts_with("Hello there"));
        assert!(input.get("html").is_none());
        assert_eq!(input["attachments"], json!([]));
        assert_eq!(input["date"], "2026-12-03T09:00:00Z");
    }

    #[test]
    fn junk_is_no_message() {
        assert!(InboundMail::parse(b"").is_none());
    }
}
