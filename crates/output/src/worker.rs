//! The background thread of a network output (pusher or writer): it runs until its queue
//! closes and hands back one result, which the output waits for at the end of the test
//! only until a deadline, so a hanging server never blocks the exit.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;
use std::time::Instant;

/// A named thread whose result is collected with a deadline.
pub(crate) struct Worker<T> {
    done: Receiver<T>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Worker<T> {
    /// Starts `job` on a thread named `name`.
    pub(crate) fn spawn(
        name: &str,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<Worker<T>> {
        let (done_tx, done) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = done_tx.send(job());
            })?;
        Ok(Worker {
            done,
            thread: Some(thread),
        })
    }

    /// The job's result, once it ended before `deadline`; `None` past it (the thread is
    /// then left to die with the process rather than block the exit).
    pub(crate) fn wait(&mut self, deadline: Instant) -> Option<T> {
        let wait = deadline.saturating_duration_since(Instant::now());
        let result = self.done.recv_timeout(wait).ok()?;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_result_in_time_is_returned_and_a_late_one_is_not_waited_for() {
        let mut quick = Worker::spawn("t-quick", || 7).unwrap();
        assert_eq!(quick.wait(Instant::now() + Duration::from_secs(5)), Some(7));
        let (_hold, gate) = sync_channel::<()>(0);
        let mut stuck = Worker::spawn("t-stuck", move || gate.recv().is_ok()).unwrap();
        let start = Instant::now();
        assert_eq!(stuck.wait(start + Duration::from_millis(50)), None);
        assert!(start.elapsed() < Duration::from_secs(2));
    }
}
