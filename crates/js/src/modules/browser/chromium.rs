//! The run's one Chromium, started when a VU first needs it and shared by every browser VU
//! of the process: each VU-iteration works in its own browser context (cookies, storage,
//! cache, permissions), so isolation is kept without a browser start per iteration.
//! A Chromium that crashed or was killed is started again by the next iteration that
//! needs it, so one crash fails the iterations it was serving (as in k6, whose browser is
//! per iteration), not the rest of the test.

use std::sync::{Arc, Mutex};

use rk6_cdp::{Browser, LaunchOptions};
use tokio::sync::oneshot;

type Launched = Result<Arc<Browser>, String>;

#[derive(Default)]
enum State {
    #[default]
    Idle,
    Starting(Vec<oneshot::Sender<Launched>>),
    Done(Launched),
}

/// The run-scoped browser (`RunScoped`): dropped with the run's program, which ends
/// Chromium's whole process group.
#[derive(Default)]
pub(crate) struct Chromium(Mutex<State>);

impl Chromium {
    /// The browser, or the launch error; the first caller starts it on a thread of its
    /// own, and every caller until it is up waits for the same launch.
    pub(crate) fn get(self: &Arc<Self>) -> oneshot::Receiver<Launched> {
        let (tx, rx) = oneshot::channel();
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(&*state, State::Done(Ok(b)) if !b.is_connected()) {
            *state = State::Idle;
        }
        match &mut *state {
            State::Done(r) => {
                let _ = tx.send(r.clone());
            }
            State::Starting(waiters) => waiters.push(tx),
            State::Idle => {
                *state = State::Starting(vec![tx]);
                drop(state);
                let me = self.clone();
                let spawned = std::thread::Builder::new()
                    .name("rk6-browser-launch".into())
                    .spawn(move || me.finish(launch()));
                if let Err(e) = spawned {
                    self.finish(Err(format!("launching browser: {e}")));
                }
            }
        }
        rx
    }

    fn finish(&self, launched: Launched) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let State::Starting(waiters) = std::mem::take(&mut *state) {
            for w in waiters {
                let _ = w.send(launched.clone());
            }
        }
        *state = State::Done(launched);
    }

    /// The browser if it is up and connected.
    pub(crate) fn running(&self) -> Option<Arc<Browser>> {
        match &*self.0.lock().unwrap_or_else(|e| e.into_inner()) {
            State::Done(Ok(b)) if b.is_connected() => Some(b.clone()),
            _ => None,
        }
    }
}

/// Starts Chromium as k6's `K6_BROWSER_*` settings of the process environment say.
fn launch() -> Launched {
    LaunchOptions::from_env(|k| std::env::var(k).ok())
        .and_then(|o| Browser::launch(&o))
        .map(Arc::new)
        .map_err(|e| e.to_string())
}
