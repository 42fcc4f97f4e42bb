//! The simulated clock: real time scaled by a speed factor, so a firmware update that takes a
//! device ten minutes takes ten seconds at speed 60. Changing the speed never makes time jump.

use std::sync::Mutex;
use std::time::Instant;

use time::{Duration, OffsetDateTime};

/// The fastest the simulated clock may run: a million times real time (a ten-minute update in
/// under a millisecond). Faster, or not a finite number above 0, is refused.
pub const MAX_SPEED: f64 = 1_000_000.0;

/// The latest time the clock shows: a clock run at a high speed for a long time stops there
/// instead of leaving the range of a timestamp.
const LATEST: OffsetDateTime = time::macros::datetime!(9999-12-31 23:59:59 UTC);

/// Refuses a speed the clock cannot run at, saying the rule.
pub fn check_speed(speed: f64) -> Result<(), String> {
    if speed.is_finite() && speed > 0.0 && speed <= MAX_SPEED {
        Ok(())
    } else {
        Err(format!("must be a number above 0 and at most {MAX_SPEED} (got {speed})"))
    }
}

pub struct SimClock {
    state: Mutex<(Instant, OffsetDateTime, f64)>,
}

impl SimClock {
    /// A clock that starts at `start`: the wall clock's time when a new data set is seeded, or
    /// just after a data file's latest time, so that a restarted simulator's never goes back.
    pub fn starting_at(speed: f64, start: OffsetDateTime) -> SimClock {
        SimClock { state: Mutex::new((Instant::now(), start, speed)) }
    }

    pub fn now(&self) -> OffsetDateTime {
        let (real, sim, speed) = *self.state.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = real.elapsed().as_secs_f64() * speed;
        Duration::checked_seconds_f64(elapsed).and_then(|d| sim.checked_add(d)).map_or(LATEST, |t| t.min(LATEST))
    }

    pub fn speed(&self) -> f64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).2
    }

    /// Changes the speed from now on; a speed [`check_speed`] refuses changes nothing.
    pub fn set_speed(&self, speed: f64) -> Result<(), String> {
        check_speed(speed)?;
        let now = self.now();
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (Instant::now(), now, speed);
        Ok(())
    }

    /// Moves the clock `by` ahead at once (never back: a negative duration changes nothing).
    pub fn advance(&self, by: Duration) {
        let now = self.now();
        let to = now.checked_add(by.max(Duration::ZERO)).map_or(LATEST, |t| t.min(LATEST));
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        *s = (Instant::now(), to, s.2);
    }

    /// A simulated duration as real time, for sleeping.
    pub fn real(&self, sim: std::time::Duration) -> std::time::Duration {
        sim.div_f64(self.speed().max(1e-6))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_at_its_speed_and_changing_speed_does_not_jump() {
        let clock = SimClock::starting_at(1000.0, OffsetDateTime::now_utc());
        let a = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = clock.now();
        assert!(b - a >= Duration::seconds(19), "{}", b - a);
        clock.set_speed(1.0).unwrap();
        let c = clock.now();
        assert!(c >= b && c - b < Duration::seconds(5));
        assert_eq!(clock.real(std::time::Duration::from_secs(10)), std::time::Duration::from_secs(10));
    }

    #[test]
    fn refuses_speeds_it_cannot_run_at_and_keeps_its_speed() {
        let clock = SimClock::starting_at(60.0, OffsetDateTime::now_utc());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e308, MAX_SPEED * 2.0] {
            assert!(clock.set_speed(bad).unwrap_err().contains("at most 1000000"), "{bad}");
            assert_eq!(clock.speed(), 60.0);
        }
        clock.set_speed(MAX_SPEED).unwrap();
        clock.now();
        clock.set_speed(0.001).unwrap();
    }

    #[test]
    fn a_clock_far_ahead_stops_at_the_latest_time_instead_of_panicking() {
        let clock = SimClock::starting_at(MAX_SPEED, LATEST - Duration::seconds(1));
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(clock.now(), LATEST);
    }
}
