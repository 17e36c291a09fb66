//! The start banner and the once-a-second progress lines.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rk6_scheduler::{format_duration, ExecutionState, Executor, Scenario};

/// The banner: execution, script, outputs (their descriptions, e.g. `json (out.json)`),
/// and one line per scenario.
pub fn banner(
    script: &str,
    outputs: &[String],
    scenarios: &[std::sync::Arc<Scenario>],
    max_vus: u64,
) -> String {
    let max_duration = scenarios
        .iter()
        .map(|s| s.max_duration())
        .max()
        .unwrap_or_default();
    let mut out = String::new();
    out.push_str("\n  rk6 — k6 scripts, natively\n\n");
    out.push_str("     execution: local\n");
    out.push_str(&format!("        script: {script}\n"));
    let output = if outputs.is_empty() {
        "-".to_string()
    } else {
        outputs.join(", ")
    };
    out.push_str(&format!("        output: {output}\n\n"));
    let n = scenarios.len();
    out.push_str(&format!(
        "     scenarios: (100.00%) {n} scenario{}, {max_vus} max VUs, {} max duration (incl. graceful stop):\n",
        if n == 1 { "" } else { "s" },
        format_duration(max_duration)
    ));
    for s in scenarios {
        out.push_str(&format!(
            "              * {}: {}\n",
            s.name,
            s.description()
        ));
    }
    out.push('\n');
    out
}

fn clock(d: Duration) -> String {
    let secs = d.as_secs_f64();
    let m = (secs / 60.0).floor();
    let s = secs - m * 60.0;
    if m > 0.0 {
        format!("{:02}m{:04.1}s", m as u64, s)
    } else {
        format!("{:04.1}s", s)
    }
}

/// One snapshot in k6's non-terminal progress format.
pub fn snapshot(state: &ExecutionState, elapsed: Duration) -> String {
    let width = state
        .scenarios
        .iter()
        .map(|s| s.scenario.name.len())
        .max()
        .unwrap_or(0);
    let max = state.vus_max.load(Ordering::Relaxed);
    // k6 pads the active count to the width of the maximum: "03/10 VUs", "2/2 VUs".
    let digits = max.to_string().len();
    let mut out = format!(
        "running ({}), {:0digits$}/{max} VUs, {} complete and {} interrupted iterations\n",
        clock(elapsed),
        state.active_vus(),
        state.completed(),
        state.interrupted()
    );
    for s in &state.scenarios {
        let done = s.done.load(Ordering::Relaxed);
        let completed = s.completed.load(Ordering::Relaxed);
        let ran = s.elapsed();
        let (fraction, detail) = match s.scenario.executor {
            Executor::ConstantVus { vus, duration } => (
                ran.as_secs_f64() / duration.as_secs_f64(),
                format!(
                    "{vus} VUs  {}/{}",
                    clock_short(ran),
                    format_duration(duration)
                ),
            ),
            Executor::SharedIterations {
                vus,
                iterations,
                max_duration,
            } => (
                completed as f64 / iterations as f64,
                format!(
                    "{vus} VUs  {}/{}  {completed}/{iterations} shared iters",
                    clock_short(ran),
                    format_duration(max_duration)
                ),
            ),
            Executor::PerVuIterations {
                vus,
                iterations,
                max_duration,
            } => (
                completed as f64 / (vus * iterations) as f64,
                format!(
                    "{vus} VUs  {}/{}  {completed}/{} iters, {iterations} per VU",
                    clock_short(ran),
                    format_duration(max_duration),
                    vus * iterations
                ),
            ),
            Executor::RampingVus { .. } => {
                let total = s.scenario.run_time();
                (
                    ran.as_secs_f64() / total.as_secs_f64(),
                    format!(
                        "{:02}/{:02} VUs  {}/{}",
                        s.active_vus.load(Ordering::Relaxed),
                        s.scenario.max_vus(),
                        clock_short(ran),
                        format_duration(total)
                    ),
                )
            }
            Executor::ConstantArrivalRate {
                rate,
                time_unit,
                duration,
                ..
            } => (
                ran.as_secs_f64() / duration.as_secs_f64(),
                format!(
                    "{}/{} VUs  {}/{}  {:.2} iters/s",
                    s.active_vus.load(Ordering::Relaxed),
                    s.scenario.max_vus(),
                    clock_short(ran),
                    format_duration(duration),
                    rate as f64 / time_unit.as_secs_f64()
                ),
            ),
            Executor::RampingArrivalRate { .. } => {
                let total = s.scenario.run_time();
                (
                    ran.as_secs_f64() / total.as_secs_f64(),
                    format!(
                        "{}/{} VUs  {}/{}",
                        s.active_vus.load(Ordering::Relaxed),
                        s.scenario.max_vus(),
                        clock_short(ran),
                        format_duration(total)
                    ),
                )
            }
        };
        let pct = if done {
            100.0
        } else {
            (fraction * 100.0).clamp(0.0, 100.0)
        };
        out.push_str(&format!(
            "{:<width$} {} [ {:>3.0}% ] {detail}\n",
            s.scenario.name,
            if done { "✓" } else { " " },
            pct.floor()
        ));
    }
    out
}

fn clock_short(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_formats() {
        assert_eq!(clock(Duration::from_millis(1000)), "01.0s");
        assert_eq!(clock(Duration::from_millis(62_500)), "01m02.5s");
    }
}
