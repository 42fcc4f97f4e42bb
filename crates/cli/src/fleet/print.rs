//! The fleet's and the rollouts' figures in words and tables.

use dcs_console::fleet::rollout::{HoldKind, PlanPreview, RolloutState, RolloutView, Schedule, StepOutcome};
use dcs_console::fleet::scan::{ScanKind, ScanReport};

use crate::output;

pub(super) use dcs_console::fleet::thousands;

pub(super) fn share(n: u32, of: u32) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", n as f64 * 100.0 / of as f64)
    }
}

pub(super) fn print_report(r: &ScanReport) {
    let secs = (r.elapsed_ms as f64 / 1000.0).max(0.001);
    println!(
        "{} scan: {} states in {} pages, {:.2} s ({:.0} states/s); {} changed, {} removed",
        if r.kind == ScanKind::Full { "full" } else { "incremental" },
        thousands(r.states),
        r.pages,
        secs,
        r.states as f64 / secs,
        thousands(r.changed),
        thousands(r.removed)
    );
    println!("refresh mode: {}", r.mode.text);
    match &r.watermark {
        Some(w) if r.mode.incremental => {
            println!("next incremental refresh: states modified since {w} (service clock)")
        }
        _ => {}
    }
}

/// What a downgrade does, in words: how many devices go back to `version` and from which.
pub(super) fn print_preview(p: &PlanPreview, version: &str) {
    if let Some(d) = &p.downgrade {
        // On stderr, so it is seen even when the table goes to a file.
        eprintln!("warning: {}", d.text(version));
    }
    output::fields(&[
        ("module", p.module_name.clone()),
        ("devices to update", thousands(p.devices)),
        ("already on the version", thousands(p.already_on_version)),
        ("updating to another version", format!("{} (their updates are replaced)", thousands(p.updating_elsewhere))),
        (
            "waves",
            p.wave_sizes.iter().enumerate().map(|(i, n)| format!("{}: {n}", i + 1)).collect::<Vec<_>>().join(", "),
        ),
        ("target version", format!("{version}{}", if p.downgrade.is_some() { " (downgrade)" } else { "" })),
    ]);
    if p.in_other_rollouts > 0 {
        let others: Vec<String> = p.other_rollouts.iter().map(|(r, n)| format!("{r} ({})", thousands(*n))).collect();
        println!(
            "left out: {} devices already in a running or paused rollout of the module: {}",
            thousands(p.in_other_rollouts),
            others.join(", ")
        );
    }
    if !p.wave_budgets.is_empty() {
        println!();
        let mut head = vec!["WAVE", "DEVICES", "GOES ON AT", "TOLERATES", "PAUSES ABOVE"];
        if !p.calendar.is_empty() {
            head.push("STARTS AT THE EARLIEST");
        }
        output::table(
            &head,
            p.wave_budgets
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let mut row = vec![
                        (i + 1).to_string(),
                        thousands(b.size),
                        format!("{} ok", thousands(b.needed)),
                        format!("{} {}", thousands(b.tolerates), if b.tolerates == 1 { "failure" } else { "failures" }),
                        format!("{} failed of {}", thousands(b.failures_before_pause), thousands(b.started_devices)),
                    ];
                    if let Some(c) = p.calendar.get(i) {
                        row.push(format!("{}{}", c.local, if c.waits { " (waits)" } else { "" }));
                    }
                    row
                })
                .collect(),
        );
    }
}

pub(super) fn state_name(s: RolloutState) -> &'static str {
    match s {
        RolloutState::Running => "running",
        RolloutState::Paused => "paused",
        RolloutState::Completed => "completed",
        RolloutState::Aborted => "aborted",
    }
}

pub(super) fn print_view(v: &RolloutView) {
    output::fields(&[
        ("rollout", v.id.clone()),
        ("module", format!("{} ({})", v.module_name, v.module_id)),
        ("version", v.version.clone()),
        (
            "state",
            format!("{}{}", state_name(v.state), v.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default()),
        ),
        ("thresholds", format!("success {}%, error {}%", v.success_threshold, v.error_threshold)),
        (
            "devices",
            format!(
                "{} ({} updated, {} failed, {} updating)",
                v.total.size,
                v.total.succeeded,
                v.total.failed + v.total.refused,
                v.total.updating
            ),
        ),
        ("created", v.created_at.clone()),
    ]);
    if let Some(s) = &v.schedule {
        println!("schedule: {}", schedule_text(s));
    }
    if v.approval {
        println!("approval: each wave after the first waits for `dcs rollout continue {}`", v.id);
    }
    if let Some(h) = hold_text(v) {
        println!("held: {h}");
    }
    if let Some(h) = &v.hang {
        println!("warning: {}", h.message);
    }
    if let Some(r) = &v.retry {
        println!(
            "retries: up to {} per device, {} minutes after a failure{}; {} devices retried ({} retries), {} retrying now",
            r.times,
            r.delay_minutes,
            if r.never_for.is_empty() { String::new() } else { format!(", never for: {}", r.never_for.join(", ")) },
            v.total.retried,
            v.total.retries,
            v.total.retrying
        );
    }
    println!();
    output::table(
        &["WAVE", "UP TO", "DEVICES", "SET", "SUCCEEDED", "FAILED", "REPLACED", "UPDATING", "REFUSED"],
        v.waves
            .iter()
            .map(|w| {
                vec![
                    format!("{}{}", w.index + 1, if w.index as i32 == v.current_wave { " *" } else { "" }),
                    format!("{}%", w.percent),
                    w.size.to_string(),
                    w.set.to_string(),
                    w.succeeded.to_string(),
                    w.failed.to_string(),
                    w.replaced.to_string(),
                    w.updating.to_string(),
                    w.refused.to_string(),
                ]
            })
            .collect(),
    );
    println!();
    for e in v.events.iter().take(10) {
        println!("{}  {}", e.at, e.message);
    }
}

/// One line of a rollout's progress: the wave under way and the whole.
pub(super) fn progress_line(v: &RolloutView) -> String {
    let wave = match v.waves.get(v.current_wave.max(0) as usize) {
        Some(w) if v.current_wave >= 0 => format!(
            "wave {}/{} ({} devices): {} succeeded, {} failed, {} updating",
            w.index + 1,
            v.waves.len(),
            w.size,
            w.succeeded,
            w.failed + w.refused,
            w.updating
        ),
        _ => "no wave started".into(),
    };
    format!("{wave}; all: {}/{} updated ({})", v.total.succeeded, v.total.size, share(v.total.succeeded, v.total.size))
}

pub(super) fn outcome_text(o: &StepOutcome, v: &RolloutView) -> String {
    match o {
        StepOutcome::Waiting => format!("{}; waiting for the devices", progress_line(v)),
        StepOutcome::WaveStarted { wave, set, refused } => {
            format!(
                "wave {} started: {set} targets set{}",
                wave + 1,
                if *refused > 0 { format!(", {refused} refused") } else { String::new() }
            )
        }
        StepOutcome::Paused { reason } => format!("paused: {reason}"),
        StepOutcome::Held { .. } => format!("{}; {}", progress_line(v), hold_text(v).unwrap_or_default()),
        StepOutcome::Hanging { warning } => format!("warning: {}", warning.message),
        StepOutcome::Joined { wave, devices } => {
            format!("{}; {devices} devices that appeared after the start joined wave {}", progress_line(v), wave + 1)
        }
        StepOutcome::Retrying { scheduled, sent } => format!(
            "{}; retries: {sent} sent, {scheduled} scheduled ({} retrying now)",
            progress_line(v),
            v.total.retrying
        ),
        StepOutcome::Completed => format!("completed: {}", v.reason.clone().unwrap_or_default()),
        StepOutcome::Elsewhere { driver } => {
            format!("{}; {} moves it on (this command recorded the change only)", progress_line(v), driver.label)
        }
    }
}

/// What holds the next wave back, with the command that lets it go where the operator must.
pub(super) fn hold_text(v: &RolloutView) -> Option<String> {
    let hold = v.hold.as_ref()?;
    Some(match hold.kind {
        HoldKind::Approval => format!("{} (let it start: dcs rollout continue {})", hold.message, v.id),
        _ => hold.message.clone(),
    })
}

/// A schedule in one line: `from Mon 2026-11-30 22:00 (Europe/Berlin); windows mon,tue 22:00-04:00; 60 minutes between waves`.
pub(super) fn schedule_text(s: &Schedule) -> String {
    let mut parts = vec![format!("time zone {}", s.time_zone)];
    if let Some(at) = s.start_at.as_deref().filter(|a| !a.is_empty()) {
        parts.push(format!("starts {at}"));
    }
    if s.windows.is_empty() {
        parts.push("any time".into());
    } else {
        let w: Vec<String> = s.windows.iter().map(|w| format!("{} {}-{}", w.days.join(","), w.from, w.to)).collect();
        parts.push(format!("windows {}", w.join("; ")));
    }
    if s.minutes_between_waves > 0 {
        parts.push(format!("{} minutes between waves", s.minutes_between_waves));
    }
    parts.join("; ")
}
