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
            Format::Email => re_test(&EMAIL, s),
            Format::Hostname => re_test(&HOSTNAME, s),
            Format::Ipv4 => re_test(&IPV4, s),
            Format::Ipv6 => re_test(&IPV6, s),
            Format::Regex => !re_test(&Z_ANCHOR, s) && Regex::with_flags(s, "").is_ok(),
            Format::Uuid => re_test(&UUID, s),
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
                let c1 = TIME.find(a)?;
                let c2 = TIME.find(b)?;
                let key = |s: &str, m: &regress::Match| -> String {
                    (1..=3).filter_map(|g| m.group(g).map(|r| &s[r])).collect()
                };
                Some(ord(key(a, &c1).cmp(&key(b, &c2))))
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

fn re(pattern: &str, flags: &str) -> Regex {
    match Regex::with_flags(pattern, flags) {
        Ok(r) => r,
        // The patterns are constants checked by the unit tests below.
        Err(_) => Regex::new("$^").unwrap_or_else(|_| unreachable_regex()),
    }
}

fn unreachable_regex() -> Regex {
    // `$^` always compiles; this keeps the code free of panics all the same.
    loop {
        if let Ok(r) = Regex::new("(?!)") {
            return r;
        }
    }
}

fn re_test(r: &Regex, s: &str) -> bool {
    r.find(s).is_some()
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

static URI: LazyLock<Regex> = LazyLock::new(|| re(&uri_pattern(false, ""), "i"));
static URI_REFERENCE: LazyLock<Regex> = LazyLock::new(|| re(&uri_pattern(true, "\""), "i"));
static URI_TEMPLATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$"#,
        "i",
    )
});
static URL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$",
        "iu",
    )
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$",
        "i",
    )
});
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$",
        "i",
    )
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
        "",
    )
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    let v4 = r"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})";
    let h = "[0-9a-f]{1,4}";
    let p = format!(
        "^((({h}:){{7}}({h}|:))|(({h}:){{6}}(:{h}|{v4}|:))|(({h}:){{5}}(((:{h}){{1,2}})|:{v4}|:))|(({h}:){{4}}(((:{h}){{1,3}})|((:{h})?:{v4})|:))|(({h}:){{3}}(((:{h}){{1,4}})|((:{h}){{0,2}}:{v4})|:))|(({h}:){{2}}(((:{h}){{1,5}})|((:{h}){{0,3}}:{v4})|:))|(({h}:){{1}}(((:{h}){{1,6}})|((:{h}){{0,4}}:{v4})|:))|(:(((:{h}){{1,7}})|((:{h}){{0,5}}:{v4})|:)))$"
    );
    re(&p, "i")
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$",
        "i",
    )
});
static JSON_POINTER: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:\/(?:[^~/]|~0|~1)*)*$", ""));
static JSON_POINTER_URI_FRAGMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$",
        "i",
    )
});
static RELATIVE_JSON_POINTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$", ""));
static BYTE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
        "m",
    )
});
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$",
        "",
    )
});
static Z_ANCHOR: LazyLock<Regex> = LazyLock::new(|| re(r"[^\\]\\Z", ""));
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$",
        "i",
    )
});
static DATE_TIME_SEPARATOR: LazyLock<Regex> = LazyLock::new(|| re(r"t|\s", "i"));

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
    let Some(m) = TIME.find(s) else { return false };
    let g = |i: usize| m.group(i).map(|r| &s[r]);
    let num = |i: usize| g(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    let hr = num(1);
    let min = num(2);
    let sec = num(3);
    let tz = g(4);
    let sign = if g(5) == Some("-") { -1.0 } else { 1.0 };
    let tz_h = num(6);
    let tz_m = num(7);
    if tz_h > 23.0 || tz_m > 59.0 || (strict_zone && tz.is_none()) {
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
    match DATE_TIME_SEPARATOR.find(s) {
        Some(m) => (&s[..m.start()], Some(&s[m.end()..])),
        None => (s, None),
    }
}

fn date_time(s: &str, strict_zone: bool) -> bool {
    let parts: Vec<regress::Match> = DATE_TIME_SEPARATOR.find_iter(s).collect();
    if parts.len() != 1 {
        return false;
    }
    let m = &parts[0];
    date(&s[..m.start()]) && time(&s[m.end()..], strict_zone)
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
