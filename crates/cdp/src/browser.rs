//! One Chromium process and its protocol connection: commands from any thread, answers
//! through one-shot channels, events routed to the subscriber of their session.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use crate::error::{CdpError, LaunchError};
use crate::launch::LaunchOptions;

/// A protocol event: `session` is the target session it came from (`None`: the browser).
#[derive(Debug, Clone)]
pub struct Event {
    /// The session id of the target, or `None` for browser-level events.
    pub session: Option<String>,
    /// `Domain.event`.
    pub method: String,
    /// The event's parameters.
    pub params: Value,
}

type Reply = oneshot::Sender<Result<Value, CdpError>>;

/// What the reader thread and the callers share.
struct Conn {
    writer: Mutex<File>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Reply>>,
    /// Event subscribers by session id ("" for the browser's own events).
    routes: Mutex<HashMap<String, mpsc::UnboundedSender<Event>>>,
    closed: AtomicBool,
    debug: bool,
}

/// A running Chromium driven over its debugging pipe. Dropping it kills the browser's
/// whole process group and removes its profile folder.
pub struct Browser {
    conn: Arc<Conn>,
    child: Mutex<Option<Child>>,
    pgid: i32,
    profile: PathBuf,
    version: Value,
}

/// The events of one session, for as long as this is held.
pub struct Subscription {
    conn: Arc<Conn>,
    key: String,
    rx: mpsc::UnboundedReceiver<Event>,
}

impl Subscription {
    /// The next event, `None` once the browser is gone.
    pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }

    /// The next event if one has arrived.
    pub fn try_recv(&mut self) -> Option<Event> {
        self.rx.try_recv().ok()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        lock(&self.conn.routes).remove(&self.key);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pipe whose ends are moved above the standard descriptors (so that placing them at 3
/// and 4 in the child cannot clobber one another), close-on-exec in this process.
fn pipe() -> std::io::Result<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element buffer.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut high = [0; 2];
    for (i, fd) in fds.iter().enumerate() {
        // SAFETY: `fd` was just opened by pipe2.
        high[i] = unsafe { libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 10) };
        // SAFETY: as above; the duplicate stands in for it.
        unsafe { libc::close(*fd) };
        if high[i] < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((high[0], high[1]))
}

impl Browser {
    /// Starts Chromium with `opts` and waits (up to `opts.timeout`) until it answers.
    pub fn launch(opts: &LaunchOptions) -> Result<Browser, LaunchError> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let profile = std::env::temp_dir().join(format!(
            "rk6-browser-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&profile)
            .map_err(|e| LaunchError::Start(format!("creating the profile folder: {e}")))?;
        let start = |e: std::io::Error| LaunchError::Start(e.to_string());
        // The browser reads commands from fd 3 and writes answers and events to fd 4.
        let (cmd_read, cmd_write) = pipe().map_err(start)?;
        let (out_read, out_write) = pipe().map_err(start)?;
        // Chromium's helpers (zygotes, renderers) are its children: made orphans when it is
        // killed, they become this process's to reap, not init's, which in containers
        // often reaps nothing.
        // SAFETY: prctl with these arguments only sets a flag of this process.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
        let mut command = Command::new(&opts.executable);
        command
            .args(opts.command_line(&profile))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(cmd_read, 3) < 0 || libc::dup2(out_write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Its own process group, so that every process it starts is ended with it;
                // and killed with the thread that started it (the reader, which lives as
                // long as the connection), also when this process dies without cleaning up.
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        // SAFETY: each descriptor is owned here and given to exactly one File.
        let (cmd_read_f, out_write_f) =
            unsafe { (File::from_raw_fd(cmd_read), File::from_raw_fd(out_write)) };
        let writer = unsafe { File::from_raw_fd(cmd_write) };
        let reader = unsafe { File::from_raw_fd(out_read) };
        let conn = Arc::new(Conn {
            writer: Mutex::new(writer),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            routes: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            debug: opts.debug,
        });
        let (spawned_tx, spawned_rx) = std::sync::mpsc::channel();
        let stderr_log: Arc<Mutex<Vec<String>>> = Arc::default();
        let debug = opts.debug;
        let reader_conn = conn.clone();
        let stderr_sink = stderr_log.clone();
        std::thread::Builder::new()
            .name("rk6-browser".into())
            .spawn(move || {
                // Spawned here so that the child's death signal is tied to this thread.
                let mut child = command.spawn();
                drop((cmd_read_f, out_write_f));
                if let Ok(c) = &mut child {
                    if let Some(err) = c.stderr.take() {
                        keep_stderr(err, stderr_sink, debug);
                    }
                }
                let ok = child.is_ok();
                let _ = spawned_tx.send(child);
                if ok {
                    read_loop(reader, &reader_conn);
                }
            })
            .map_err(start)?;
        let child = spawned_rx
            .recv()
            .map_err(|_| LaunchError::Start("the launcher thread ended".into()))?
            .map_err(|e| LaunchError::Start(format!("{}: {e}", opts.executable.display())))?;
        let pgid = child.id() as i32;
        let mut browser = Browser {
            conn,
            child: Mutex::new(Some(child)),
            pgid,
            profile,
            version: Value::Null,
        };
        let version = browser.call_blocking("Browser.getVersion", json!({}), opts.timeout);
        match version {
            Ok(v) => browser.version = v,
            Err(e) => {
                // What Chromium said on its way out explains it best, as in k6: wait (a
                // little) for its standard error to end.
                let until = std::time::Instant::now() + Duration::from_secs(2);
                while Arc::strong_count(&stderr_log) > 1 && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let said = lock(&stderr_log)
                    .iter()
                    .rev()
                    .find_map(|l| chromium_error(l));
                return Err(LaunchError::Start(match said {
                    Some(line) => line,
                    None if matches!(e, CdpError::Closed) && browser.is_connected() => {
                        format!(
                            "{} did not answer within {:?}",
                            opts.executable.display(),
                            opts.timeout
                        )
                    }
                    None => format!("{} exited before it answered", opts.executable.display()),
                }));
            }
        }
        Ok(browser)
    }

    /// Sends a command and waits for its answer on this thread (no runtime needed).
    fn call_blocking(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let rx = self.send(None, method, params);
        let deadline = std::time::Instant::now() + timeout;
        let mut rx = rx;
        loop {
            match rx.try_recv() {
                Ok(r) => return r,
                Err(oneshot::error::TryRecvError::Closed) => return Err(CdpError::Closed),
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            if std::time::Instant::now() >= deadline {
                return Err(CdpError::Closed);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> oneshot::Receiver<Result<Value, CdpError>> {
        let (tx, rx) = oneshot::channel();
        if self.conn.closed.load(Ordering::Acquire) {
            let _ = tx.send(Err(CdpError::Closed));
            return rx;
        }
        let id = self.conn.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_string());
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap_or_default();
        if self.conn.debug {
            eprintln!("rk6 browser -> {}", String::from_utf8_lossy(&bytes));
        }
        bytes.push(0);
        lock(&self.conn.pending).insert(id, tx);
        let written = lock(&self.conn.writer).write_all(&bytes);
        if written.is_err() {
            if let Some(tx) = lock(&self.conn.pending).remove(&id) {
                let _ = tx.send(Err(CdpError::Closed));
            }
        }
        rx
    }

    /// Sends `method` to `session` (`None`: the browser) and resolves with its result.
    pub fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> impl std::future::Future<Output = Result<Value, CdpError>> + Send + 'static {
        let rx = self.send(session, method, params);
        async move { rx.await.unwrap_or(Err(CdpError::Closed)) }
    }

    /// Receives the events of `session` ("" for the browser's own) until dropped.
    pub fn subscribe(&self, session: &str) -> Subscription {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.conn.routes).insert(session.to_string(), tx);
        Subscription {
            conn: self.conn.clone(),
            key: session.to_string(),
            rx,
        }
    }

    /// The connection is still up.
    pub fn is_connected(&self) -> bool {
        !self.conn.closed.load(Ordering::Acquire)
    }

    /// `Browser.getVersion`'s answer (`product`, `userAgent`, ...).
    pub fn version(&self) -> &Value {
        &self.version
    }

    /// The browser's process id (its process group's too).
    pub fn pid(&self) -> i32 {
        self.pgid
    }
}

/// Keeps the last lines Chromium writes to its standard error (echoed with
/// `K6_BROWSER_DEBUG`), to explain a failed start.
fn keep_stderr(err: std::process::ChildStderr, log: Arc<Mutex<Vec<String>>>, echo: bool) {
    let _ = std::thread::Builder::new()
        .name("rk6-browser-stderr".into())
        .spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if echo {
                    eprintln!("{line}");
                }
                let mut log = lock(&log);
                if log.len() == 32 {
                    log.remove(0);
                }
                log.push(line);
            }
        });
}

/// The message of a Chromium log line of level ERROR or FATAL
/// (`[pid:tid:time:ERROR:file.cc(12)] message`).
fn chromium_error(line: &str) -> Option<String> {
    let (head, message) = line.split_once("] ")?;
    (head.contains(":ERROR:") || head.contains(":FATAL:")).then(|| message.trim().to_string())
}

/// Reads NUL-separated messages until the browser closes its end.
fn read_loop(reader: File, conn: &Conn) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(0, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buf.last() == Some(&0) {
            buf.pop();
        }
        if conn.debug {
            eprintln!("rk6 browser <- {}", String::from_utf8_lossy(&buf));
        }
        let Ok(mut msg) = serde_json::from_slice::<Value>(&buf) else {
            continue;
        };
        if let Some(id) = msg.get("id").and_then(Value::as_u64) {
            let Some(tx) = lock(&conn.pending).remove(&id) else {
                continue;
            };
            let result = match msg.get_mut("error") {
                Some(e) => Err(CdpError::Protocol {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                }),
                None => Ok(msg
                    .get_mut("result")
                    .map(Value::take)
                    .unwrap_or(Value::Null)),
            };
            let _ = tx.send(result);
        } else if let Some(method) = msg.get("method").and_then(Value::as_str) {
            let session = msg
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
            let event = Event {
                method: method.to_string(),
                params: msg
                    .get_mut("params")
                    .map(Value::take)
                    .unwrap_or(Value::Null),
                session,
            };
            let routes = lock(&conn.routes);
            if let Some(tx) = routes.get(event.session.as_deref().unwrap_or("")) {
                let _ = tx.send(event);
            }
        }
    }
    conn.closed.store(true, Ordering::Release);
    for (_, tx) in lock(&conn.pending).drain() {
        let _ = tx.send(Err(CdpError::Closed));
    }
    // Subscribers see the end of their stream.
    lock(&conn.routes).clear();
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: signals the group this browser leads; it was made for it alone.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        if let Some(mut child) = lock(&self.child).take() {
            let _ = child.wait();
        }
        // The group's other processes, reparented here (see `launch`), are reaped too.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        loop {
            let mut status = 0;
            // SAFETY: waits only for children in the browser's process group.
            let pid = unsafe { libc::waitpid(-self.pgid, &mut status, libc::WNOHANG) };
            if pid < 0 || std::time::Instant::now() >= deadline {
                break;
            }
            if pid == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chromium, when installed (CI installs Debian's and then requires it).
    fn options() -> Option<LaunchOptions> {
        let found = LaunchOptions::from_env(|k| match k {
            "K6_BROWSER_ARGS" => Some("no-sandbox".into()),
            _ => std::env::var(k).ok(),
        });
        match found {
            Ok(o) => Some(o),
            Err(e) if std::env::var_os("CI").is_some() => panic!("Chromium is required in CI: {e}"),
            Err(_) => None,
        }
    }

    fn group_alive(pgid: i32) -> bool {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::kill(-pgid, 0) == 0 }
    }

    #[test]
    fn chromium_log_lines_give_their_message() {
        assert_eq!(
            chromium_error("[1:1:1207/062447.123:ERROR:zygote_host_impl_linux.cc(101)] Running as root without --no-sandbox is not supported.").as_deref(),
            Some("Running as root without --no-sandbox is not supported.")
        );
        assert_eq!(
            chromium_error("[1:1:1207/062447.123:INFO:x.cc(1)] fine"),
            None
        );
        assert_eq!(chromium_error("plain text"), None);
    }

    #[test]
    fn drives_a_page_and_leaves_no_process_behind() {
        let Some(opts) = options() else { return };
        let browser = Browser::launch(&opts).expect("launch");
        assert!(browser.version()["product"]
            .as_str()
            .unwrap_or("")
            .contains("Chrome"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let pgid = browser.pid();
        let title = rt.block_on(async {
            let ctx = browser
                .call(None, "Target.createBrowserContext", json!({}))
                .await
                .unwrap();
            let id = ctx["browserContextId"].clone();
            let t = browser
                .call(
                    None,
                    "Target.createTarget",
                    json!({ "url": "about:blank", "browserContextId": id }),
                )
                .await
                .unwrap();
            let a = browser
                .call(
                    None,
                    "Target.attachToTarget",
                    json!({ "targetId": t["targetId"], "flatten": true }),
                )
                .await
                .unwrap();
            let session = a["sessionId"].as_str().unwrap().to_string();
            let mut events = browser.subscribe(&session);
            browser
                .call(Some(&session), "Page.enable", json!({}))
                .await
                .unwrap();
            browser
                .call(
                    Some(&session),
                    "Page.navigate",
                    json!({ "url": "data:text/html,<title>hi rk6</title>" }),
                )
                .await
                .unwrap();
            // The load event arrives on the session's subscription.
            loop {
                let e = std::future::poll_fn(|cx| events.poll_recv(cx))
                    .await
                    .expect("events");
                if e.method == "Page.loadEventFired" {
                    break;
                }
            }
            let r = browser
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({ "expression": "document.title" }),
                )
                .await
                .unwrap();
            let bad = browser
                .call(Some(&session), "No.suchMethod", json!({}))
                .await;
            assert!(matches!(bad, Err(CdpError::Protocol { .. })), "{bad:?}");
            r["result"]["value"].as_str().unwrap().to_string()
        });
        assert_eq!(title, "hi rk6");
        assert!(group_alive(pgid));
        drop(browser);
        // Its processes are killed at once; init reaps the orphans shortly after.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while group_alive(pgid) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !group_alive(pgid),
            "a Chromium process outlived its Browser"
        );
    }
}
