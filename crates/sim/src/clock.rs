//! The simulated clock: real time scaled by a speed factor, so a firmware update that takes a
//! device ten minutes takes ten seconds at speed 60. Changing the speed never makes time jump.

use std::sync::Mutex;
use std::time::Instant;

use time::{Duration, OffsetDateTime};

pub struct SimClock {
    state: Mutex<(Instant, OffsetDateTime, f64)>,
}

impl SimClock {
    /// A clock that starts at the current wall-clock time.
    pub fn new(speed: f64) -> SimClock {
        SimClock { state: Mutex::new((Instant::now(), OffsetDateTime::now_utc(), speed)) }
    }

    /// A clock that starts at `start` (a restarted simulator's, so its time never goes back).
    pub fn starting_at(speed: f64, start: OffsetDateTime) -> SimClock {
        SimClock { state: Mutex::new((Instant::now(), start, speed)) }
    }

    pub fn now(&self) -> OffsetDateTime {
        let (real, sim, speed) = *self.state.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = real.elapsed().as_secs_f64() * speed;
        sim + Duration::seconds_f64(elapsed)
    }

    pub fn speed(&self) -> f64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).2
    }

    /// Changes the speed from now on.
    pub fn set_speed(&self, speed: f64) {
        let now = self.now();
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (Instant::now(), now, speed);
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
        let clock = SimClock::new(1000.0);
        let a = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = clock.now();
        assert!(b - a >= Duration::seconds(19), "{}", b - a);
        clock.set_speed(1.0);
        let c = clock.now();
        assert!(c >= b && c - b < Duration::seconds(5));
        assert_eq!(clock.real(std::time::Duration::from_secs(10)), std::time::Duration::from_secs(10));
    }
}
