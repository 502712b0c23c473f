//! The `format` validators of ajv-formats 3 in "full" mode, and the `compare` functions behind
//! `formatMinimum`/`formatMaximum`/`formatExclusiveMinimum`/`formatExclusiveMaximum`.

use regress::Regex;
use std::cmp::Ordering;
use std::sync::LazyLock;

/// A known format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Date,
    Time,
    DateTime,
    IsoTime,
    IsoDateTime,
    Duration,
    Uri,
    UriReference,
    UriTemplate,
    Url,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Regex,
    Uuid,
    JsonPointer,
    JsonPointerUriFragment,
    RelativeJsonPointer,
    Byte,
    Int32,
    Int64,
    Float,
    Double,
    /// `password`, `binary`: always valid.
    Any,
}

/// Which JSON type a format checks; other types pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormatType {
    String,
    Number,
}

impl Format {
    pub(crate) fn by_name(name: &str) -> Option<Format> {
        Some(match name {
            "date" => Format::Date,
            "time" => Format::Time,
            "date-time" => Format::DateTime,
            "iso-time" => Format::IsoTime,
            "iso-date-time" => Format::IsoDateTime,
            "duration" => Format::Duration,
            "uri" => Format::Uri,
            "uri-reference" => Format::UriReference,
            "uri-template" => Format::UriTemplate,
            "url" => Format::Url,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "regex" => Format::Regex,
            "uuid" => Format::Uuid,
            "json-pointer" => Format::JsonPointer,
            "json-pointer-uri-fragment" => Format::JsonPointerUriFragment,
            "relative-json-pointer" => Format::RelativeJsonPointer,
            "byte" => Format::Byte,
            "int32" => Format::Int32,
            "int64" => Format::Int64,
            "float" => Format::Float,
            "double" => Format::Double,
            "password" | "binary" => Format::Any,
            _ => return None,
        })
    }

    pub(crate) fn data_type(self) -> Option<FormatType> {
        match self {
            Format::Any => None,
            Format::Int32 | Format::Int64 | Format::Float | Format::Double => {
                Some(FormatType::Number)
            }
            _ => Some(FormatType::String),
        }
    }

    /// Whether the format defines `compare` (needed by the `format*` limit keywords).
    pub(crate) fn has_compare(self) -> bool {
        matches!(
            self,
            Format::Date | Format::Time | Format::DateTime | Format::IsoTime | Format::IsoDateTime
        )
    }

    pub(crate) fn check_str(self, s: &str) -> bool {
        match self {
            Format::Date => date(s),
            Format::Time => time(s, true),
            Format::IsoTime => time(s, false),
            Format::DateTime => date_time(s, true),
            Format::IsoDateTime => date_time(s, false),
            Format::Duration => re_test(&DURATION, s),
            Format::Uri => s.contains(['/', ':']) && re_test(&URI, s),
            Format::UriReference => re_test(&URI_REFERENCE, s),
            Format::UriTemplate => re_test(&URI_TEMPLATE, s),
            Format::Url => re_test(&URL, s),
            Format::Email => email(s),
            Format::Hostname => hostname(s),
            Format::Ipv4 => ipv4(s),
            Format::Ipv6 => re_test(&IPV6, s),
            // A value too complex to compile safely is not a regex Kindgi accepts.
            Format::Regex => {
                !re_test(&Z_ANCHOR, s) && crate::jsregex::guarded(s, "").is_ok_and(|r| r.is_ok())
            }
            Format::Uuid => uuid(s),
            Format::JsonPointer => re_test(&JSON_POINTER, s),
            Format::JsonPointerUriFragment => re_test(&JSON_POINTER_URI_FRAGMENT, s),
            Format::RelativeJsonPointer => re_test(&RELATIVE_JSON_POINTER, s),
            Format::Byte => re_test(&BYTE, s),
            _ => true,
        }
    }

    pub(crate) fn check_num(self, n: &serde_json::Number) -> bool {
        match self {
            Format::Int32 => {
                let f = crate::js::num(n);
                crate::js::is_integer(n) && (-2_147_483_648.0..=2_147_483_647.0).contains(&f)
            }
            Format::Int64 => crate::js::is_integer(n),
            _ => true,
        }
    }

    /// The format's `compare(a, b)`; `None` stands for JavaScript's `undefined`.
    pub(crate) fn compare(self, a: &str, b: &str) -> Option<f64> {
        if a.is_empty() || b.is_empty() {
            return None;
        }
        match self {
            Format::Date => Some(ord(a.cmp(b))),
            Format::Time => {
                let t1 = js_date_parse(&format!("2020-01-01T{a}"))?;
                let t2 = js_date_parse(&format!("2020-01-01T{b}"))?;
                if t1 == 0.0 || t2 == 0.0 {
                    return None;
                }
                Some(t1 - t2)
            }
            Format::DateTime => {
                let t1 = js_date_parse(a)?;
                let t2 = js_date_parse(b)?;
                if t1 == 0.0 || t2 == 0.0 {
                    return None;
                }
                Some(t1 - t2)
            }
            Format::IsoTime => {
                let t1 = parse_time(a)?;
                let t2 = parse_time(b)?;
                let key = |t: &TimeParts<'_>| format!("{}{}{}", t.hms.0, t.hms.1, t.hms.2);
                Some(ord(key(&t1).cmp(&key(&t2))))
            }
            Format::IsoDateTime => {
                let (d1, t1) = split_date_time(a);
                let (d2, t2) = split_date_time(b);
                let res = Format::Date.compare(d1, d2)?;
                if res != 0.0 {
                    return Some(res);
                }
                Format::Time.compare(t1.unwrap_or(""), t2.unwrap_or(""))
            }
            _ => None,
        }
    }
}

fn ord(o: Ordering) -> f64 {
    match o {
        Ordering::Less => -1.0,
        Ordering::Equal => 0.0,
        Ordering::Greater => 1.0,
    }
}

fn re(pattern: &str, flags: &str) -> Option<Regex> {
    // The patterns are constants, checked by the unit tests below.
    Regex::with_flags(pattern, flags).ok()
}

fn re_test(r: &Option<Regex>, s: &str) -> bool {
    let Some(r) = r else { return false };
    if s.is_ascii() {
        r.find_ascii(s).is_some()
    } else {
        r.find(s).is_some()
    }
}

// Hand-written equivalents of ajv-formats' regular expressions for the formats tools use most
// (same language, much faster than a backtracking interpreter). The regexes stay as the
// reference in the unit tests below.

fn email_local_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~-".contains(&b)
}

/// `^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[…]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$` (i)
fn email(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(at) = b.iter().position(|&c| c == b'@') else {
        return false;
    };
    let (local, domain) = (&b[..at], &b[at + 1..]);
    if local.is_empty()
        || !local
            .split(|&c| c == b'.')
            .all(|atom| !atom.is_empty() && atom.iter().all(|&c| email_local_char(c)))
    {
        return false;
    }
    let mut labels = 0;
    for label in domain.split(|&c| c == b'.') {
        let ok = !label.is_empty()
            && label[0].is_ascii_alphanumeric()
            && label[label.len() - 1].is_ascii_alphanumeric()
            && label
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'-');
        if !ok {
            return false;
        }
        labels += 1;
    }
    labels >= 2
}

/// `^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$` (i)
fn uuid(s: &str) -> bool {
    let b = s.as_bytes();
    let b = if b.len() > 9 && b[..9].eq_ignore_ascii_case(b"urn:uuid:") {
        &b[9..]
    } else {
        b
    };
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Four decimal octets 0–255 without leading zeros.
fn ipv4(s: &str) -> bool {
    let mut n = 0;
    for part in s.split('.') {
        n += 1;
        let b = part.as_bytes();
        let ok = !b.is_empty()
            && b.len() <= 3
            && b.iter().all(u8::is_ascii_digit)
            && (b.len() == 1 || b[0] != b'0')
            && part.parse::<u16>().is_ok_and(|v| v <= 255);
        if !ok {
            return false;
        }
    }
    n == 4
}

/// Labels of 1–63 alphanumerics/hyphens (alphanumeric at both ends), dot-separated, an
/// optional final dot, at most 253 characters before it.
fn hostname(s: &str) -> bool {
    let b = s.as_bytes();
    let body = b.strip_suffix(b".").unwrap_or(b);
    if body.is_empty() || body.len() > 253 {
        return false;
    }
    body.split(|&c| c == b'.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label[0].is_ascii_alphanumeric()
            && label[label.len() - 1].is_ascii_alphanumeric()
            && label
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'-')
    })
}

/// JavaScript's `\s`.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The parts of TIME: `(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?` (i).
struct TimeParts<'a> {
    hms: (&'a str, &'a str, &'a str),
    zone: Option<(i8, u32, u32)>,
}

fn parse_time(s: &str) -> Option<TimeParts<'_>> {
    let b = s.as_bytes();
    let d2 = |i: usize| {
        b.get(i).is_some_and(u8::is_ascii_digit) && b.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    if !(d2(0) && b.get(2) == Some(&b':') && d2(3) && b.get(5) == Some(&b':') && d2(6)) {
        return None;
    }
    let mut i = 8;
    if b.get(i) == Some(&b'.') {
        let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    let hms = (&s[0..2], &s[3..5], &s[6..i]);
    let rest = &b[i..];
    let num = |x: &[u8]| u32::from(x[0] - b'0') * 10 + u32::from(x[1] - b'0');
    let zone = match rest {
        [] => None,
        [b'z' | b'Z'] => Some((0, 0, 0)),
        [sign @ (b'+' | b'-'), h1, h2, tail @ ..] if h1.is_ascii_digit() && h2.is_ascii_digit() => {
            let sign = if *sign == b'-' { -1 } else { 1 };
            let tz_h = num(&[*h1, *h2]);
            let tz_m = match tail {
                [] => 0,
                [m1, m2] | [b':', m1, m2] if m1.is_ascii_digit() && m2.is_ascii_digit() => {
                    num(&[*m1, *m2])
                }
                _ => return None,
            };
            Some((sign, tz_h, tz_m))
        }
        _ => return None,
    };
    Some(TimeParts { hms, zone })
}

const IPV6_IN_URI: &str = r"(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)";
const IPV4_IN_URI: &str =
    r"(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)";

fn uri_pattern(scheme_optional: bool, quote: &str) -> String {
    let scheme = if scheme_optional {
        r"(?:[a-z][a-z0-9+\-.]*:)?"
    } else {
        r"(?:[a-z][a-z0-9+\-.]*:)"
    };
    let pchar = format!(r"(?:[a-z0-9\-._~!$&'{quote}()*+,;=:@]|%[0-9a-f]{{2}})");
    let host = format!(r"(?:[a-z0-9\-._~!$&'{quote}()*+,;=]|%[0-9a-f]{{2}})*");
    let user = r"(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?";
    let qf = format!(r"(?:[a-z0-9\-._~!$&'{quote}()*+,;=:@/?]|%[0-9a-f]{{2}})*");
    let tail = if scheme_optional { ")?" } else { ")" };
    format!(
        r"^{scheme}(?:\/?\/{user}(?:\[{IPV6_IN_URI}\]|{IPV4_IN_URI}|{host})(?::\d*)?(?:\/{pchar}*)*|\/(?:{pchar}+(?:\/{pchar}*)*)?|{pchar}+(?:\/{pchar}*)*{tail}(?:\?{qf})?(?:#{qf})?$"
    )
}

static URI: LazyLock<Option<Regex>> = LazyLock::new(|| re(&uri_pattern(false, ""), "i"));
static URI_REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| re(&uri_pattern(true, "\""), "i"));
static URI_TEMPLATE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r#"^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$"#,
        "i",
    )
});
static URL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$",
        "iu",
    )
});
#[cfg(test)]
static EMAIL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$",
        "i",
    )
});
#[cfg(test)]
static HOSTNAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$",
        "i",
    )
});
#[cfg(test)]
static IPV4: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
        "",
    )
});
static IPV6: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let v4 = r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})";
    let h = "[0-9a-f]{1,4}";
    let p = format!(
        "^((({h}:){{7}}({h}|:))|(({h}:){{6}}(:{h}|{v4}|:))|(({h}:){{5}}(((:{h}){{1,2}})|:{v4}|:))|(({h}:){{4}}(((:{h}){{1,3}})|((:{h})?:{v4})|:))|(({h}:){{3}}(((:{h}){{1,4}})|((:{h}){{0,2}}:{v4})|:))|(({h}:){{2}}(((:{h}){{1,5}})|((:{h}){{0,3}}:{v4})|:))|(({h}:){{1}}(((:{h}){{1,6}})|((:{h}){{0,4}}:{v4})|:))|(:(((:{h}){{1,7}})|((:{h}){{0,5}}:{v4})|:)))$"
    );
    re(&p, "i")
});
#[cfg(test)]
static UUID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$",
        "i",
    )
});
static JSON_POINTER: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^(?:\/(?:[^~/]|~0|~1)*)*$", ""));
static JSON_POINTER_URI_FRAGMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$",
        "i",
    )
});
static RELATIVE_JSON_POINTER: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$", ""));
static BYTE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
        "m",
    )
});
static DURATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$",
        "",
    )
});
static Z_ANCHOR: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"[^\\]\\Z", ""));
#[cfg(test)]
static TIME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(
        r"^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$",
        "i",
    )
});
#[cfg(test)]
static DATE_TIME_SEPARATOR: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"t|\s", "i"));

fn digits(s: &str) -> Option<u32> {
    if s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn is_leap(y: u32) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in(y: u32, m: u32) -> u32 {
    const DAYS: [u32; 13] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if m == 2 && is_leap(y) {
        29
    } else {
        DAYS[m as usize]
    }
}

fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10]))
    else {
        return false;
    };
    (1..=12).contains(&m) && d >= 1 && d <= days_in(y, m)
}

fn time(s: &str, strict_zone: bool) -> bool {
    let Some(t) = parse_time(s) else { return false };
    // Whole seconds decide every comparison below (`sec < 60`, `sec < 61`), so the fraction
    // can be ignored: 59.x < 60, 60.x < 61.
    let two = |x: &str| -> f64 {
        let b = x.as_bytes();
        f64::from(b[0] - b'0') * 10.0 + f64::from(b[1] - b'0')
    };
    let (hr, min, sec) = (two(t.hms.0), two(t.hms.1), two(t.hms.2));
    let (sign, tz_h, tz_m) = match t.zone {
        Some((sg, h, m)) => (f64::from(sg), f64::from(h), f64::from(m)),
        None => (1.0, 0.0, 0.0),
    };
    if tz_h > 23.0 || tz_m > 59.0 || (strict_zone && t.zone.is_none()) {
        return false;
    }
    if hr <= 23.0 && min <= 59.0 && sec < 60.0 {
        return true;
    }
    let utc_min = min - tz_m * sign;
    let utc_hr = hr - tz_h * sign - if utc_min < 0.0 { 1.0 } else { 0.0 };
    (utc_hr == 23.0 || utc_hr == -1.0) && (utc_min == 59.0 || utc_min == -1.0) && sec < 61.0
}

fn split_date_time(s: &str) -> (&str, Option<&str>) {
    match s
        .char_indices()
        .find(|(_, c)| *c == 't' || *c == 'T' || js_space(*c))
    {
        Some((at, c)) => {
            let rest = &s[at + c.len_utf8()..];
            // `split` then destructuring takes the text up to the next separator.
            let end = rest
                .char_indices()
                .find(|(_, c)| *c == 't' || *c == 'T' || js_space(*c))
                .map_or(rest.len(), |(i, _)| i);
            (&s[..at], Some(&rest[..end]))
        }
        None => (s, None),
    }
}

fn date_time(s: &str, strict_zone: bool) -> bool {
    // `str.split(/t|\s/i)` must give exactly two parts.
    let mut seps = s
        .char_indices()
        .filter(|(_, c)| *c == 't' || *c == 'T' || js_space(*c));
    let Some((at, c)) = seps.next() else {
        return false;
    };
    if seps.next().is_some() {
        return false;
    }
    date(&s[..at]) && time(&s[at + c.len_utf8()..], strict_zone)
}

/// `new Date(s).valueOf()` for ISO-8601 style strings (the forms the compare functions meet);
/// local time is taken as UTC. `None` is `NaN`.
fn js_date_parse(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = digits(&s[0..4])? as i64;
    let mo = digits(&s[5..7])? as i64;
    let d = digits(&s[8..10])? as i64;
    if !(1..=12).contains(&mo) || d < 1 || d > i64::from(days_in(y as u32, mo as u32)) {
        return None;
    }
    let mut rest = &s[10..];
    let (mut h, mut mi, mut sec, mut ms) = (0i64, 0i64, 0i64, 0f64);
    let mut offset_min = 0i64;
    if !rest.is_empty() {
        let sep = rest.as_bytes()[0];
        if !matches!(sep, b'T' | b't' | b' ') {
            return None;
        }
        rest = &rest[1..];
        let rb = rest.as_bytes();
        if rb.len() < 5 || rb[2] != b':' {
            return None;
        }
        h = i64::from(digits(&rest[0..2])?);
        mi = i64::from(digits(&rest[3..5])?);
        rest = &rest[5..];
        if rest.starts_with(':') {
            let sb = rest.as_bytes();
            if sb.len() < 3 {
                return None;
            }
            sec = i64::from(digits(&rest[1..3])?);
            rest = &rest[3..];
            if rest.starts_with('.') {
                let n = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
                if n == 0 {
                    return None;
                }
                let frac: f64 = format!("0.{}", &rest[1..1 + n]).parse().ok()?;
                ms = (frac * 1000.0).floor();
                rest = &rest[1 + n..];
            }
        }
        if rest.eq_ignore_ascii_case("z") {
            rest = "";
        } else if rest.starts_with(['+', '-']) {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let z = &rest[1..];
            let (oh, om) = if z.len() == 5 && z.as_bytes()[2] == b':' {
                (digits(&z[0..2])?, digits(&z[3..5])?)
            } else if z.len() == 4 {
                (digits(&z[0..2])?, digits(&z[2..4])?)
            } else {
                return None;
            };
            if oh > 23 || om > 59 {
                return None;
            }
            offset_min = sign * (i64::from(oh) * 60 + i64::from(om));
            rest = "";
        }
        if !rest.is_empty()
            || h > 24
            || mi > 59
            || sec > 59
            || (h == 24 && (mi > 0 || sec > 0 || ms > 0.0))
        {
            return None;
        }
    }
    let days = days_from_civil(y, mo, d);
    let t = ((days * 24 + h) * 60 + mi - offset_min) * 60 + sec;
    Some(t as f64 * 1000.0 + ms)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn formats_behave_like_ajv_formats() {
        let f = |n: &str, s: &str| Format::by_name(n).unwrap().check_str(s);
        assert!(f("date-time", "2024-01-01 10:00:00+02:00"));
        assert!(f("date-time", "2024-01-01t10:00:00.5z"));
        assert!(!f("date-time", "2024-02-29T12:30:00"));
        assert!(f("date-time", "1990-12-31T23:59:60Z"));
        assert!(!f("date", "2023-02-29"));
        assert!(!f("time", "10:00:00"));
        assert!(f("email", "first.last+tag@example.co.uk"));
        assert!(!f("email", "a@localhost"));
        assert!(f("uri", "urn:isbn:0451450523"));
        assert!(!f("uri", "/relative/path"));
        assert!(f("uri-reference", "http://[::1]:80/"));
        assert!(!f("uri-reference", "\\\\bad"));
        assert!(f("uuid", "urn:uuid:123e4567-e89b-12d3-a456-426614174000"));
        assert!(f("ipv6", "::ffff:192.0.2.128"));
        assert!(!f("ipv6", "12345::"));
        assert!(!f("hostname", "-bad.com"));
        assert!(!f("regex", "("));
        assert!(f("regex", "\\p{L}"));
        assert!(!f("duration", "PT"));
        assert!(f("duration", "P1Y2M"));
        assert!(f("url", "https://example.com/a"));
        assert!(f("uri-template", "http://example.com/{id}"));
        assert!(f("byte", "QUJD"));
        assert!(f("json-pointer", "/a~0b"));
        assert!(f("relative-json-pointer", "0#"));
        assert!(f("json-pointer-uri-fragment", "#/a%20b"));
    }

    /// The hand-written checkers agree with ajv-formats' regexes.
    #[test]
    fn hand_written_match_the_regexes() {
        use super::*;
        let samples = [
            "a@b.co",
            "a.b@c.d.e",
            "a..b@c.de",
            ".a@b.co",
            "a@b",
            "a@-b.co",
            "a@b-.co",
            "A@B.CO",
            "a@b.c0",
            "a@@b.co",
            "a@b..co",
            "x@y.z.",
            "@b.co",
            "a@",
            "user+tag@sub.example.org",
            "üser@example.com",
            "example.com",
            "a",
            "a.b.c",
            "-a.b",
            "a_b.c",
            "example.com.",
            "1.2.3.4",
            "0.0.0.0",
            "255.255.255.255",
            "256.1.1.1",
            "01.2.3.4",
            "1.2.3",
            "1.2.3.4.5",
            "1..3.4",
            "",
            ".",
            "a-.b",
            "123e4567-e89b-12d3-a456-426614174000",
            "URN:UUID:123E4567-E89B-12D3-A456-426614174000",
            "123e4567e89b12d3a456426614174000",
            "urn:uuid:123e4567-e89b-12d3-a456-42661417400g",
            "12:00:00Z",
            "12:00:00.5+01:30",
            "12:00:00+0130",
            "12:00:00+01",
            "12:00:00+01:",
            "12:00:00.Z",
            "12:00",
            "12:00:00z",
        ];
        for s in samples {
            assert_eq!(
                email(s),
                EMAIL.as_ref().unwrap().find(s).is_some(),
                "email {s:?}"
            );
            assert_eq!(
                hostname(s),
                HOSTNAME.as_ref().unwrap().find(s).is_some(),
                "hostname {s:?}"
            );
            assert_eq!(
                ipv4(s),
                IPV4.as_ref().unwrap().find(s).is_some(),
                "ipv4 {s:?}"
            );
            assert_eq!(
                uuid(s),
                UUID.as_ref().unwrap().find(s).is_some(),
                "uuid {s:?}"
            );
            assert_eq!(
                parse_time(s).is_some(),
                TIME.as_ref().unwrap().find(s).is_some(),
                "time {s:?}"
            );
        }
        let long = format!("{}.com", "a".repeat(63));
        assert_eq!(
            hostname(&long),
            HOSTNAME.as_ref().unwrap().find(&long).is_some()
        );
        let too_long = format!("{}a", "abcdefghi.".repeat(25));
        assert_eq!(
            hostname(&too_long),
            HOSTNAME.as_ref().unwrap().find(&too_long).is_some()
        );
        let _ = &DATE_TIME_SEPARATOR;
    }

    #[test]
    fn compares_times() {
        assert_eq!(Format::Date.compare("2020-01-01", "2021-01-01"), Some(-1.0));
        assert!(
            Format::DateTime
                .compare("2020-01-01T00:00:01Z", "2020-01-01T00:00:00Z")
                .unwrap()
                > 0.0
        );
        assert!(Format::Time.compare("10:00:00Z", "09:00:00-02:00").unwrap() < 0.0);
    }
}
