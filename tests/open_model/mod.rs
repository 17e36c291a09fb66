//! Open-model latency corrected for coordinated omission (rk6's own metrics): arrival-rate
//! iterations measured from their scheduled start (`iteration_duration_corrected`,
//! `first_response_corrected`), and arrivals dropped for want of a VU counted as unserved
//! (`iterations_unserved`), so a starved generator cannot make its latency look healthy.

use crate::{rk6_env, Dir};

/// A summary row's statistic in milliseconds (`unserved` as +∞); `None` when absent.
fn stat(summary: &str, metric: &str, name: &str) -> Option<f64> {
    let line = summary.lines().find(|l| {
        let l = l.trim_start().trim_start_matches(['✓', '✗', ' ']);
        l.starts_with(metric) && l[metric.len()..].starts_with(['.', ':'])
    })?;
    let value = line
        .split_whitespace()
        .find_map(|part| part.strip_prefix(&format!("{name}=")))?;
    if value == "unserved" {
        return Some(f64::INFINITY);
    }
    let split = value.find(|c: char| c.is_ascii_alphabetic() || c == 'µ')?;
    let (n, unit) = value.split_at(split);
    let n: f64 = n.parse().ok()?;
    Some(match unit {
        "s" => n * 1000.0,
        "ms" => n,
        "µs" => n / 1000.0,
        _ => return None,
    })
}

/// A counter row's count (the first number after the dots).
fn count(summary: &str, metric: &str) -> Option<u64> {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{metric}.")))?;
    line.split(':')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One VU for 20 arrivals a second of 200 ms iterations: three in four arrivals find no VU.
/// k6's figures look healthy (every iteration that ran took 200 ms); the corrected ones say
/// the p(95) user was never served, and a threshold on them fails the run.
#[test]
fn a_starved_generator_shows_its_unserved_arrivals() {
    let dir = Dir::new("open-model-starved");
    let script = dir.write(
        "starved.js",
        "import { sleep } from 'k6';\n\
         export const options = {\n\
           scenarios: { arrivals: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '3s', preAllocatedVUs: 1, maxVUs: 1 } },\n\
           thresholds: { iteration_duration: ['p(95)<1000'], iteration_duration_corrected: ['p(95)<1000'] },\n\
         };\n\
         export default function () { sleep(0.2); }\n",
    );
    let run = rk6_env(&["run", script.to_str().unwrap()], &dir.0, &[]);
    let out = &run.stdout;
    assert_eq!(
        run.code, 99,
        "the corrected threshold fails\n{out}\n{}",
        run.stderr
    );
    assert!(
        stat(out, "iteration_duration", "p(95)").unwrap() < 400.0,
        "k6's view: healthy\n{out}"
    );
    assert_eq!(
        stat(out, "iteration_duration_corrected", "p(95)"),
        Some(f64::INFINITY),
        "{out}"
    );
    let dropped = count(out, "dropped_iterations").unwrap();
    assert!(dropped >= 30, "{out}");
    assert_eq!(count(out, "iterations_unserved"), Some(dropped), "{out}");
    assert!(
        run.stderr
            .contains("thresholds on metrics 'iteration_duration_corrected' have been crossed"),
        "{}",
        run.stderr
    );
}

/// Enough VUs, but one worker thread kept busy: 20 arrivals a second of 150 ms of CPU each.
/// Iterations start ever later; each still takes 150 ms once started, so k6's
/// `iteration_duration` hides the wait that `iteration_duration_corrected` shows.
#[test]
fn a_busy_worker_shows_the_wait_before_each_start() {
    let dir = Dir::new("open-model-busy");
    let script = dir.write(
        "busy.js",
        "export const options = {\n\
           scenarios: { arrivals: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '3s', preAllocatedVUs: 40, maxVUs: 40 } },\n\
         };\n\
         export default function () { const end = Date.now() + 150; while (Date.now() < end) {} }\n",
    );
    let run = rk6_env(&["run", script.to_str().unwrap()], &dir.0, &[]);
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    let plain = stat(out, "iteration_duration", "med").unwrap();
    let corrected = stat(out, "iteration_duration_corrected", "med").unwrap();
    assert!(plain < 400.0, "{out}");
    assert!(
        corrected > plain + 300.0,
        "the wait shows: {corrected} vs {plain}\n{out}"
    );
}

/// A generator that keeps up: both views agree, nothing is unserved, the first response is
/// timed from the schedule too, and rk6's metrics stay out of k6-format outputs.
#[test]
fn a_generator_that_keeps_up_agrees_with_k6s_figures() {
    let dir = Dir::new("open-model-keeps-up");
    let server = crate::support::TestServer::start();
    let script = dir.write(
        "ok.js",
        &format!(
            "import http from 'k6/http';\nimport {{ sleep }} from 'k6';\n\
             export const options = {{\n\
               scenarios: {{ arrivals: {{ executor: 'ramping-arrival-rate', startRate: 5, timeUnit: '1s', preAllocatedVUs: 5, maxVUs: 5, stages: [{{ target: 5, duration: '2s' }}] }} }},\n\
               thresholds: {{ iteration_duration_corrected: ['p(95)<1000'], first_response_corrected: ['p(95)<1000'] }},\n\
             }};\n\
             export default function () {{ http.get('{}'); sleep(0.1); }}\n",
            server.url("/")
        ),
    );
    let run = rk6_env(
        &["run", "--out", "json=out.json", script.to_str().unwrap()],
        &dir.0,
        &[],
    );
    let out = &run.stdout;
    assert_eq!(run.code, 0, "{out}\n{}", run.stderr);
    assert!(!out.contains("unserved="), "{out}");
    let plain = stat(out, "iteration_duration", "p(95)").unwrap();
    let corrected = stat(out, "iteration_duration_corrected", "p(95)").unwrap();
    assert!(
        corrected >= plain && corrected < plain + 50.0,
        "{corrected} vs {plain}\n{out}"
    );
    let first = stat(out, "first_response_corrected", "max").unwrap();
    assert!(
        first < stat(out, "iteration_duration_corrected", "max").unwrap(),
        "{out}"
    );
    assert_eq!(count(out, "iterations_unserved"), None, "{out}");
    let json = std::fs::read_to_string(dir.0.join("out.json")).unwrap();
    assert!(json.contains("\"iteration_duration\""));
    assert!(
        !json.contains("_corrected"),
        "rk6's own metrics only with --rk6-metrics"
    );
}
