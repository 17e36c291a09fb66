//! `GET /metrics` of the REST API (k6 1.2): the process's own health in Prometheus's text
//! format. k6 serves its Go runtime's collectors (`go_*`, `process_*`); rk6 has no Go
//! runtime, so it serves the standard `process_*` series, read from `/proc/self`.

use std::fmt::Write;

/// The exposition text (format 0.0.4).
pub fn render() -> String {
    let mut out = String::new();
    let mut series = |name: &str, kind: &str, help: &str, value: f64| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name} {value}");
    };
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis, which may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as f64;
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command.
    series(
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
        (field(11) + field(12)) / ticks,
    );
    series(
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size in bytes.",
        field(21) * page,
    );
    series(
        "process_virtual_memory_bytes",
        "gauge",
        "Virtual memory size in bytes.",
        field(20),
    );
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    series(
        "process_open_fds",
        "gauge",
        "Number of open file descriptors.",
        fds as f64,
    );
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    series(
        "process_max_fds",
        "gauge",
        "Maximum number of open file descriptors.",
        limit.rlim_cur as f64,
    );
    let boot = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("btime ")
                    .and_then(|v| v.trim().parse::<f64>().ok())
            })
        })
        .unwrap_or(0.0);
    series(
        "process_start_time_seconds",
        "gauge",
        "Start time of the process since unix epoch in seconds.",
        boot + field(19) / ticks,
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_process_series_have_values() {
        let text = super::render();
        let value = |name: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.parse().ok())
                .unwrap()
        };
        assert!(value("process_resident_memory_bytes") > 1e5);
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_start_time_seconds") > 1.6e9);
        assert!(text.contains("# TYPE process_cpu_seconds_total counter"));
    }
}
