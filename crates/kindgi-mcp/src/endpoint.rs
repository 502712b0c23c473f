//! `mcpEndpoint` URIs: which server to reach and over which transport.
//!
//! - `mcp+stdio://COMMAND ARG…` — a child process speaking MCP on stdin/stdout. The text
//!   after `mcp+stdio://` is split on spaces; each word is then percent-decoded, so a space
//!   inside a word is `%20` and a literal `%` is `%25` (`mcp+stdio://node /srv/my%20server.js`).
//! - `mcp+http://HOST/PATH` and `mcp+https://HOST/PATH` — streamable HTTP at
//!   `http://HOST/PATH` / `https://HOST/PATH`.
//! - `mcp+sse://HOST/PATH` and `mcp+sses://HOST/PATH` — the legacy HTTP+SSE transport
//!   (GET the event stream, POST to the endpoint it announces) over http / https.

use percent_encoding::percent_decode_str;
use std::fmt;
use url::Url;

use crate::error::McpError;

/// A parsed MCP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Stdio { command: String, args: Vec<String> },
    StreamableHttp { url: Url },
    Sse { url: Url },
}

impl Endpoint {
    /// Parses an `mcpEndpoint` string.
    pub fn parse(text: &str) -> Result<Self, McpError> {
        let invalid = |reason: &str| McpError::InvalidEndpoint {
            endpoint: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            invalid("it must look like mcp+stdio://COMMAND, mcp+http(s)://URL or mcp+sse(s)://URL")
        })?;
        let http_url = |real: &str| -> Result<Url, McpError> {
            if rest.is_empty() {
                return Err(invalid("it names no host"));
            }
            let url = Url::parse(&format!("{real}://{rest}"))
                .map_err(|e| invalid(&format!("its URL is invalid: {e}")))?;
            if url.host_str().is_none_or(str::is_empty) {
                return Err(invalid("it names no host"));
            }
            Ok(url)
        };
        match scheme.to_ascii_lowercase().as_str() {
            "mcp+stdio" => {
                let mut words = Vec::new();
                for word in rest.split(' ').filter(|w| !w.is_empty()) {
                    let decoded = percent_decode_str(word).decode_utf8().map_err(|_| {
                        invalid(&format!(
                            "the word \"{word}\" does not percent-decode to UTF-8"
                        ))
                    })?;
                    words.push(decoded.into_owned());
                }
                let mut words = words.into_iter();
                let command = words.next().ok_or_else(|| invalid("it names no command"))?;
                Ok(Endpoint::Stdio {
                    command,
                    args: words.collect(),
                })
            }
            "mcp+http" => Ok(Endpoint::StreamableHttp {
                url: http_url("http")?,
            }),
            "mcp+https" => Ok(Endpoint::StreamableHttp {
                url: http_url("https")?,
            }),
            "mcp+sse" => Ok(Endpoint::Sse {
                url: http_url("http")?,
            }),
            "mcp+sses" => Ok(Endpoint::Sse {
                url: http_url("https")?,
            }),
            _ => Err(invalid(&format!(
                "the scheme \"{scheme}\" is not one of mcp+stdio, mcp+http, mcp+https, mcp+sse, mcp+sses"
            ))),
        }
    }

    /// Builds a stdio endpoint from a command and its arguments.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Endpoint::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// The transport's short name: `stdio`, `streamable-http` or `sse`.
    pub fn transport(&self) -> &'static str {
        match self {
            Endpoint::Stdio { .. } => "stdio",
            Endpoint::StreamableHttp { .. } => "streamable-http",
            Endpoint::Sse { .. } => "sse",
        }
    }
}

/// Percent-encodes what a stdio word cannot hold literally (space, `%`, control bytes).
fn encode_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for ch in word.chars() {
        if ch == ' ' || ch == '%' || ch.is_control() {
            let mut buf = [0u8; 4];
            for b in ch.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(ch);
        }
    }
    out
}

/// The canonical `mcpEndpoint` text (what [`Endpoint::parse`] reads back).
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rest_of = |url: &Url| {
            url.as_str()
                .split_once("://")
                .map(|(_, r)| r.to_owned())
                .unwrap_or_default()
        };
        match self {
            Endpoint::Stdio { command, args } => {
                write!(f, "mcp+stdio://{}", encode_word(command))?;
                for arg in args {
                    write!(f, " {}", encode_word(arg))?;
                }
                Ok(())
            }
            Endpoint::StreamableHttp { url } => {
                let scheme = if url.scheme() == "https" {
                    "mcp+https"
                } else {
                    "mcp+http"
                };
                write!(f, "{scheme}://{}", rest_of(url))
            }
            Endpoint::Sse { url } => {
                let scheme = if url.scheme() == "https" {
                    "mcp+sses"
                } else {
                    "mcp+sse"
                };
                write!(f, "{scheme}://{}", rest_of(url))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_words_split_on_spaces_and_percent_decode() {
        let e = Endpoint::parse("mcp+stdio://node  /srv/my%20server.js  stdio 100%25").unwrap();
        assert_eq!(
            e,
            Endpoint::stdio("node", ["/srv/my server.js", "stdio", "100%"])
        );
        assert_eq!(
            e.to_string(),
            "mcp+stdio://node /srv/my%20server.js stdio 100%25"
        );
        assert_eq!(Endpoint::parse(&e.to_string()).unwrap(), e);
    }

    #[test]
    fn http_schemes_map_to_real_urls() {
        let e = Endpoint::parse("mcp+http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!(
            e,
            Endpoint::StreamableHttp {
                url: Url::parse("http://127.0.0.1:3001/mcp").unwrap()
            }
        );
        assert_eq!(e.to_string(), "mcp+http://127.0.0.1:3001/mcp");
        let e = Endpoint::parse("mcp+https://api.example.com/mcp").unwrap();
        assert_eq!(e.to_string(), "mcp+https://api.example.com/mcp");
        let e = Endpoint::parse("mcp+sse://localhost:9/sse").unwrap();
        assert_eq!(
            e,
            Endpoint::Sse {
                url: Url::parse("http://localhost:9/sse").unwrap()
            }
        );
        assert_eq!(
            Endpoint::parse("mcp+sses://h/sse").unwrap().to_string(),
            "mcp+sses://h/sse"
        );
    }

    #[test]
    fn bad_endpoints_say_why() {
        for (text, why) in [
            ("node server.js", "must look like"),
            ("mcp+stdio://   ", "names no command"),
            ("mcp+ws://h/x", "is not one of"),
            ("mcp+http://", "names no host"),
            ("mcp+stdio://a %FF", "percent-decode"),
        ] {
            let err = Endpoint::parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
            assert!(err.contains(text.trim_end()), "{text}: {err}");
        }
    }
}
