//! The run loop: one task per connection, closed-loop or at a constant rate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rk6_http::{Client, ClientConfig, KeepAlive};

use crate::engine::Engine;
use crate::plan::Plan;
use crate::stats::Stats;

/// Runs every connection until the deadline; returns the merged stats and the wall time.
pub(crate) async fn blast(plan: &Plan) -> (Stats, Duration) {
    let config = Arc::new(ClientConfig {
        insecure_skip_tls_verify: plan.insecure,
        user_agent: None,
        max_redirects: 0,
        timeout: plan.timeout,
        ..ClientConfig::default()
    });
    let start = Instant::now();
    let deadline = start + plan.duration;
    // With --rate: every connection's interval, and its offset so the sends interleave evenly.
    let interval = plan
        .rate
        .map(|rate| Duration::from_secs_f64(plan.connections as f64 / rate));
    let mut tasks = Vec::with_capacity(plan.connections);
    for i in 0..plan.connections {
        let engine = match &plan.lean {
            Some(request) => Engine::Lean {
                conn: KeepAlive::new(request),
                request: Arc::clone(request),
            },
            None => Engine::Client {
                client: Client::new(Arc::clone(&config)),
                template: Box::new(plan.request.clone()),
            },
        };
        let timeout = plan.timeout;
        let schedule = interval.map(|every| {
            (
                start + every.mul_f64(i as f64 / plan.connections as f64),
                every,
            )
        });
        tasks.push(tokio::spawn(async move {
            match schedule {
                None => closed_loop(engine, timeout, deadline).await,
                Some((first, every)) => {
                    constant_rate(engine, timeout, deadline, first, every).await
                }
            }
        }));
    }
    let mut total = Stats::new();
    for task in tasks {
        match task.await {
            Ok(stats) => total.merge(stats),
            Err(e) => eprintln!("rk6 bench: a connection task failed: {e}"),
        }
    }
    (total, start.elapsed())
}

async fn closed_loop(mut engine: Engine, timeout: Duration, deadline: Instant) -> Stats {
    let mut stats = Stats::new();
    while Instant::now() < deadline {
        let Some(outcome) = engine.send(timeout, deadline).await else {
            break;
        };
        stats.record(&outcome, None);
    }
    stats
}

async fn constant_rate(
    mut engine: Engine,
    timeout: Duration,
    deadline: Instant,
    first: Instant,
    every: Duration,
) -> Stats {
    let mut stats = Stats::new();
    let mut planned = first;
    while planned < deadline {
        if planned > Instant::now() {
            tokio::time::sleep_until(planned.into()).await;
        }
        let Some(outcome) = engine.send(timeout, deadline).await else {
            break;
        };
        let corrected = planned.elapsed().as_micros() as u64;
        stats.record(&outcome, Some(corrected));
        planned += every;
    }
    stats
}
