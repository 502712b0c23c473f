//! The schedule machine, pure: a cron expression in a time zone ([`CronSpec`]) and, given a
//! schedule's next occurrence, its policies and `now`, what to do ([`plan`]) — nothing yet,
//! fire one occurrence (with `missedCount` after a gap), or drop the missed ones. Never a run
//! per missed occurrence.
//!
//! **Cron.** 5 fields, or 6 with seconds first, and the shorthands (`@daily`, `@hourly`…),
//! parsed by `croner` (the reference's runtime uses croner too). A sub-minute expression is
//! refused unless allowed (`kindgi dev`).
//!
//! **Daylight saving.** Occurrences are found in the zone's wall-clock time (croner walks
//! naive times, which have no transitions) and each is then placed on the time line: a wall
//! time in the spring-forward gap (Europe/Berlin 2026-03-29 02:30) fires once, at the first
//! valid instant after it (03:00 CEST); a wall time in the repeated autumn hour (2026-10-25
//! 02:30) fires once, at its first (summer-time) instant. Occurrences that land on an
//! instant at or before the previous one are passed over, so the gap's several wall times
//! fire once and the repeated hour is not fired twice.

use chrono::{DateTime, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use kindgi_core::schedule::CatchUp;

/// At most this many occurrences are counted for one plan (`missedCount` saturates here).
pub const MAX_COUNTED: u32 = 10_000;
/// The shortest interval between two occurrences outside `kindgi dev`, in milliseconds.
pub const MIN_INTERVAL_MS: i64 = 60_000;
/// How many wall-clock occurrences one [`CronSpec::next_after`] walks at most.
const MAX_WALK: usize = 100_000;

/// Why a cron expression or time zone was refused; `field()` names the body field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    #[error(
        "`config.cronExpression` is not a valid cron expression ({reason}): use 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or a shorthand such as @daily"
    )]
    Expression { reason: String },
    #[error(
        "`config.cronExpression` has no occurrence after now: give an expression that matches a future time"
    )]
    NoOccurrence,
    #[error(
        "`config.cronExpression` fires more often than once a minute, the shortest interval allowed here (`kindgi dev` allows shorter): use an expression at least a minute apart"
    )]
    TooFrequent,
    #[error(
        "`config.timezone` is not an IANA time zone ({name:?}): use a name such as UTC, Europe/Berlin or America/New_York"
    )]
    Timezone { name: String },
}

impl CronError {
    /// The body field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            CronError::Timezone { .. } => "config.timezone",
            _ => "config.cronExpression",
        }
    }
}

/// A parsed cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct CronSpec {
    cron: croner::Cron,
    tz: Tz,
}

impl CronSpec {
    /// Parses `expression` in `timezone` (`None`: UTC). `allow_sub_minute`: accept an
    /// expression whose occurrences come less than a minute apart.
    pub fn parse(
        expression: &str,
        timezone: Option<&str>,
        allow_sub_minute: bool,
        now: i64,
    ) -> Result<CronSpec, CronError> {
        let tz = match timezone {
            None => Tz::UTC,
            Some(name) => name.parse::<Tz>().map_err(|_| CronError::Timezone {
                name: name.chars().take(64).collect(),
            })?,
        };
        if expression.len() > 256 {
            return Err(CronError::Expression {
                reason: "longer than 256 characters".into(),
            });
        }
        let cron = croner::Cron::new(expression.trim())
            .with_seconds_optional()
            .parse()
            .map_err(|e| CronError::Expression {
                reason: e.to_string(),
            })?;
        let spec = CronSpec { cron, tz };
        let first = spec.next_after(now).ok_or(CronError::NoOccurrence)?;
        if !allow_sub_minute {
            let mut at = first;
            for _ in 0..8 {
                let Some(next) = spec.next_after(at) else {
                    break;
                };
                if next - at < MIN_INTERVAL_MS {
                    return Err(CronError::TooFrequent);
                }
                at = next;
            }
        }
        Ok(spec)
    }

    /// The first occurrence strictly after `t` (Unix milliseconds).
    pub fn next_after(&self, t: i64) -> Option<i64> {
        let instant = Utc.timestamp_millis_opt(t).single()?;
        let mut cursor = as_naive_utc(instant.with_timezone(&self.tz).naive_local());
        for _ in 0..MAX_WALK {
            let wall = self.cron.find_next_occurrence(&cursor, false).ok()?;
            let at = place(&self.tz, wall.naive_utc())?;
            if at > t {
                return Some(at);
            }
            cursor = wall;
        }
        None
    }

    /// The next `n` occurrences after `t`, ascending.
    pub fn upcoming(&self, t: i64, n: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(n);
        let mut at = t;
        while out.len() < n {
            match self.next_after(at) {
                Some(next) => {
                    out.push(next);
                    at = next;
                }
                None => break,
            }
        }
        out
    }

    /// The latest occurrence at or before `now`, searching no earlier than `since`, and how
    /// many occurrences lie in `[since, now]` (saturating at [`MAX_COUNTED`]).
    fn latest_until(&self, since: i64, now: i64) -> (i64, u32) {
        let mut latest = since;
        let mut count = 1u32;
        while count < MAX_COUNTED {
            match self.next_after(latest) {
                Some(next) if next <= now => {
                    latest = next;
                    count += 1;
                }
                _ => return (latest, count),
            }
        }
        // Too many to walk: find the latest from a window before `now`, doubled until it
        // holds one (a second for an every-second cron, a year for a yearly one).
        let mut window = 1_000i64;
        while window < now - since {
            if let Some(at) = self.next_after(now - window)
                && at <= now
            {
                let mut latest = at;
                while let Some(next) = self.next_after(latest).filter(|n| *n <= now) {
                    latest = next;
                }
                return (latest, MAX_COUNTED);
            }
            window = window.saturating_mul(2);
        }
        (latest, count)
    }
}

/// A wall-clock time as a UTC date-time, so croner walks it without transitions.
fn as_naive_utc(naive: NaiveDateTime) -> DateTime<Utc> {
    Utc.from_utc_datetime(&naive)
}

/// Where wall-clock `wall` of `tz` falls on the time line: the instant, the first of two in
/// a repeated hour, or the first valid instant after it in a gap.
pub fn place(tz: &Tz, wall: NaiveDateTime) -> Option<i64> {
    match tz.from_local_datetime(&wall) {
        LocalResult::Single(t) => Some(t.timestamp_millis()),
        LocalResult::Ambiguous(first, _) => Some(first.timestamp_millis()),
        LocalResult::None => {
            // Walk whole minutes forward to the end of the gap (transitions are on minutes;
            // the longest gaps are a day).
            let start = wall.with_second_free()?;
            (1..=48 * 60).find_map(|m| {
                let t = start + chrono::Duration::minutes(m);
                match tz.from_local_datetime(&t) {
                    LocalResult::Single(t) => Some(t.timestamp_millis()),
                    LocalResult::Ambiguous(first, _) => Some(first.timestamp_millis()),
                    LocalResult::None => None,
                }
            })
        }
    }
}

/// A wall time truncated to its minute.
trait SecondFree {
    fn with_second_free(self) -> Option<NaiveDateTime>;
}

impl SecondFree for NaiveDateTime {
    fn with_second_free(self) -> Option<NaiveDateTime> {
        use chrono::Timelike;
        self.with_second(0)?.with_nanosecond(0)
    }
}

/// What a schedule should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing is due before this instant.
    Wait(i64),
    /// Claim the occurrence `scheduled_for`; afterwards the next one is `next`.
    Fire {
        scheduled_for: i64,
        /// Occurrences this fire stands in for after a gap (`catchUp: latest`).
        missed_count: Option<u32>,
        next: Option<i64>,
    },
    /// Drop the missed occurrences (`catchUp: skip`): move `next_fire_at` from `from` to
    /// `to`.
    Drop { from: i64, to: Option<i64> },
    /// The expression has no more occurrences.
    Done,
}

/// The plan for a schedule whose earliest unfired occurrence is `next_fire_at`, at `now`.
///
/// The occurrences due are those in `[next_fire_at, now]`. One of them, on time (within
/// `starting_deadline_ms` of `now`), fires as usual. Several — the loop was down or
/// behind — or one that is late are a gap: `latest` fires once, for the latest, with
/// `missedCount` (the occurrences it stands for other than an on-time latest one), and
/// `skip` drops the missed ones, firing the latest only when it is itself on time.
pub fn plan(
    spec: &CronSpec,
    next_fire_at: Option<i64>,
    catch_up: CatchUp,
    starting_deadline_ms: i64,
    now: i64,
) -> Step {
    let Some(first) = next_fire_at else {
        return Step::Done;
    };
    if first > now {
        return Step::Wait(first);
    }
    let (latest, count) = spec.latest_until(first, now);
    let next = spec.next_after(latest);
    let on_time = now - latest <= starting_deadline_ms;
    match (on_time, count, catch_up) {
        (true, 1, _) => Step::Fire {
            scheduled_for: latest,
            missed_count: None,
            next,
        },
        (true, n, CatchUp::Latest) => Step::Fire {
            scheduled_for: latest,
            missed_count: Some(n - 1),
            next,
        },
        (true, _, CatchUp::Skip) => Step::Fire {
            scheduled_for: latest,
            missed_count: None,
            next,
        },
        (false, n, CatchUp::Latest) => Step::Fire {
            scheduled_for: latest,
            missed_count: Some(n),
            next,
        },
        (false, _, CatchUp::Skip) => Step::Drop {
            from: first,
            to: next,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    fn iso(t: i64) -> String {
        kindgi_core::format_millis(t)
    }

    fn spec(expr: &str, tz: &str) -> CronSpec {
        CronSpec::parse(expr, Some(tz), true, ms("2026-01-01T00:00:00Z")).unwrap()
    }

    #[test]
    fn five_and_six_fields_and_shorthands() {
        let t = ms("2026-05-01T10:00:30Z");
        assert_eq!(
            iso(spec("*/15 * * * *", "UTC").next_after(t).unwrap()),
            "2026-05-01T10:15:00.000Z"
        );
        assert_eq!(
            iso(spec("*/10 * * * * *", "UTC").next_after(t).unwrap()),
            "2026-05-01T10:00:40.000Z"
        );
        assert_eq!(
            iso(spec("@daily", "UTC").next_after(t).unwrap()),
            "2026-05-02T00:00:00.000Z"
        );
        assert_eq!(
            iso(spec("@hourly", "UTC").next_after(t).unwrap()),
            "2026-05-01T11:00:00.000Z"
        );
    }

    #[test]
    fn refusals_name_their_field() {
        let now = ms("2026-01-01T00:00:00Z");
        let e = CronSpec::parse("every day", None, false, now).unwrap_err();
        assert_eq!(e.field(), "config.cronExpression");
        let e = CronSpec::parse("* * * * *", Some("Mars/Olympus"), false, now).unwrap_err();
        assert_eq!(e.field(), "config.timezone");
        assert_eq!(
            CronSpec::parse("* * * * * *", None, false, now).unwrap_err(),
            CronError::TooFrequent
        );
        assert!(CronSpec::parse("* * * * * *", None, true, now).is_ok());
        assert!(CronSpec::parse("* * * * *", None, false, now).is_ok());
    }

    #[test]
    fn berlin_spring_forward_gap_fires_once_at_the_first_valid_instant() {
        let s = spec("30 2 * * *", "Europe/Berlin");
        let day = s.upcoming(ms("2026-03-27T12:00:00Z"), 4);
        let got: Vec<String> = day.iter().map(|t| iso(*t)).collect();
        assert_eq!(
            got,
            [
                "2026-03-28T01:30:00.000Z", // 02:30 CET
                "2026-03-29T01:00:00.000Z", // 02:30 does not exist: 03:00 CEST
                "2026-03-30T00:30:00.000Z", // 02:30 CEST
                "2026-03-31T00:30:00.000Z",
            ]
        );
        // Every minute through the gap: 02:00..02:59 are one fire at 03:00 CEST.
        let m = spec("* * * * *", "Europe/Berlin");
        let got: Vec<String> = m
            .upcoming(ms("2026-03-29T00:58:00Z"), 3)
            .iter()
            .map(|t| iso(*t))
            .collect();
        assert_eq!(
            got,
            [
                "2026-03-29T00:59:00.000Z", // 01:59 CET
                "2026-03-29T01:00:00.000Z", // 03:00 CEST (the gap's minutes, once)
                "2026-03-29T01:01:00.000Z",
            ]
        );
    }

    #[test]
    fn berlin_repeated_autumn_hour_fires_once() {
        let s = spec("30 2 * * *", "Europe/Berlin");
        let got: Vec<String> = s
            .upcoming(ms("2026-10-24T12:00:00Z"), 3)
            .iter()
            .map(|t| iso(*t))
            .collect();
        assert_eq!(
            got,
            [
                "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first of the two
                "2026-10-26T01:30:00.000Z", // 02:30 CET
                "2026-10-27T01:30:00.000Z",
            ]
        );
        // Hourly: the wall time 02:00 fires once (CEST); the next is 03:00 CET.
        let h = spec("0 * * * *", "Europe/Berlin");
        let got: Vec<String> = h
            .upcoming(ms("2026-10-24T23:30:00Z"), 3)
            .iter()
            .map(|t| iso(*t))
            .collect();
        assert_eq!(
            got,
            [
                "2026-10-25T00:00:00.000Z", // 02:00 CEST
                "2026-10-25T02:00:00.000Z", // 03:00 CET (02:00 CET passed over)
                "2026-10-25T03:00:00.000Z",
            ]
        );
    }

    #[test]
    fn new_york_transitions() {
        let s = spec("30 2 * * *", "America/New_York");
        let got: Vec<String> = s
            .upcoming(ms("2026-03-07T12:00:00Z"), 2)
            .iter()
            .map(|t| iso(*t))
            .collect();
        // 2026-03-08 02:30 EST does not exist: 03:00 EDT = 07:00Z.
        assert_eq!(
            got,
            ["2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]
        );
        let got: Vec<String> = s
            .upcoming(ms("2026-10-31T12:00:00Z"), 2)
            .iter()
            .map(|t| iso(*t))
            .collect();
        // 2026-11-01 01:00–02:00 repeats; 02:30 is after it and single (EST).
        assert_eq!(
            got,
            ["2026-11-01T07:30:00.000Z", "2026-11-02T07:30:00.000Z"]
        );
        let one = spec("30 1 * * *", "America/New_York");
        let got: Vec<String> = one
            .upcoming(ms("2026-10-31T12:00:00Z"), 2)
            .iter()
            .map(|t| iso(*t))
            .collect();
        // 01:30 happens twice on 2026-11-01: once, at 01:30 EDT = 05:30Z.
        assert_eq!(
            got,
            ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]
        );
    }

    #[test]
    fn plans_are_bounded_after_a_gap() {
        let s = spec("* * * * *", "UTC");
        let now = ms("2026-05-01T12:00:30Z");
        // On time: fires the one due.
        assert_eq!(
            plan(
                &s,
                Some(ms("2026-05-01T12:00:00Z")),
                CatchUp::Latest,
                600_000,
                now
            ),
            Step::Fire {
                scheduled_for: ms("2026-05-01T12:00:00Z"),
                missed_count: None,
                next: Some(ms("2026-05-01T12:01:00Z")),
            }
        );
        // Down an hour, deadline 10 s: latest fires once for the 61 missed.
        let from = Some(ms("2026-05-01T11:00:00Z"));
        assert_eq!(
            plan(&s, from, CatchUp::Latest, 10_000, now),
            Step::Fire {
                scheduled_for: ms("2026-05-01T12:00:00Z"),
                missed_count: Some(61),
                next: Some(ms("2026-05-01T12:01:00Z")),
            }
        );
        assert_eq!(
            plan(&s, from, CatchUp::Skip, 10_000, now),
            Step::Drop {
                from: ms("2026-05-01T11:00:00Z"),
                to: Some(ms("2026-05-01T12:01:00Z")),
            }
        );
        // Not yet.
        assert_eq!(
            plan(&s, Some(now + 1), CatchUp::Skip, 10_000, now),
            Step::Wait(now + 1)
        );
        // A year of every-second occurrences is walked in bounded time.
        let every = spec("* * * * * *", "UTC");
        let step = plan(
            &every,
            Some(ms("2025-05-01T12:00:00Z")),
            CatchUp::Latest,
            600_000,
            now,
        );
        assert_eq!(
            step,
            Step::Fire {
                scheduled_for: ms("2026-05-01T12:00:30Z"),
                missed_count: Some(MAX_COUNTED - 1),
                next: Some(ms("2026-05-01T12:00:31Z")),
            }
        );
    }
}
