//! `rk6 archive`: the test as k6 1.1.0 archives it — the options consolidated from the script,
//! the config file, `K6_*` and the flags, the `-e` environment, and every file the init
//! context read — in k6's tar layout (`rk6_js::archive`), so k6 and rk6 run it alike.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rk6_js::archive::{archived_path, file_url, goos, K6_VERSION};
use rk6_js::log::{Level, Logger};
use rk6_js::{read_init, Archive, ArchiveMetadata, ScriptError, ScriptErrorKind};
use rk6_metrics::Registry;
use rk6_options::Options;
use rk6_scheduler::scenarios_from_options;
use serde_json::Value;

use crate::args::ArchiveArgs;
use crate::exit::ExitCode;
use crate::test_file::TestFile;

/// Runs `rk6 archive`; prints nothing on success, as k6.
pub fn run(args: ArchiveArgs) -> ExitCode {
    let logger = Logger::new(args.options.verbose);
    match archive(&args, logger) {
        Ok(()) => ExitCode::Success,
        Err((code, msg)) => {
            logger.log(Level::Error, &msg, &[]);
            code
        }
    }
}

fn script_failure(e: ScriptError) -> (ExitCode, String) {
    match e.kind {
        ScriptErrorKind::Load => (ExitCode::Failure, e.message),
        _ => (ExitCode::ScriptException, e.message),
    }
}

fn archive(args: &ArchiveArgs, logger: Logger) -> Result<(), (ExitCode, String)> {
    let test = TestFile::open(&args.script, args.test_type.as_deref()).map_err(script_failure)?;
    let env = test
        .env(args.include_system_env_vars, &args.options.env)
        .map_err(|e| (ExitCode::InvalidConfig, e))?;
    let program = test.program(env.clone()).map_err(script_failure)?;
    let init =
        read_init(program.clone(), Arc::new(Registry::new()), logger).map_err(script_failure)?;
    let loaded = crate::options::load(test.script_options(&init.options), &args.options, |k| {
        std::env::var(k).ok()
    })
    .map_err(|e| (e.code, e.message))?;
    crate::plan::warn_unknown_keys(&logger, &loaded.unknown);
    for w in &loaded.warnings {
        logger.log(Level::Warning, w, &[]);
    }
    // k6 checks the scenarios, and that their functions exist, before it writes the archive.
    let scenarios =
        scenarios_from_options(&loaded.options).map_err(|e| (ExitCode::InvalidConfig, e.0))?;
    crate::run::check_exec(&scenarios, &init.functions)
        .map_err(|e| (ExitCode::InvalidConfig, e))?;
    let compatibility_mode = match args.compatibility_mode.as_deref() {
        None => test
            .archive()
            .map(|a| a.metadata.compatibility_mode.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "extended".into()),
        Some(m @ ("extended" | "base")) => m.to_string(),
        Some(other) => {
            return Err((
                ExitCode::Failure,
                format!("invalid compatibility mode \"{other}\". Use: \"extended\", \"base\""),
            ))
        }
    };
    let main = archived_path(&program.main);
    let pwd = main.parent().unwrap_or(Path::new("/")).to_path_buf();
    let read = program.files_read();
    let local = read
        .local
        .into_iter()
        .map(|(p, d)| (archived_path(&p), d))
        .collect();
    let data = program
        .read(&program.main)
        .map_err(|e| (ExitCode::ScriptException, e.message))?;
    let archive = Archive {
        metadata: ArchiveMetadata {
            kind: "js".into(),
            options: archive_options(&loaded.options),
            filename: file_url(&main),
            pwd: file_url(&pwd),
            env: (!args.exclude_env_vars).then_some(env),
            compatibility_mode,
            k6_version: K6_VERSION.into(),
            goos: goos().into(),
        },
        data,
        local,
        remote: read.remote,
    };
    write(&archive, &args.archive_out).map_err(|e| {
        (
            ExitCode::Failure,
            format!("{}: {e}", args.archive_out.display()),
        )
    })
}

/// The options as k6 records them: every key, scenarios as given (not derived from the
/// shortcuts), and the summary trend stats and system tags filled in when unset.
fn archive_options(options: &Options) -> Value {
    Value::Object(crate::options_json::with_defaults(
        crate::inspect::k6_shape(options),
    ))
}

/// Writes to `path`, or to stdout for `-`.
fn write(archive: &Archive, path: &Path) -> std::io::Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        archive.write(&mut out)?;
        return out.flush();
    }
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    archive.write(&mut file)?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_options_as_k6() {
        let options = Options::from_json(&json!({"vus": 3, "duration": "5s"}))
            .unwrap()
            .options;
        let v = archive_options(&options);
        assert_eq!(v["vus"], json!(3));
        assert_eq!(v["duration"], json!("5s"));
        assert_eq!(v["iterations"], Value::Null);
        assert_eq!(v["scenarios"], Value::Null);
        assert_eq!(v["summaryTrendStats"][5], json!("p(95)"));
        assert_eq!(v["systemTags"][0], json!("check"));
        assert_eq!(
            v.as_object().unwrap().keys().len(),
            rk6_options::INSPECT_KEYS.len()
        );
    }
}
