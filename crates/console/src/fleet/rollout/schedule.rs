//! When a rollout's waves may start: a start time, maintenance windows (days of the week and
//! hours in a chosen IANA time zone, daylight saving handled by the zone's rules) and a least
//! time between two waves' starts. Pure: every answer is computed from an instant given.
//!
//! The rules:
//!
//! - Only a wave's **start** is gated. A wave under way goes on after its window closes: its
//!   targets are set, and the service offers no way to make a device wait.
//! - A window `from`-`to` opens on each of its days at `from`, local time; a `to` at or before
//!   `from` ends on the next day (22:00-04:00 crosses midnight). `from` equal to `to` is refused.
//! - Local times are turned into instants by the zone's rules as clocks do: a time skipped by a
//!   change to summer time is taken that much later (02:30 on a night clocks jump from 02:00 to
//!   03:00 is 03:30), and a time that occurs twice (the change back) is its first occurrence.
//!   A window on such a night is therefore an hour shorter or longer in real time.
//! - Without windows, every moment is allowed.

use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde::{Deserialize, Serialize};

use crate::FieldError;

/// When a rollout's waves may start.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct Schedule {
    /// An IANA time zone name (`Europe/Berlin`, `UTC`): the zone of `startAt` without an offset
    /// and of every window.
    pub time_zone: String,
    /// No wave starts before this: RFC 3339 with an offset, or a local date and time
    /// (`2026-11-30T22:00`) in `timeZone`. Empty or absent: at once.
    pub start_at: Option<String>,
    /// When waves may start; none: at any time.
    pub windows: Vec<Window>,
    /// Least minutes between the starts of two waves (0: none).
    pub minutes_between_waves: u32,
}

/// A maintenance window: on each of `days`, from `from` to `to`, local time.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct Window {
    /// `mon` .. `sun`.
    pub days: Vec<String>,
    /// `HH:MM`, 24-hour.
    pub from: String,
    /// `HH:MM`; at or before `from`: on the next day.
    pub to: String,
}

/// The most windows a schedule may hold.
pub const MAX_WINDOWS: usize = 28;
/// The longest wait between two waves: a week.
pub const MAX_MINUTES_BETWEEN_WAVES: u32 = 7 * 24 * 60;
/// The latest start: a year ahead.
const MAX_START_AHEAD_MS: i64 = 366 * 24 * 3600 * 1000;

const DAYS: [(&str, Weekday); 7] = [
    ("mon", Weekday::Monday),
    ("tue", Weekday::Tuesday),
    ("wed", Weekday::Wednesday),
    ("thu", Weekday::Thursday),
    ("fri", Weekday::Friday),
    ("sat", Weekday::Saturday),
    ("sun", Weekday::Sunday),
];

/// A checked schedule, ready to answer.
#[derive(Debug, Clone)]
pub struct Calendar {
    tz: TimeZone,
    zone: String,
    start: Option<Timestamp>,
    windows: Vec<(Vec<Weekday>, Time, Time)>,
    gap_ms: i64,
}

impl Schedule {
    /// Checks every field, naming each broken one (`schedule.windows[1].from`), against `now`
    /// (a start must not be more than a year ahead). Answers the calendar, or every problem.
    pub fn check(&self, now_ms: i64) -> Result<Calendar, Vec<FieldError>> {
        let mut problems = Vec::new();
        let zone = self.time_zone.trim();
        let tz = match TimeZone::get(zone) {
            Ok(tz) if !zone.is_empty() => Some(tz),
            _ => {
                problems.push(FieldError::new(
                    "schedule.timeZone",
                    format!(
                        "`{zone}` is not an IANA time zone name (for example Europe/Berlin, America/New_York, UTC)"
                    ),
                ));
                None
            }
        };
        let mut windows = Vec::new();
        if self.windows.len() > MAX_WINDOWS {
            problems.push(FieldError::new("schedule.windows", format!("at most {MAX_WINDOWS} windows")));
        }
        for (i, w) in self.windows.iter().enumerate().take(MAX_WINDOWS) {
            let field = |f: &str| format!("schedule.windows[{i}].{f}");
            let mut days = Vec::new();
            for d in &w.days {
                match DAYS.iter().find(|(n, _)| n.eq_ignore_ascii_case(d.trim())) {
                    Some((_, wd)) if !days.contains(wd) => days.push(*wd),
                    Some(_) => {}
                    None => problems.push(FieldError::new(
                        field("days"),
                        format!("`{d}` is not one of mon, tue, wed, thu, fri, sat, sun"),
                    )),
                }
            }
            if w.days.is_empty() {
                problems.push(FieldError::new(field("days"), "choose at least one day"));
            }
            let from = parse_hm(&w.from).map_err(|rule| problems.push(FieldError::new(field("from"), rule))).ok();
            let to = parse_hm(&w.to).map_err(|rule| problems.push(FieldError::new(field("to"), rule))).ok();
            if let (Some(from), Some(to)) = (from, to) {
                if from == to {
                    problems.push(FieldError::new(
                        field("to"),
                        "must differ from `from` (a window ending at or before its start ends the next day)",
                    ));
                }
                windows.push((days, from, to));
            }
        }
        if self.minutes_between_waves > MAX_MINUTES_BETWEEN_WAVES {
            problems.push(FieldError::new(
                "schedule.minutesBetweenWaves",
                format!("must be from 0 to {MAX_MINUTES_BETWEEN_WAVES} (a week), got {}", self.minutes_between_waves),
            ));
        }
        let mut start = None;
        if let (Some(tz), Some(raw)) = (&tz, self.start_at.as_deref().map(str::trim).filter(|s| !s.is_empty())) {
            match parse_start(raw, tz) {
                Ok(t) if t.as_millisecond() > now_ms + MAX_START_AHEAD_MS => {
                    problems.push(FieldError::new("schedule.startAt", format!("{raw} is more than a year ahead")))
                }
                Ok(t) => start = Some(t),
                Err(rule) => problems.push(FieldError::new("schedule.startAt", rule)),
            }
        }
        match tz {
            Some(tz) if problems.is_empty() => Ok(Calendar {
                tz,
                zone: zone.to_owned(),
                start,
                windows,
                gap_ms: self.minutes_between_waves as i64 * 60_000,
            }),
            _ => Err(problems),
        }
    }
}

/// `HH:MM` (24-hour) as a time of day.
fn parse_hm(s: &str) -> Result<Time, String> {
    let bad = || format!("`{s}` is not a time of day HH:MM (24-hour, for example 22:00)");
    let (h, m) = s.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (i8, i8) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if !(0..24).contains(&h) || !(0..60).contains(&m) || s.trim().len() != 5 {
        return Err(bad());
    }
    Time::new(h, m, 0, 0).map_err(|_| bad())
}

/// An instant (RFC 3339 with an offset) or a local date and time in `tz`.
fn parse_start(s: &str, tz: &TimeZone) -> Result<Timestamp, String> {
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    let local: DateTime = s.parse().map_err(|_| {
        format!("`{s}` is neither an RFC 3339 time (2026-11-30T21:00:00Z) nor a local date and time (2026-11-30T22:00)")
    })?;
    local.to_zoned(tz.clone()).map(|z| z.timestamp()).map_err(|e| format!("`{s}`: {e}"))
}

/// Why and until when a wave may not start now.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// The schedule's start is ahead.
    Start(i64),
    /// The last wave started less than the least time between waves ago.
    Gap(i64),
    /// No window is open; the next opens then.
    Window(i64),
}

impl Gate {
    pub fn until_ms(&self) -> i64 {
        match self {
            Gate::Start(t) | Gate::Gap(t) | Gate::Window(t) => *t,
        }
    }
}

impl Calendar {
    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// The earliest instant at or after `t_ms` inside a window (`t_ms` itself without windows).
    pub fn open_at(&self, t_ms: i64) -> i64 {
        if self.windows.is_empty() {
            return t_ms;
        }
        let Ok(t) = Timestamp::from_millisecond(t_ms) else { return t_ms };
        let today = t.to_zoned(self.tz.clone()).date();
        let mut best: Option<i64> = None;
        // A window that opened yesterday may still be open; every day of the week is reached
        // within eight days.
        for offset in -1..=8i64 {
            let Ok(day) = today.checked_add(jiff::Span::new().days(offset)) else { continue };
            for (opens, closes) in self.occurrences(day) {
                if closes > t_ms {
                    let at = opens.max(t_ms);
                    best = Some(best.map_or(at, |b| b.min(at)));
                }
            }
        }
        best.unwrap_or(t_ms)
    }

    /// When the window open at `t_ms` closes (the latest close of those open then), if one is.
    pub fn closes_at(&self, t_ms: i64) -> Option<i64> {
        let t = Timestamp::from_millisecond(t_ms).ok()?;
        let today = t.to_zoned(self.tz.clone()).date();
        let mut latest = None;
        for offset in [-1i64, 0] {
            let Ok(day) = today.checked_add(jiff::Span::new().days(offset)) else { continue };
            for (opens, closes) in self.occurrences(day) {
                if opens <= t_ms && t_ms < closes {
                    latest = Some(latest.map_or(closes, |l: i64| l.max(closes)));
                }
            }
        }
        latest
    }

    /// The windows opening on `day`, as instants.
    fn occurrences(&self, day: Date) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for (days, from, to) in &self.windows {
            if !days.contains(&day.weekday()) {
                continue;
            }
            let end_day = if to <= from { day.tomorrow() } else { Ok(day) };
            let (Ok(opens), Ok(end_day)) = (day.to_datetime(*from).to_zoned(self.tz.clone()), end_day) else {
                continue;
            };
            let Ok(closes) = end_day.to_datetime(*to).to_zoned(self.tz.clone()) else { continue };
            let (opens, closes) = (opens.timestamp().as_millisecond(), closes.timestamp().as_millisecond());
            if closes > opens {
                out.push((opens, closes));
            }
        }
        out
    }

    /// What stops a wave from starting at `now_ms`, the last wave having started at
    /// `last_start_ms` (none before the first): the start ahead, then the least time between
    /// waves, then the windows.
    pub fn gate(&self, now_ms: i64, last_start_ms: Option<i64>) -> Option<Gate> {
        if let Some(start) = self.start.map(|s| s.as_millisecond()).filter(|s| *s > now_ms) {
            return Some(Gate::Start(self.open_at(start)));
        }
        if let Some(ready) = last_start_ms.map(|l| l + self.gap_ms).filter(|r| self.gap_ms > 0 && *r > now_ms) {
            return Some(Gate::Gap(self.open_at(ready)));
        }
        let open = self.open_at(now_ms);
        (open > now_ms).then_some(Gate::Window(open))
    }

    /// The earliest start of each of `waves` waves if each started as soon as the schedule let
    /// it (every wave succeeding at once), from `now_ms`; with whether the schedule made it wait
    /// (later than `now_ms` for the first, than the wave before for the others).
    pub fn earliest_starts(&self, now_ms: i64, waves: usize) -> Vec<(i64, bool)> {
        let mut out = Vec::with_capacity(waves);
        let mut base = now_ms;
        let mut t = self.start.map_or(now_ms, |s| s.as_millisecond().max(now_ms));
        for _ in 0..waves {
            let at = self.open_at(t);
            out.push((at, at > base));
            base = at;
            t = at + self.gap_ms;
        }
        out
    }

    /// An instant as the zone's local time: `Mon 2026-11-30 22:00 CET`.
    pub fn local_text(&self, ms: i64) -> String {
        match Timestamp::from_millisecond(ms) {
            Ok(t) => local(&t.to_zoned(self.tz.clone())),
            Err(_) => ms.to_string(),
        }
    }
}

fn local(z: &Zoned) -> String {
    z.strftime("%a %Y-%m-%d %H:%M %Z").to_string()
}

/// The machine's own IANA time zone, where it can be told (the default of a new schedule).
pub fn system_zone() -> Option<String> {
    TimeZone::try_system().ok().and_then(|tz| tz.iana_name().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        s.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn text(ms: i64) -> String {
        Timestamp::from_millisecond(ms).unwrap().to_string()
    }

    fn cal(zone: &str, windows: &[(&[&str], &str, &str)], gap: u32, start: Option<&str>) -> Calendar {
        Schedule {
            time_zone: zone.into(),
            start_at: start.map(str::to_owned),
            windows: windows
                .iter()
                .map(|(d, f, t)| Window {
                    days: d.iter().map(|x| x.to_string()).collect(),
                    from: f.to_string(),
                    to: t.to_string(),
                })
                .collect(),
            minutes_between_waves: gap,
        }
        .check(ms("2026-11-01T00:00:00Z"))
        .unwrap()
    }

    #[test]
    fn a_window_across_midnight_opens_on_its_day_and_closes_the_next() {
        // Mon-Fri 22:00-04:00 in Berlin (UTC+1 in winter). 2026-11-27 is a Friday.
        let c = cal("Europe/Berlin", &[(&["mon", "tue", "wed", "thu", "fri"], "22:00", "04:00")], 0, None);
        // Friday 12:00 local: waits for Friday 22:00 local = 21:00Z.
        assert_eq!(text(c.open_at(ms("2026-11-27T11:00:00Z"))), "2026-11-27T21:00:00Z");
        // Saturday 02:00 local: inside Friday's window, which closes Saturday 04:00.
        let sat2 = ms("2026-11-28T01:00:00Z");
        assert_eq!(c.open_at(sat2), sat2);
        assert_eq!(text(c.closes_at(sat2).unwrap()), "2026-11-28T03:00:00Z");
        // Saturday 05:00 local: no window on Saturday or Sunday: Monday 22:00.
        assert_eq!(text(c.open_at(ms("2026-11-28T04:00:00Z"))), "2026-11-30T21:00:00Z");
        assert_eq!(c.local_text(ms("2026-11-30T21:00:00Z")), "Mon 2026-11-30 22:00 CET");
        assert_eq!(c.gate(ms("2026-11-28T04:00:00Z"), None), Some(Gate::Window(ms("2026-11-30T21:00:00Z"))));
        assert_eq!(c.gate(sat2, None), None);
    }

    #[test]
    fn daylight_saving_changes_move_the_windows_with_the_local_clock() {
        // Europe/Berlin goes to summer time on 2026-03-29 (02:00 -> 03:00) and back on
        // 2026-10-25 (03:00 -> 02:00). A daily 01:00-05:00 window.
        let c =
            cal("Europe/Berlin", &[(&["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "01:00", "05:00")], 0, None);
        // The night of the change to summer time: 01:00 CET = 00:00Z opens, 05:00 CEST = 03:00Z
        // closes: three hours of real time.
        let opens = c.open_at(ms("2026-03-28T23:30:00Z"));
        assert_eq!(text(opens), "2026-03-29T00:00:00Z");
        assert_eq!(text(c.closes_at(opens).unwrap()), "2026-03-29T03:00:00Z");
        // The next day it opens at 01:00 CEST = 23:00Z the day before.
        assert_eq!(text(c.open_at(ms("2026-03-29T04:00:00Z"))), "2026-03-29T23:00:00Z");
        // The change back: 01:00 CEST = 23:00Z opens, 05:00 CET = 04:00Z closes: five hours.
        let opens = c.open_at(ms("2026-10-24T22:00:00Z"));
        assert_eq!(text(opens), "2026-10-24T23:00:00Z");
        assert_eq!(text(c.closes_at(opens).unwrap()), "2026-10-25T04:00:00Z");
        // A window starting in the skipped hour (02:30) opens at 03:30 summer time that night.
        let gap = cal("Europe/Berlin", &[(&["sun"], "02:30", "04:00")], 0, None);
        assert_eq!(text(gap.open_at(ms("2026-03-28T12:00:00Z"))), "2026-03-29T01:30:00Z");
        // New York changes on other dates (2026-03-08): the zone's own rules.
        let ny = cal("America/New_York", &[(&["sun"], "01:00", "05:00")], 0, None);
        let opens = ny.open_at(ms("2026-03-07T12:00:00Z"));
        assert_eq!(text(opens), "2026-03-08T06:00:00Z", "01:00 EST");
        assert_eq!(text(ny.closes_at(opens).unwrap()), "2026-03-08T09:00:00Z", "05:00 EDT");
    }

    #[test]
    fn the_start_the_gap_and_the_windows_gate_in_that_order() {
        let c = cal(
            "UTC",
            &[(&["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "08:00", "20:00")],
            90,
            Some("2026-11-30T07:00"),
        );
        // Before the start: the start, moved into the first window.
        assert_eq!(c.gate(ms("2026-11-29T12:00:00Z"), None), Some(Gate::Start(ms("2026-11-30T08:00:00Z"))));
        // After it, 30 minutes after a wave started: the gap.
        let now = ms("2026-11-30T10:00:00Z");
        assert_eq!(c.gate(now, Some(now - 30 * 60_000)), Some(Gate::Gap(now + 60 * 60_000)));
        // A gap ending after the window closes waits for the next window.
        let late = ms("2026-11-30T19:30:00Z");
        assert_eq!(c.gate(late, Some(late)), Some(Gate::Gap(ms("2026-12-01T08:00:00Z"))));
        assert_eq!(c.gate(now, Some(now - 120 * 60_000)), None);
        // The calendar: each wave at the earliest.
        let starts = c.earliest_starts(ms("2026-11-30T18:00:00Z"), 3);
        assert_eq!(
            starts.iter().map(|(t, w)| (text(*t), *w)).collect::<Vec<_>>(),
            [
                ("2026-11-30T18:00:00Z".to_owned(), false),
                ("2026-11-30T19:30:00Z".to_owned(), true),
                ("2026-12-01T08:00:00Z".to_owned(), true)
            ]
        );
    }

    #[test]
    fn no_windows_means_any_time_and_an_offset_start_is_an_instant() {
        let c = cal("Asia/Kolkata", &[], 0, Some("2026-12-01T00:00:00+05:30"));
        assert_eq!(c.gate(ms("2026-11-30T18:30:00Z"), None), None);
        assert_eq!(c.gate(ms("2026-11-30T18:29:00Z"), None), Some(Gate::Start(ms("2026-11-30T18:30:00Z"))));
        let local = cal("Asia/Kolkata", &[], 0, Some("2026-12-01T00:00"));
        assert_eq!(local.earliest_starts(0, 1), [(ms("2026-11-30T18:30:00Z"), true)]);
    }

    #[test]
    fn every_broken_field_is_named() {
        let s = Schedule {
            time_zone: "Mars/Olympus".into(),
            start_at: Some("tomorrow".into()),
            windows: vec![
                Window { days: vec![], from: "25:00".into(), to: "04:00".into() },
                Window { days: vec!["mon".into(), "funday".into()], from: "22:00".into(), to: "22:00".into() },
            ],
            minutes_between_waves: MAX_MINUTES_BETWEEN_WAVES + 1,
        };
        let fields: Vec<String> = s.check(0).unwrap_err().into_iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            [
                "schedule.timeZone",
                "schedule.windows[0].days",
                "schedule.windows[0].from",
                "schedule.windows[1].days",
                "schedule.windows[1].to",
                "schedule.minutesBetweenWaves"
            ]
        );
        let far =
            Schedule { time_zone: "UTC".into(), start_at: Some("2029-01-01T00:00:00Z".into()), ..Default::default() };
        assert_eq!(far.check(ms("2026-11-28T00:00:00Z")).unwrap_err()[0].field, "schedule.startAt");
        let bad_start = Schedule { time_zone: "UTC".into(), start_at: Some("tomorrow".into()), ..Default::default() };
        assert_eq!(bad_start.check(0).unwrap_err()[0].field, "schedule.startAt");
        for bad in ["7:00", "07:60", "24:00", "0700", "07:00:00", ""] {
            assert!(parse_hm(bad).is_err(), "{bad}");
        }
        assert!(parse_hm("00:00").is_ok() && parse_hm("23:59").is_ok());
    }
}
