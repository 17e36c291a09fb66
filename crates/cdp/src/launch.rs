//! Finding Chromium and the command line it starts with, from k6's `K6_BROWSER_*` settings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::LaunchError;

/// What k6 looks for when `K6_BROWSER_EXECUTABLE_PATH` is not set, in its order (a headless
/// shell first): names on `PATH`, and one absolute path.
const PATH_NAMES: &[&str] = &[
    "headless_shell",
    "headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "google-chrome-beta",
    "google-chrome-unstable",
    "/usr/bin/google-chrome",
    "chrome",
];

/// Well-known install locations tried after k6's list, where a package puts Chromium outside
/// `PATH`.
const KNOWN_PATHS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
    "/snap/bin/chromium",
];

/// The flags every automated Chromium starts with (the usual automation set: no first-run
/// UI, no background work that would skew timings, no throttling of hidden pages), and two
/// that save a process each (docs/design/006: the network service and the GPU's software
/// compositor run inside the browser process; Chromium 156 reads the network service's
/// switch as `NetworkServiceInProcess2`), and the WebUI omnibox popups each window
/// preloads in a renderer of its own (~150 MiB a window, which a headless run never shows;
/// `WebUIOmniboxPopup`, `WebUIOmniboxAimPopup`) and the spare renderer kept warm for the
/// next site (`SpareRendererForSitePerProcess`), which a VU that navigates once per fresh
/// context pays for without using; each can be dropped with `K6_BROWSER_IGNORE_DEFAULT_ARGS`.
const DEFAULT_ARGS: &[&str] = &[
    "disable-background-networking",
    "enable-features=NetworkService,NetworkServiceInProcess,NetworkServiceInProcess2",
    "in-process-gpu",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-breakpad",
    "disable-crash-reporter",
    "disable-component-extensions-with-background-pages",
    "disable-default-apps",
    "disable-dev-shm-usage",
    "disable-extensions",
    "disable-features=ImprovedCookieControls,LazyFrameLoading,GlobalMediaControls,DestroyProfileOnBrowserClose,MediaRouter,AcceptCHFrame,BackForwardCache,WebUIOmniboxPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    "disable-popup-blocking",
    "disable-prompt-on-repost",
    "disable-renderer-backgrounding",
    "disable-sync",
    "force-color-profile=srgb",
    "metrics-recording-only",
    "no-first-run",
    "enable-automation",
    "password-store=basic",
    "use-mock-keychain",
    "no-service-autorun",
    "no-default-browser-check",
    "no-startup-window",
    "hide-scrollbars",
    "mute-audio",
    "blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4",
];

/// How Chromium is started: k6's `K6_BROWSER_*` settings, read once per run.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// `K6_BROWSER_EXECUTABLE_PATH`, or what was found on `PATH`.
    pub executable: PathBuf,
    /// `K6_BROWSER_HEADLESS` (default true).
    pub headless: bool,
    /// `K6_BROWSER_ARGS`: extra flags, `name` or `name=value`.
    pub args: Vec<String>,
    /// `K6_BROWSER_IGNORE_DEFAULT_ARGS`: default flags to leave out.
    pub ignore_default_args: Vec<String>,
    /// `K6_BROWSER_TIMEOUT` (default 30 s): how long the start may take.
    pub timeout: Duration,
    /// `K6_BROWSER_DEBUG`: log every protocol message.
    pub debug: bool,
}

impl LaunchOptions {
    /// The settings from an environment lookup (`__ENV` semantics: the process
    /// environment in k6), with k6's defaults for what is unset.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Self, LaunchError> {
        let flag = |name: &str, default: bool| -> Result<bool, LaunchError> {
            match env(name) {
                None => Ok(default),
                Some(v) if v.is_empty() => Ok(default),
                Some(v) => parse_go_bool(&v).ok_or_else(|| {
                    LaunchError::Setting(format!(
                        "parsing browser option {name}: invalid boolean value {v:?}"
                    ))
                }),
            }
        };
        let list = |name: &str| -> Vec<String> {
            env(name)
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().trim_start_matches("--").to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        let timeout = match env("K6_BROWSER_TIMEOUT") {
            None => Duration::from_secs(30),
            Some(v) => parse_timeout(&v).ok_or_else(|| {
                LaunchError::Setting(format!(
                    "parsing browser option K6_BROWSER_TIMEOUT: invalid duration {v:?}"
                ))
            })?,
        };
        let executable = find_executable(
            env("K6_BROWSER_EXECUTABLE_PATH").as_deref(),
            env("PATH").as_deref(),
        )?;
        Ok(LaunchOptions {
            executable,
            headless: flag("K6_BROWSER_HEADLESS", true)?,
            args: list("K6_BROWSER_ARGS"),
            ignore_default_args: list("K6_BROWSER_IGNORE_DEFAULT_ARGS"),
            timeout,
            debug: flag("K6_BROWSER_DEBUG", false)?,
        })
    }

    /// The command-line flags (without the executable), `user_data_dir` the profile's folder.
    pub fn command_line(&self, user_data_dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for a in DEFAULT_ARGS {
            let name = a.split('=').next().unwrap_or(a);
            if !self.ignore_default_args.iter().any(|i| i == name || i == a) {
                out.push(format!("--{a}"));
            }
        }
        if self.headless {
            out.push("--headless=new".into());
        }
        out.push("--remote-debugging-pipe".into());
        out.push(format!("--user-data-dir={}", user_data_dir.display()));
        out.push("--window-size=1280,720".into());
        for a in &self.args {
            let name = a.split('=').next().unwrap_or(a);
            // A user flag replaces a default of the same name.
            out.retain(|f| f.trim_start_matches("--").split('=').next() != Some(name));
            out.push(format!("--{a}"));
        }
        out.push("about:blank".into());
        out
    }
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// A Go duration as `K6_BROWSER_TIMEOUT` takes it (`30s`, `1m30s`, `500ms`).
fn parse_timeout(v: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = v.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_end..];
    }
    Some(Duration::from_secs_f64(total))
}

/// The browser executable: the configured path if set (it must exist), else the first of
/// k6's names found on `path`, else a well-known location.
pub fn find_executable(
    configured: Option<&str>,
    path: Option<&str>,
) -> Result<PathBuf, LaunchError> {
    if let Some(p) = configured.filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(LaunchError::NotFound(p.display().to_string()))
        };
    }
    for name in PATH_NAMES {
        if name.starts_with('/') {
            if is_executable(Path::new(name)) {
                return Ok(PathBuf::from(name));
            }
            continue;
        }
        for dir in path.unwrap_or("").split(':').filter(|d| !d.is_empty()) {
            let candidate = Path::new(dir).join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    KNOWN_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| is_executable(p))
        .ok_or_else(|| LaunchError::NotFound(String::new()))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_configured_path_that_is_not_there_is_named_in_the_error() {
        let e = LaunchOptions::from_env(env(&[("K6_BROWSER_EXECUTABLE_PATH", "/nonexistent")]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "finding browser executable: k6 couldn't detect google chrome or a chromium-supported browser on the given path: /nonexistent"
        );
    }

    #[test]
    fn path_is_searched_in_k6s_order() {
        let dir = std::env::temp_dir().join(format!("rk6-cdp-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let add = |name: &str| {
            let p = dir.join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let find = || find_executable(None, Some(dir.to_str().unwrap())).unwrap();
        add("google-chrome");
        add("chromium-browser");
        assert_eq!(find(), dir.join("chromium-browser"));
        add("chromium");
        assert_eq!(find(), dir.join("chromium"));
        // k6 1.1.0 prefers a headless shell (Playwright's and Google's builds install one
        // under this name) over a full Chromium on the same PATH.
        add("headless-shell");
        assert_eq!(find(), dir.join("headless-shell"));
        add("headless_shell");
        assert_eq!(find(), dir.join("headless_shell"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn args_add_and_replace_flags_and_defaults_can_be_dropped() {
        let o = LaunchOptions {
            executable: "/bin/true".into(),
            headless: false,
            args: vec!["no-sandbox".into(), "hide-scrollbars=false".into()],
            ignore_default_args: vec!["mute-audio".into()],
            timeout: Duration::from_secs(1),
            debug: false,
        };
        let line = o.command_line(Path::new("/tmp/p"));
        assert!(line.contains(&"--no-sandbox".to_string()));
        assert!(line.contains(&"--hide-scrollbars=false".to_string()));
        assert!(!line.contains(&"--hide-scrollbars".to_string()));
        assert!(!line.iter().any(|a| a == "--mute-audio"));
        assert!(!line.iter().any(|a| a.starts_with("--headless")));
        assert!(line.contains(&"--remote-debugging-pipe".to_string()));
    }

    #[test]
    fn settings_are_read_as_go_reads_them() {
        let o = LaunchOptions::from_env(env(&[
            ("K6_BROWSER_EXECUTABLE_PATH", "/bin/sh"),
            ("K6_BROWSER_HEADLESS", "F"),
            ("K6_BROWSER_TIMEOUT", "1m30s"),
            ("K6_BROWSER_ARGS", "no-sandbox, --lang=fr"),
        ]))
        .unwrap();
        assert!(!o.headless);
        assert_eq!(o.timeout, Duration::from_secs(90));
        assert_eq!(o.args, ["no-sandbox", "lang=fr"]);
        assert!(LaunchOptions::from_env(env(&[
            ("K6_BROWSER_EXECUTABLE_PATH", "/bin/sh"),
            ("K6_BROWSER_HEADLESS", "yes")
        ]))
        .is_err());
    }
}
