//! The start banner and the once-a-second progress lines.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rk6_options::format_duration;
use rk6_scheduler::{ExecutionState, Executor, Scenario, ScenarioState};

/// The banner: execution, script, the web dashboard's address, outputs (their
/// descriptions, e.g. `json (out.json)`), and one line per scenario.
pub fn banner(
    script: &str,
    outputs: &[String],
    scenarios: &[std::sync::Arc<Scenario>],
    max_vus: u64,
    share: f64,
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
    // As k6, the web dashboard gets a line of its own instead of an `output:` entry.
    let mut listed = Vec::new();
    for o in outputs {
        match o.strip_prefix("web-dashboard") {
            Some(rest) => out.push_str(&format!(" web dashboard:{rest}\n")),
            None => listed.push(o.as_str()),
        }
    }
    let output = if listed.is_empty() {
        "-".to_string()
    } else {
        listed.join(", ")
    };
    out.push_str(&format!("        output: {output}\n\n"));
    let n = scenarios.len();
    out.push_str(&format!(
        "     scenarios: ({:.2}%) {n} scenario{}, {max_vus} max VUs, {} max duration (incl. graceful stop):\n",
        share * 100.0,
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
        let (done, pct, detail) = scenario_progress(s);
        out.push_str(&format!(
            "{:<width$} {} [ {:>3.0}% ] {detail}\n",
            s.scenario.name,
            if done { "✓" } else { " " },
            pct.floor()
        ));
    }
    out
}

/// Width of the bar drawn for each scenario on a terminal.
const BAR: usize = 40;

/// The terminal form: the same figures with a bar per scenario, redrawn in place. `previous`
/// is how many lines the last frame had (0 for the first), so the cursor can go back up.
pub fn frame(state: &ExecutionState, elapsed: Duration, previous: usize) -> (String, usize) {
    let width = state
        .scenarios
        .iter()
        .map(|s| s.scenario.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    if previous > 0 {
        out.push_str(&format!("\x1b[{previous}A"));
    }
    let max = state.vus_max.load(Ordering::Relaxed);
    let digits = max.to_string().len();
    out.push_str(&format!(
        "\x1b[2K\rrunning ({}), {:0digits$}/{max} VUs, {} complete and {} interrupted iterations\n",
        clock(elapsed),
        state.active_vus(),
        state.completed(),
        state.interrupted()
    ));
    for s in &state.scenarios {
        let (done, pct, detail) = scenario_progress(s);
        let filled = ((pct / 100.0) * BAR as f64).round() as usize;
        let bar = if filled >= BAR {
            "=".repeat(BAR)
        } else {
            format!("{}>{}", "=".repeat(filled), "-".repeat(BAR - filled - 1))
        };
        out.push_str(&format!(
            "\x1b[2K\r{:<width$} {} [{bar}] {detail}\n",
            s.scenario.name,
            if done { "✓" } else { " " },
        ));
    }
    (out, state.scenarios.len() + 1)
}

/// Whether the scenario is done, its progress in percent and k6's detail text.
fn scenario_progress(s: &ScenarioState) -> (bool, f64, String) {
    let done = s.done.load(Ordering::Relaxed);
    let completed = s.completed.load(Ordering::Relaxed);
    let ran = s.elapsed();
    let active = s.active_vus.load(Ordering::Relaxed);
    let sc = &s.scenario;
    let vus = sc.max_vus();
    let (fraction, detail) = match &sc.executor {
        Executor::ConstantVus(c) => (
            ran.as_secs_f64() / c.duration.as_secs_f64(),
            format!(
                "{vus} VUs  {}/{}",
                clock_short(ran),
                format_duration(c.duration)
            ),
        ),
        Executor::SharedIterations(c) => {
            let iterations = sc.iterations().unwrap_or(0);
            (
                completed as f64 / iterations.max(1) as f64,
                format!(
                    "{vus} VUs  {}/{}  {completed}/{iterations} shared iters",
                    clock_short(ran),
                    format_duration(c.max_duration)
                ),
            )
        }
        Executor::PerVuIterations(c) => (
            completed as f64 / (vus * c.iterations).max(1) as f64,
            format!(
                "{vus} VUs  {}/{}  {completed}/{} iters, {} per VU",
                clock_short(ran),
                format_duration(c.max_duration),
                vus * c.iterations,
                c.iterations
            ),
        ),
        Executor::RampingVus(_) => {
            let total = sc.run_time();
            (
                ran.as_secs_f64() / total.as_secs_f64(),
                format!(
                    "{active:02}/{vus:02} VUs  {}/{}",
                    clock_short(ran),
                    format_duration(total)
                ),
            )
        }
        Executor::ConstantArrivalRate(c) => (
            ran.as_secs_f64() / c.duration.as_secs_f64(),
            format!(
                "{active}/{vus} VUs  {}/{}  {:.2} iters/s",
                clock_short(ran),
                format_duration(c.duration),
                c.rate as f64 * sc.split.iterations.share() / c.time_unit.as_secs_f64()
            ),
        ),
        Executor::RampingArrivalRate(_) => {
            let total = sc.run_time();
            (
                ran.as_secs_f64() / total.as_secs_f64(),
                format!(
                    "{active}/{vus} VUs  {}/{}",
                    clock_short(ran),
                    format_duration(total)
                ),
            )
        }
        Executor::ExternallyControlled(c) => {
            let target = s.target_vus.load(Ordering::Relaxed);
            match c.duration {
                Some(d) => (
                    ran.as_secs_f64() / d.as_secs_f64(),
                    format!(
                        "{target}/{vus} VUs  {}/{}",
                        clock_short(ran),
                        format_duration(d)
                    ),
                ),
                None => (0.0, format!("{target}/{vus} VUs  {}", clock_short(ran))),
            }
        }
    };
    let pct = if done {
        100.0
    } else {
        (fraction * 100.0).clamp(0.0, 100.0)
    };
    (done, pct, detail)
}

fn clock_short(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(options: serde_json::Value) -> std::sync::Arc<ExecutionState> {
        let scenarios: Vec<std::sync::Arc<Scenario>> = rk6_scheduler::scenarios_from_options(
            &rk6_options::Options::from_json(&options).unwrap().options,
        )
        .unwrap()
        .into_iter()
        .map(std::sync::Arc::new)
        .collect();
        ExecutionState::new(&scenarios)
    }

    #[test]
    fn terminal_frames_draw_bars_and_redraw_in_place() {
        let st = state(serde_json::json!({"vus": 2, "iterations": 10}));
        st.scenarios[0].completed.store(5, Ordering::Relaxed);
        let (first, lines) = frame(&st, Duration::from_millis(500), 0);
        assert_eq!(lines, 2);
        assert!(!first.contains("\x1b[2A"), "{first:?}");
        assert!(
            first.contains(&format!("[{}>{}] 2 VUs", "=".repeat(20), "-".repeat(19))),
            "{first:?}"
        );
        assert!(first.contains("5/10 shared iters"), "{first:?}");
        st.scenarios[0].done.store(true, Ordering::Relaxed);
        let (next, _) = frame(&st, Duration::from_secs(1), lines);
        assert!(next.starts_with("\x1b[2A"), "{next:?}");
        assert!(
            next.contains(&format!("default ✓ [{}]", "=".repeat(40))),
            "{next:?}"
        );
    }

    #[test]
    fn banner_shows_the_segment_share() {
        let st = state(serde_json::json!({"vus": 1, "iterations": 1}));
        let scenarios: Vec<_> = st.scenarios.iter().map(|s| s.scenario.clone()).collect();
        let b = banner("s.js", &[], &scenarios, 1, 1.0 / 3.0);
        assert!(
            b.contains("scenarios: (33.33%) 1 scenario, 1 max VUs"),
            "{b}"
        );
    }

    #[test]
    fn banner_gives_the_dashboard_its_own_line() {
        let st = state(serde_json::json!({"vus": 1, "iterations": 1}));
        let scenarios: Vec<_> = st.scenarios.iter().map(|s| s.scenario.clone()).collect();
        let outputs = vec![
            "json (out.json)".to_string(),
            "web-dashboard http://127.0.0.1:5665".to_string(),
        ];
        let b = banner("s.js", &outputs, &scenarios, 1, 1.0);
        assert!(
            b.contains(" web dashboard: http://127.0.0.1:5665\n        output: json (out.json)\n"),
            "{b}"
        );
        let b = banner("s.js", &["web-dashboard".to_string()], &scenarios, 1, 1.0);
        assert!(b.contains(" web dashboard:\n        output: -\n"), "{b}");
    }

    #[test]
    fn clock_formats() {
        assert_eq!(clock(Duration::from_millis(1000)), "01.0s");
        assert_eq!(clock(Duration::from_millis(62_500)), "01m02.5s");
    }
}
