//! Masking of resolved secret values (`***`), as GitHub Actions masks its secrets: a
//! [`SecretMask`] learns every value a run resolves — through a [`MaskingResolver`] around
//! the call's [`SecretResolver`], or [`SecretMask::add`] for values resolved up front (a
//! pack tool's `needsSpec.secrets`) — and the runtime passes everything it stores or sends
//! (journal payloads, the run's output and failure message) through it first.
//!
//! Each value is masked in the forms a call puts on the wire or an echoing server hands
//! back: as is, base64 (standard and URL-safe, padded or not), percent-encoded and
//! form-encoded. A form that is sent whole (an HTTP basic credential's base64 of
//! `user:password`) is added with [`SecretMask::add_form`]. Values shorter than
//! [`MIN_MASKED_BYTES`] are not masked: masking a one-letter value would garble every text
//! while hiding nothing. A mask holds at most [`MAX_VALUES`] values (a long-lived one, such
//! as a pack service's, drops the value it learnt or sent longest ago).

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::BoxFuture;
use crate::context::SecretResolver;

/// What a masked value is replaced with.
pub const MASK: &str = "***";

/// The shortest value that is masked.
pub const MIN_MASKED_BYTES: usize = 4;

/// The most values one mask holds; learning one more drops the one learnt (or last
/// re-learnt) longest ago.
pub const MAX_VALUES: usize = 1024;

/// What RFC 3986 encoders escape: all but letters, digits and `-._~`.
const UNRESERVED_KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What `application/x-www-form-urlencoded` escapes: all but letters, digits and `*-._`.
const FORM_KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_');

/// The secret values one run has resolved, in every form they are masked in. Grows as the
/// run resolves secrets; shared by the run's calls and its journal writer.
#[derive(Default)]
pub struct SecretMask {
    inner: RwLock<Learnt>,
}

#[derive(Default)]
struct Learnt {
    /// Each learnt value (or exact form) and its forms, oldest first.
    values: VecDeque<(String, Vec<String>)>,
    /// How many of `values` have each form.
    counts: HashMap<String, usize>,
    /// Every value's forms, deduplicated, longest first (then in byte order), so a form
    /// containing another is replaced whole.
    forms: Vec<String>,
}

/// The order of [`Learnt::forms`].
fn longest_first(a: &String, b: &String) -> std::cmp::Ordering {
    b.len().cmp(&a.len()).then_with(|| a.cmp(b))
}

impl Learnt {
    fn learn(&mut self, key: &str, mut forms: Vec<String>) {
        if let Some(i) = self.values.iter().position(|(k, _)| k == key) {
            if let Some(known) = self.values.remove(i) {
                self.values.push_back(known);
            }
            return;
        }
        forms.retain(|f| f.len() >= MIN_MASKED_BYTES);
        forms.sort();
        forms.dedup();
        for form in &forms {
            let n = self.counts.entry(form.clone()).or_insert(0);
            *n += 1;
            if *n == 1
                && let Err(at) = self.forms.binary_search_by(|f| longest_first(f, form))
            {
                self.forms.insert(at, form.clone());
            }
        }
        self.values.push_back((key.to_owned(), forms));
        while self.values.len() > MAX_VALUES {
            let Some((_, dropped)) = self.values.pop_front() else {
                break;
            };
            for form in dropped {
                let Some(n) = self.counts.get_mut(&form) else {
                    continue;
                };
                *n -= 1;
                if *n == 0 {
                    self.counts.remove(&form);
                    if let Ok(at) = self.forms.binary_search_by(|f| longest_first(f, &form)) {
                        self.forms.remove(at);
                    }
                }
            }
        }
    }
}

impl std::fmt::Debug for SecretMask {
    // The forms are the secrets: only how many there are.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.inner.read().map(|g| g.forms.len()).unwrap_or(0);
        f.debug_struct("SecretMask").field("forms", &n).finish()
    }
}

impl SecretMask {
    pub fn new() -> Arc<SecretMask> {
        Arc::new(SecretMask::default())
    }

    /// Learns `secret`: from now on it is masked as is, base64-, percent- and form-encoded.
    pub fn add(&self, secret: &str) {
        if secret.len() < MIN_MASKED_BYTES {
            return;
        }
        let bytes = secret.as_bytes();
        let mut forms = vec![
            secret.to_owned(),
            STANDARD.encode(bytes),
            STANDARD_NO_PAD.encode(bytes),
            URL_SAFE.encode(bytes),
            URL_SAFE_NO_PAD.encode(bytes),
        ];
        // Every escape (strict encoders), RFC 3986's unreserved characters kept (most URL
        // encoders), and the form encoding's set; each with `+` for a space and lower-case
        // escapes (`%2f`) too.
        for set in [NON_ALPHANUMERIC, UNRESERVED_KEPT, FORM_KEPT] {
            let percent = utf8_percent_encode(secret, set).to_string();
            forms.push(percent.replace("%20", "+"));
            forms.push(lower_escapes(&percent));
            forms.push(percent);
        }
        self.insert(secret, forms);
    }

    /// Learns one exact form a call sent (e.g. the base64 of `user:password` of an HTTP
    /// basic credential).
    pub fn add_form(&self, form: &str) {
        if form.len() >= MIN_MASKED_BYTES {
            self.insert(form, vec![form.to_owned()]);
        }
    }

    /// Learns `key` with its `forms`; a known key becomes the newest again.
    fn insert(&self, key: &str, forms: Vec<String>) {
        if let Ok(mut learnt) = self.inner.write() {
            learnt.learn(key, forms);
        }
    }

    /// True when nothing has been learnt (masking is then a no-op).
    pub fn is_empty(&self) -> bool {
        self.inner
            .read()
            .map(|g| g.forms.is_empty())
            .unwrap_or(true)
    }

    /// `text` with every learnt form replaced by [`MASK`].
    pub fn mask_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Ok(learnt) = self.inner.read() else {
            return Cow::Borrowed(text);
        };
        let mut out = Cow::Borrowed(text);
        for form in learnt.forms.iter() {
            if out.contains(form.as_str()) {
                out = Cow::Owned(out.replace(form.as_str(), MASK));
            }
        }
        out
    }

    /// The length in bytes of the longest learnt form (0 when nothing is learnt).
    pub fn longest_form(&self) -> usize {
        self.inner
            .read()
            .map(|g| g.forms.first().map_or(0, String::len))
            .unwrap_or(0)
    }

    /// At most the first `max_chars` characters of `text`, masked. With `cut` (`text` is only
    /// the start of a longer text), a tail that may be the start of a learnt form is dropped
    /// too: a value cut off at the end of `text` leaves none of its characters.
    pub fn mask_prefix(&self, text: &str, max_chars: usize, cut: bool) -> String {
        let masked = self.mask_str(text);
        let mut end = masked.len();
        if cut {
            if let Ok(learnt) = self.inner.read() {
                let forms = &learnt.forms;
                // The earliest start of a tail that a form begins with (a whole form would
                // have been masked, so any such tail is a form cut short).
                let longest = forms.first().map_or(0, String::len);
                let window = masked.len().saturating_sub(longest);
                end = masked
                    .char_indices()
                    .map(|(i, _)| i)
                    .filter(|&i| i >= window)
                    .find(|&i| forms.iter().any(|f| f.starts_with(&masked[i..])))
                    .unwrap_or(end);
            }
        }
        masked[..end].chars().take(max_chars).collect()
    }

    /// Masks `text` in place.
    pub fn mask_string(&self, text: &mut String) {
        if let Cow::Owned(masked) = self.mask_str(text) {
            *text = masked;
        }
    }

    /// Masks every string in `value` (object keys included), in place.
    pub fn mask_value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => self.mask_string(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.mask_value(v)),
            Value::Object(map) => {
                let rekey = map
                    .keys()
                    .any(|k| matches!(self.mask_str(k), Cow::Owned(_)));
                if rekey {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.mask_str(&k).into_owned(), v);
                    }
                }
                map.values_mut().for_each(|v| self.mask_value(v));
            }
            _ => {}
        }
    }
}

fn lower_escapes(percent: &str) -> String {
    let mut out = String::with_capacity(percent.len());
    let mut escape = 0;
    for c in percent.chars() {
        if c == '%' {
            escape = 2;
            out.push(c);
        } else if escape > 0 {
            escape -= 1;
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A [`SecretResolver`] that teaches `mask` every value it resolves, before the value
/// reaches the handler.
#[derive(Debug)]
pub struct MaskingResolver {
    inner: Arc<dyn SecretResolver>,
    mask: Arc<SecretMask>,
}

impl MaskingResolver {
    pub fn new(inner: Arc<dyn SecretResolver>, mask: Arc<SecretMask>) -> Self {
        Self { inner, mask }
    }
}

impl SecretResolver for MaskingResolver {
    fn resolve<'a>(
        &'a self,
        env_name: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let value = self.inner.resolve(env_name, name).await?;
            self.mask.add(&value);
            Ok(value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_form_of_a_learnt_value_is_masked() {
        let mask = SecretMask::new();
        let secret = "s3-cr_3t/tok+en value";
        mask.add(secret);
        let b64 = STANDARD.encode(secret);
        let url = URL_SAFE_NO_PAD.encode(secret);
        let pct = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
        // What Python's `urllib.parse.quote(s, safe="")` and JavaScript's
        // `encodeURIComponent` write for it.
        let quoted = "s3-cr_3t%2Ftok%2Ben%20value".to_owned();
        for form in [
            secret.to_owned(),
            b64,
            url,
            pct.clone(),
            pct.replace("%20", "+"),
            quoted,
        ] {
            let text = format!("got 500 — Authorization: Bearer {form}!");
            assert_eq!(
                mask.mask_str(&text),
                "got 500 — Authorization: Bearer ***!",
                "{form}"
            );
        }
        let mut v = json!({"a": [secret, {"k": format!("x{secret}y")}], secret: 1, "n": 3});
        mask.mask_value(&mut v);
        assert_eq!(v, json!({"a": ["***", {"k": "x***y"}], "***": 1, "n": 3}));
    }

    #[test]
    fn a_prefix_is_masked_before_the_cut_and_a_cut_off_value_is_dropped() {
        let mask = SecretMask::new();
        mask.add("tok-123456");
        assert_eq!(mask.mask_prefix("ab tok-123456 cd", 6, false), "ab ***");
        // Only the start of a longer text: its tail may be the value cut short.
        assert_eq!(mask.mask_prefix("tok-123456 tok-12", 100, true), "*** ");
        assert_eq!(
            mask.mask_prefix("tok-123456 tok-12", 100, false),
            "*** tok-12"
        );
        assert_eq!(mask.mask_prefix("é tok", 100, true), "é ");
        assert_eq!(mask.longest_form(), "dG9rLTEyMzQ1Ng==".len());
    }

    #[test]
    fn a_mask_keeps_the_newest_values_up_to_its_cap() {
        let mask = SecretMask::new();
        let value = |i: usize| format!("secret-value-{i:05}");
        for i in 0..MAX_VALUES {
            mask.add(&value(i));
        }
        // Re-learning the oldest makes it the newest: the next new value drops value 1.
        mask.add(&value(0));
        mask.add(&value(MAX_VALUES));
        assert_eq!(mask.mask_str(&value(0)), "***");
        assert_eq!(mask.mask_str(&value(1)), value(1), "dropped");
        let encoded = STANDARD.encode(value(1));
        assert_eq!(mask.mask_str(&encoded), encoded, "with its forms");
        assert_eq!(mask.mask_str(&value(2)), "***");
        assert_eq!(mask.mask_str(&value(MAX_VALUES)), "***");
    }

    #[test]
    fn short_values_and_an_empty_mask_change_nothing() {
        let mask = SecretMask::new();
        assert!(matches!(mask.mask_str("abc"), Cow::Borrowed(_)));
        mask.add("abc");
        assert!(mask.is_empty());
        mask.add_form("dXNlcjpwYXNz");
        assert_eq!(mask.mask_str("Basic dXNlcjpwYXNz"), "Basic ***");
        assert!(!format!("{mask:?}").contains("dXNl"));
    }
}
