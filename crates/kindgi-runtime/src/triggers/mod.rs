//! Triggers: what starts runs nobody watches. Schedules (platform-api.md §8) are a pure
//! machine ([`schedule`]: cron in a time zone, daylight saving, catch-up) and its driver
//! ([`schedule_loop`]: the task that fires them over core's `ScheduleStore` port, as their
//! owners). The runs they start carry `startedBy` and `trigger` (core's `trigger` words).

pub mod schedule;
pub mod schedule_loop;

pub use schedule::{CronError, CronSpec};
pub use schedule_loop::Schedules;
