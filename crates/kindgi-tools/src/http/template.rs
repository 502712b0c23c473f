//! `{param}` templates of the HTTP synthesizer: the URL template (values percent-encoded,
//! every placeholder required and scalar) and the header/text templates (values raw, a
//! missing key left literally), with JavaScript's `String(value)` rendering of JSON values.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

/// The bytes `encodeURIComponent` leaves alone besides ASCII letters and digits.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Literal(String),
    /// `{name}` where `name` matches `\w+` (ASCII letters, digits, `_`).
    Param(String),
}

/// A template parsed once at definition time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Template {
    /// Splits `text` at every `{\w+}`; anything else (`{a-b}`, a lone `{`) stays literal.
    pub(crate) fn parse(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut pieces = Vec::new();
        let mut literal_start = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'{' {
                let mut j = i + 1;
                while j < bytes.len() && is_word(bytes[j]) {
                    j += 1;
                }
                if j > i + 1 && j < bytes.len() && bytes[j] == b'}' {
                    if literal_start < i {
                        pieces.push(Piece::Literal(text[literal_start..i].to_owned()));
                    }
                    pieces.push(Piece::Param(text[i + 1..j].to_owned()));
                    i = j + 1;
                    literal_start = i;
                    continue;
                }
            }
            i += 1;
        }
        if literal_start < bytes.len() {
            pieces.push(Piece::Literal(text[literal_start..].to_owned()));
        }
        Self { pieces }
    }

    pub(crate) fn params(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Param(name) => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// Header/text substitution: raw values, a missing key stays `{key}`, null becomes `''`.
    pub(crate) fn render_raw(&self, input: &Map<String, Value>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Param(name) => match input.get(name) {
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                    Some(Value::Null) => {}
                    Some(value) => out.push_str(&js_string(value)),
                },
            }
        }
        out
    }

    /// URL substitution: every key must exist and be a scalar; values are encoded as
    /// `encodeURIComponent` does. Returns the URL text and the keys it consumed.
    pub(crate) fn render_url<'a>(
        &'a self,
        tool_id: &str,
        input: &Map<String, Value>,
    ) -> Result<(String, Vec<&'a str>), String> {
        let mut out = String::new();
        let mut consumed = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Param(name) => {
                    let Some(value) = input.get(name) else {
                        return Err(format!(
                            "http-tool \"{tool_id}\" urlTemplate references \"{{{name}}}\" but input has no such key"
                        ));
                    };
                    if matches!(value, Value::Null | Value::Object(_) | Value::Array(_)) {
                        return Err(format!(
                            "http-tool \"{tool_id}\" urlTemplate key \"{{{name}}}\" must be a primitive; got {}",
                            js_typeof(value)
                        ));
                    }
                    out.extend(utf8_percent_encode(&js_string(value), URI_COMPONENT));
                    consumed.push(name.as_str());
                }
            }
        }
        Ok((out, consumed))
    }
}

/// JavaScript's `typeof` of a JSON value (`null` and arrays are `object`).
pub(crate) fn js_typeof(value: &Value) -> &'static str {
    match value {
        Value::Null | Value::Object(_) | Value::Array(_) => "object",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
    }
}

/// JavaScript's `String(value)` for a JSON value.
pub(crate) fn js_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                js_number(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::Object(_) => "[object Object]".to_owned(),
        // `String([1, null, [2]])` is "1,,2": null elements render empty, nesting flattens.
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// `Number.prototype.toString()` for a finite double: integers without a fraction,
/// exponent notation (with an explicit `+`) outside [1e-6, 1e21).
fn js_number(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "Infinity".to_owned()
        } else {
            "-Infinity".to_owned()
        };
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        return match text.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => text,
        };
    }
    if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn parses_only_word_placeholders() {
        let t = Template::parse("a{b}c{d-e}{}{f_1}{");
        assert_eq!(t.params().collect::<Vec<_>>(), vec!["b", "f_1"]);
        assert_eq!(
            t.render_raw(&obj(json!({"b": 1, "f_1": "x"}))),
            "a1c{d-e}{}x{"
        );
    }

    #[test]
    fn url_values_encode_like_encode_uri_component() {
        let t = Template::parse("https://x/{id}");
        let (url, used) = t
            .render_url("t", &obj(json!({"id": "a/b?c d!~*'()é"})))
            .unwrap();
        assert_eq!(url, "https://x/a%2Fb%3Fc%20d!~*'()%C3%A9");
        assert_eq!(used, vec!["id"]);
    }

    #[test]
    fn numbers_render_as_javascript_does() {
        assert_eq!(js_string(&json!(42)), "42");
        assert_eq!(js_string(&json!(1.5)), "1.5");
        assert_eq!(js_string(&json!(2.0)), "2");
        assert_eq!(js_string(&json!(1e21)), "1e+21");
        assert_eq!(js_string(&json!(1e-7)), "1e-7");
        assert_eq!(js_string(&json!(-0.25)), "-0.25");
        assert_eq!(js_string(&json!([1, null, [2, "a"]])), "1,,2,a");
        assert_eq!(js_string(&json!({"a": 1})), "[object Object]");
    }

    #[test]
    fn raw_render_keeps_missing_keys_and_blanks_null() {
        let t = Template::parse("case {case_id} by {who}{n}");
        assert_eq!(
            t.render_raw(&obj(json!({"case_id": "a b", "n": null}))),
            "case a b by {who}"
        );
    }
}
