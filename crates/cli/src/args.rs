//! Command-line arguments, with k6's flag names.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rk6_options::GoDuration;

/// k6's integer flags: Go's `strconv.ParseInt`, with its error text.
fn go_int(v: &str) -> Result<i64, String> {
    rk6_options::text::go_int(v)
}

/// k6's boolean flags given a value (`--flag=VALUE`): Go's `strconv.ParseBool`, with its
/// error text.
fn go_bool(v: &str) -> Result<bool, String> {
    rk6_options::text::go_bool(v).map_err(|_| {
        let quoted = serde_json::to_string(v).unwrap_or_default();
        format!("strconv.ParseBool: parsing {quoted}: invalid syntax")
    })
}

/// k6's duration flags: Go's `time.ParseDuration`, with its error text.
fn go_duration(v: &str) -> Result<GoDuration, String> {
    rk6_options::parse_time_duration(v)
}

/// rk6: a load-testing engine that runs k6 scripts.
#[derive(Debug, Parser)]
#[command(name = "rk6", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Log times to the nanosecond (env K6_LOG_NS_TIMESTAMPS; k6 2.3).
    #[arg(long = "log-ns-timestamps", global = true)]
    pub log_ns_timestamps: bool,
}

/// rk6's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a k6 test script.
    Run(Box<RunArgs>),
    /// Start the built-in demo shop on 127.0.0.1 and run examples/journey.js against it.
    Demo(DemoArgs),
    /// Blast one URL wrk-style, without a script (latency distribution, req/s, errors).
    Bench(Box<BenchArgs>),
    /// Print the version.
    Version,
    /// Show the status of a running test (through its control API).
    Status(ControlArgs),
    /// Change the VUs of a running externally-controlled scenario.
    Scale(ScaleArgs),
    /// Pause a running test (externally-controlled) or keep a --paused one waiting.
    Pause(ControlArgs),
    /// Resume a paused test, e.g. one started with --paused.
    Resume(ControlArgs),
    /// Print the script's options as JSON (k6's `inspect` layout).
    Inspect(InspectArgs),
    /// Compare two --summary-export files (rk6's or k6's); exit 99 when a
    /// --max-regression limit is exceeded.
    Compare(CompareArgs),
    /// Bundle the script, the files it reads and its options into a k6 archive (.tar).
    Archive(Box<ArchiveArgs>),
    /// Write a starter test script.
    New(NewArgs),
    /// Merge the pushes of a distributed test's runners (`-o aggregate=URL`) and judge
    /// the whole test: one summary, one threshold verdict.
    Aggregate(Box<AggregateArgs>),
    /// List the feature flags `--features` / K6_FEATURES can turn on (k6 2.1).
    Features(FeaturesArgs),
    /// List the script's imports and what they require (k6 1.6's `deps`).
    Deps(DepsArgs),
}

/// Flags of `rk6 features`.
#[derive(Debug, Clone, Args)]
pub struct FeaturesArgs {
    /// Print a JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rk6 deps`.
#[derive(Debug, Clone, Args)]
pub struct DepsArgs {
    /// The script or archive (`-` reads the script from stdin).
    pub script: PathBuf,
    /// Print JSON instead of the three sections.
    #[arg(long)]
    pub json: bool,
}

/// Where a running test's control API listens.
#[derive(Debug, Clone, Args)]
pub struct ControlArgs {
    /// Address of the test's control API.
    #[arg(short = 'a', long = "address", default_value = "localhost:6565")]
    pub address: String,
}

/// Flags of `rk6 scale`.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Active VUs to run.
    #[arg(short = 'u', long = "vus")]
    pub vus: Option<u64>,
    /// Maximum VUs (cannot exceed the scenario's maxVUs).
    #[arg(short = 'm', long = "max")]
    pub max: Option<u64>,
    #[command(flatten)]
    pub control: ControlArgs,
}

/// Flags of `rk6 run` (k6 names; only those rk6 implements are accepted).
#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {
    /// Path of the script to run.
    pub script: PathBuf,
    /// The flags `run` shares with `archive`.
    #[command(flatten)]
    pub options: OptionFlags,
    /// Write the end-of-test summary as JSON (k6's legacy export format).
    #[arg(long = "summary-export", value_name = "FILE")]
    pub summary_export: Option<PathBuf>,
    /// k6 1.5's machine-readable summary (schema 1.0.0) for --summary-export and as
    /// handleSummary()'s argument (env K6_NEW_MACHINE_READABLE_SUMMARY); off by default.
    #[arg(long = "new-machine-readable-summary", value_name = "BOOL", value_parser = go_bool, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub new_machine_readable_summary: Option<bool>,
    /// Stream every sample to an output: json=FILE or csv=FILE (.gz compresses); repeatable.
    #[arg(short = 'o', long = "out", value_name = "NAME=ARG")]
    pub out: Vec<String>,
    /// Also write rk6's own metrics (iteration_start_delay, http_conns_opened) to
    /// --summary-export, handleSummary and the -o outputs, which by default hold k6's
    /// metrics only (the text summary always shows them).
    #[arg(long = "rk6-metrics")]
    pub rk6_metrics: bool,
    /// Compare this run with a --summary-export file of an earlier one, printed under the
    /// summary (see `rk6 compare`).
    #[arg(long = "compare-to", value_name = "BASE")]
    pub compare_to: Option<PathBuf>,
    /// With --compare-to: METRIC:STAT=P% fails the run (exit 99) when the stat rose more
    /// than P % over BASE (-P%: dropped more than P %); repeatable.
    #[arg(long = "max-regression", value_name = "METRIC:STAT=P%")]
    pub max_regression: Vec<String>,
    /// Deprecated (k6 2.0 removed it): --summary-mode=disabled.
    #[arg(long = "no-summary")]
    pub no_summary: bool,
    /// Do not evaluate thresholds.
    #[arg(long = "no-thresholds")]
    pub no_thresholds: bool,
    /// Include the system environment in __ENV.
    #[arg(long = "include-system-env-vars", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub include_system_env_vars: bool,
    /// Address of the REST API (env K6_ADDRESS); as in k6 2.0, no API without one.
    #[arg(short = 'a', long = "address")]
    pub address: Option<String>,
    /// Keep the REST API up after the test until SIGINT/SIGTERM (env K6_LINGER); the
    /// summary comes then, so a teardown through the API still counts in it.
    #[arg(short = 'l', long = "linger")]
    pub linger: bool,
    /// Append console.* output to FILE instead of printing it (env K6_CONSOLE_OUTPUT).
    #[arg(long = "console-output", value_name = "FILE")]
    pub console_output: Option<PathBuf>,
}

/// The flags `run` and `archive` share, declared once: the test's options (the CLI layer
/// of `options::load`), where its config and environment come from, and logging. Only
/// `--include-system-env-vars` differs between the two (on for `run`, off for `archive`),
/// so each command declares that one itself.
#[derive(Debug, Clone, Args, Default, PartialEq)]
pub struct OptionFlags {
    /// Number of virtual users.
    #[arg(short = 'u', long = "vus", value_parser = go_int)]
    pub vus: Option<i64>,
    /// Test duration, a Go duration (e.g. 30s, 1m30s).
    #[arg(short = 'd', long = "duration", value_parser = go_duration)]
    pub duration: Option<GoDuration>,
    /// Total iterations shared among the VUs.
    #[arg(short = 'i', long = "iterations", value_parser = go_int)]
    pub iterations: Option<i64>,
    /// A ramping stage DURATION:TARGET (e.g. 30s:10); repeatable, or comma-separated.
    #[arg(short = 's', long = "stage", value_name = "DURATION:TARGET")]
    pub stage: Vec<String>,
    /// Set an __ENV variable (KEY=VALUE); repeatable.
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Add a tag to every sample (KEY=VALUE); repeatable.
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tag: Vec<String>,
    /// Hide the banner and the progress lines.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Show debug logs (including console.debug).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Summary layout: compact, full or disabled (legacy: deprecated).
    #[arg(long = "summary-mode", value_name = "MODE")]
    pub summary_mode: Option<String>,
    /// Run only these scenarios, each as configured (k6 2.3); repeatable or comma-separated.
    #[arg(long = "scenario", value_name = "NAMES")]
    pub scenario: Vec<String>,
    /// Run the scenario (or each --scenario) once: one VU, one iteration (k6 2.3).
    #[arg(long = "once")]
    pub once: bool,
    /// Feature flags to turn on (see `rk6 features`); repeatable or comma-separated.
    #[arg(long = "features", value_name = "FLAGS")]
    pub features: Vec<String>,
    /// Skip TLS certificate verification.
    #[arg(long = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: bool,
    /// Do not run setup().
    #[arg(long = "no-setup")]
    pub no_setup: bool,
    /// Do not run teardown().
    #[arg(long = "no-teardown")]
    pub no_teardown: bool,
    /// Disable colours.
    #[arg(long = "no-color")]
    pub no_color: bool,
    /// Maximum redirects to follow.
    #[arg(long = "max-redirects", value_parser = go_int)]
    pub max_redirects: Option<i64>,
    /// Most requests of one http.batch call in flight at once (default 20).
    #[arg(long, value_parser = go_int)]
    pub batch: Option<i64>,
    /// Most requests of one http.batch call to one host at once (default 6).
    #[arg(long = "batch-per-host", value_parser = go_int)]
    pub batch_per_host: Option<i64>,
    /// User-Agent header to send.
    #[arg(long = "user-agent")]
    pub user_agent: Option<String>,
    /// Log every HTTP request and response (headers; `--http-debug=full` adds bodies).
    #[arg(long = "http-debug", value_name = "full", num_args = 0..=1, require_equals = true, default_missing_value = "headers")]
    pub http_debug: Option<String>,
    /// JSON config file (k6's format), the lowest option layer above the defaults.
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Start paused; `rk6 resume` (or PATCH /v1/status) starts the scenarios.
    #[arg(short = 'p', long = "paused")]
    pub paused: bool,
    /// The part of the test this instance runs, e.g. 0:1/3 (see --execution-segment-sequence).
    #[arg(long = "execution-segment", value_name = "SEGMENT")]
    pub execution_segment: Option<String>,
    /// All the segments a test is split into, e.g. 0,1/3,2/3,1.
    #[arg(long = "execution-segment-sequence", value_name = "SEQUENCE")]
    pub execution_segment_sequence: Option<String>,
    /// Summary statistics of trends, e.g. avg,p(95),p(99.9).
    #[arg(long = "summary-trend-stats", value_name = "STATS")]
    pub summary_trend_stats: Option<String>,
    /// Time unit of the summary's trend values (s, ms, us).
    #[arg(long = "summary-time-unit", value_name = "UNIT")]
    pub summary_time_unit: Option<String>,
    /// Do not reuse connections between iterations of a VU.
    #[arg(long = "no-vu-connection-reuse")]
    pub no_vu_connection_reuse: bool,
    /// Do not reuse connections at all.
    #[arg(long = "no-connection-reuse")]
    pub no_connection_reuse: bool,
    /// DNS cache and address choice, e.g. ttl=1m,select=roundRobin,policy=onlyIPv4.
    #[arg(long = "dns", value_name = "CONFIG")]
    pub dns: Option<String>,
    /// Never connect to this CIDR range; repeatable or comma-separated.
    #[arg(long = "blacklist-ip", value_name = "CIDR")]
    pub blacklist_ip: Vec<String>,
    /// Never connect to names matching these patterns (leading `*` wildcard), comma-separated.
    #[arg(long = "block-hostnames", value_name = "PATTERNS")]
    pub block_hostnames: Option<String>,
    /// Source IPs, ranges (a-b) or CIDRs handed to VUs in turn, comma-separated.
    #[arg(long = "local-ips", value_name = "IPS")]
    pub local_ips: Option<String>,
    /// Limit all VUs together to this many requests per second.
    #[arg(long = "rps", value_parser = go_int)]
    pub rps: Option<i64>,
    /// A secret source for k6/secrets, repeatable: `mock=key=value,...` or
    /// `file=path` (lines of key=value), each with optional `name=NAME` and `default`.
    #[arg(long = "secret-source", value_name = "TYPE=CONFIG")]
    pub secret_source: Vec<String>,
}

/// Flags of `rk6 demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Port of the demo shop on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Only serve the shop (until Ctrl+C) instead of running the journey.
    #[arg(long)]
    pub serve_only: bool,
    /// Run the hybrid journey (examples/hybrid.js): API load plus a real browser user
    /// (needs Chromium).
    #[arg(long)]
    pub browser: bool,
    /// Hide the banner and the progress lines.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

/// Flags of `rk6 bench` (wrk's names where they exist).
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Target URL (http:// or https://).
    pub url: String,
    /// Connections kept open, each sending one request at a time.
    #[arg(short = 'c', long = "connections", default_value_t = 10)]
    pub connections: usize,
    /// Test duration (k6 syntax, e.g. 10s, 1m30s).
    #[arg(short = 'd', long = "duration", default_value = "10s")]
    pub duration: String,
    /// Worker threads of the I/O runtime.
    #[arg(short = 't', long = "threads", default_value_t = 2)]
    pub threads: usize,
    /// HTTP method.
    #[arg(short = 'm', long = "method", default_value = "GET")]
    pub method: String,
    /// Request header "Name: value"; repeatable.
    #[arg(short = 'H', long = "header", value_name = "K: V")]
    pub header: Vec<String>,
    /// Request body.
    #[arg(short = 'b', long = "body")]
    pub body: Option<String>,
    /// Constant throughput in requests/s over all connections (latency corrected for
    /// coordinated omission, as wrk2).
    #[arg(long = "rate", value_name = "R")]
    pub rate: Option<f64>,
    /// Per-request timeout (k6 duration syntax).
    #[arg(long = "timeout", default_value = "60s")]
    pub timeout: String,
    /// Skip TLS certificate verification.
    #[arg(long = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: bool,
    /// Speak HTTP/2 with prior knowledge over plain TCP (h2c) to an http:// URL.
    #[arg(long)]
    pub h2c: bool,
    /// Write the result as JSON to FILE.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Threshold on http_req_duration in k6 syntax, e.g. 'p(99)<50' (ms); repeatable.
    #[arg(long = "threshold", value_name = "EXPR")]
    pub threshold: Vec<String>,
}

/// Flags of `rk6 inspect`.
#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// Path of the script.
    pub script: PathBuf,
    /// Also print the scenarios the shortcuts stand for, `totalDuration` and `maxVUs`.
    #[arg(long = "execution-requirements")]
    pub execution_requirements: bool,
    /// Set an __ENV variable (KEY=VALUE); repeatable.
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Include the system environment in __ENV.
    #[arg(long = "include-system-env-vars", default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub include_system_env_vars: bool,
}

/// Flags of `rk6 compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The reference run's --summary-export file.
    pub base: PathBuf,
    /// The run to judge against it.
    pub new: PathBuf,
    /// METRIC:STAT=P%: exit 99 when NEW's stat is more than P % above BASE's (-P%: more
    /// than P % below), e.g. 'http_req_duration:p(95)=10%', 'http_reqs:rate=-5%';
    /// repeatable.
    #[arg(long = "max-regression", value_name = "METRIC:STAT=P%")]
    pub max_regression: Vec<String>,
    /// Output layout.
    #[arg(long = "format", value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Disable colours.
    #[arg(long = "no-color")]
    pub no_color: bool,
}

/// Layouts of `rk6 compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// An aligned table, coloured on a terminal.
    Text,
    /// GitHub-flavoured Markdown, for a CI comment.
    Markdown,
}

/// Flags of `rk6 archive` (k6's: the option flags of `run`, without outputs).
#[derive(Debug, Clone, Args, Default)]
// `--quiet` hides what `run` prints; say that `archive` has nothing to hide.
#[command(mut_arg("quiet", |a| a.help("Accepted for k6's sake; `archive` prints nothing anyway")))]
pub struct ArchiveArgs {
    /// Path of the script (or of an archive, to archive it again).
    pub script: PathBuf,
    /// Archive file to write (`-` writes it to stdout).
    #[arg(short = 'O', long = "archive-out", default_value = "archive.tar")]
    pub archive_out: PathBuf,
    /// Do not put any environment variable (from -e or the system) in the archive.
    #[arg(long = "exclude-env-vars")]
    pub exclude_env_vars: bool,
    /// Also put the system environment in the archive's __ENV.
    #[arg(long = "include-system-env-vars", default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub include_system_env_vars: bool,
    /// JavaScript compatibility mode recorded in the archive: extended or base.
    #[arg(long = "compatibility-mode", value_name = "MODE")]
    pub compatibility_mode: Option<String>,
    /// Read the file as "js" or "archive" instead of telling from its contents.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub test_type: Option<String>,
    /// The flags `archive` shares with `run`.
    #[command(flatten)]
    pub options: OptionFlags,
    // k6's archive takes these run flags too; nothing it archives depends on them.
    /// Accepted for k6's sake (archive starts no API).
    #[arg(short = 'a', long = "address")]
    pub address: Option<String>,
    /// Accepted for k6's sake (a run's flag).
    #[arg(long = "console-output", value_name = "FILE")]
    pub console_output: Option<PathBuf>,
    /// Accepted for k6's sake (a run's flag).
    #[arg(long = "no-thresholds")]
    pub no_thresholds: bool,
    /// Accepted for k6's sake (a run's flag).
    #[arg(long = "no-summary")]
    pub no_summary: bool,
    /// Accepted for k6's sake (a run's flag).
    #[arg(long = "summary-export", value_name = "FILE")]
    pub summary_export: Option<PathBuf>,
}

/// Flags of `rk6 new`.
#[derive(Debug, Clone, Args)]
pub struct NewArgs {
    /// File to write (default script.js).
    pub file: Option<PathBuf>,
    /// Replace the file if it exists.
    #[arg(short = 'f', long = "force")]
    pub force: bool,
}

/// A duration flag as a `std` duration (Go's syntax, not negative).
fn std_duration(v: &str) -> Result<std::time::Duration, String> {
    let d = go_duration(v)?;
    u64::try_from(d.0)
        .map(std::time::Duration::from_nanos)
        .map_err(|_| format!("a duration cannot be negative: {v}"))
}

/// Flags of `rk6 aggregate`.
#[derive(Debug, Clone, Args)]
pub struct AggregateArgs {
    /// The script or archive the runners run: its thresholds and summary options.
    pub script: PathBuf,
    /// How many runners take part.
    #[arg(long = "instances", value_name = "N")]
    pub instances: usize,
    /// Where the runners push (`-o aggregate=http://HOST:PORT`).
    #[arg(short = 'a', long = "address", default_value = "localhost:6566")]
    pub address: String,
    /// Write the end-of-test summary of the whole test as JSON to this file.
    #[arg(long = "summary-export", value_name = "FILE")]
    pub summary_export: Option<PathBuf>,
    /// Print no progress lines (the summary is still printed).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Do not print the end-of-test summary.
    #[arg(long = "no-summary")]
    pub no_summary: bool,
    /// Disable colored output.
    #[arg(long = "no-color")]
    pub no_color: bool,
    /// End when no runner pushed for this long (a vanished runner is reported missing).
    #[arg(long = "timeout", default_value = "30s", value_parser = std_duration, value_name = "DURATION")]
    pub timeout: std::time::Duration,
    /// Run setup() once here and start the runners (started with --paused --no-setup
    /// --no-teardown) once all have joined; teardown() once at the end.
    #[arg(long = "setup-once")]
    pub setup_once: bool,
    /// Give up when no runner joined within this long (with --setup-once: when not all
    /// have joined and waited paused within it).
    #[arg(long = "join-timeout", default_value = "10m", value_parser = std_duration, value_name = "DURATION")]
    pub join_timeout: std::time::Duration,
    /// Set an __ENV variable (KEY=VALUE) for reading the script's options; repeatable.
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Include the system environment in __ENV.
    #[arg(long = "include-system-env-vars", default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub include_system_env_vars: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(args).unwrap().command
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_and_archive_share_their_option_flags() {
        let shared = "--vus 3 -d 5s -e A=1 --tag t=x --no-setup --batch 7";
        let line = |cmd: &'static str| {
            let mut line = vec!["rk6", cmd];
            line.extend(shared.split(' '));
            line.push("s.js");
            line
        };
        let (Command::Run(run), Command::Archive(archive)) =
            (parse(&line("run")), parse(&line("archive")))
        else {
            panic!("not run and archive");
        };
        assert_eq!(run.options, archive.options);
        assert_eq!(run.options.vus, Some(3));
        assert_eq!(run.options.duration, Some(GoDuration(5_000_000_000)));
        assert_eq!(run.options.env, ["A=1"]);
        assert_eq!(run.options.tag, ["t=x"]);
        assert!(run.options.no_setup);
        assert_eq!(run.options.batch, Some(7));
    }

    #[test]
    fn include_system_env_vars_is_on_for_run_and_off_for_archive() {
        let Command::Run(run) = parse(&["rk6", "run", "s.js"]) else {
            panic!("not run");
        };
        let Command::Archive(archive) = parse(&["rk6", "archive", "s.js"]) else {
            panic!("not archive");
        };
        assert!(run.include_system_env_vars);
        assert!(!archive.include_system_env_vars);
        let Command::Run(run) =
            parse(&["rk6", "run", "--include-system-env-vars", "false", "s.js"])
        else {
            panic!("not run");
        };
        // archive's takes no separate value, `=BOOL` or none (true).
        let Command::Archive(archive) =
            parse(&["rk6", "archive", "--include-system-env-vars", "s.js"])
        else {
            panic!("not archive");
        };
        assert!(!run.include_system_env_vars);
        assert!(archive.include_system_env_vars);
        assert_eq!(archive.script, PathBuf::from("s.js"));
    }

    /// k6 v1.5.0 release notes, #5338: `--new-machine-readable-summary` is a pflag boolean
    /// (alone it is true, `=VALUE` is Go's `strconv.ParseBool`).
    #[test]
    fn new_machine_readable_summary_is_a_go_boolean_flag() {
        let flag = |line: &[&str]| match parse(line) {
            Command::Run(run) => (run.new_machine_readable_summary, run.script),
            _ => panic!("not run"),
        };
        assert_eq!(flag(&["rk6", "run", "s.js"]).0, None);
        assert_eq!(
            flag(&["rk6", "run", "--new-machine-readable-summary", "s.js"]),
            (Some(true), PathBuf::from("s.js"))
        );
        for (value, on) in [("false", false), ("0", false), ("T", true), ("True", true)] {
            let arg = format!("--new-machine-readable-summary={value}");
            assert_eq!(flag(&["rk6", "run", &arg, "s.js"]).0, Some(on), "{value}");
        }
        let e = Cli::try_parse_from(["rk6", "run", "--new-machine-readable-summary=yes", "s.js"])
            .unwrap_err();
        assert_eq!(
            crate::flag_error::k6_text(&e),
            r#"invalid argument "yes" for "--new-machine-readable-summary" flag: strconv.ParseBool: parsing "yes": invalid syntax"#
        );
    }
}
