//! `rk6 run`'s flag errors in k6's words (cobra/pflag's), so scripts and CI logs that
//! match on them see what k6 prints.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

use crate::args::Cli;

/// The message k6 gives for the same bad flag, or clap's own first line where k6 has none.
pub fn k6_text(e: &clap::Error) -> String {
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    match e.kind() {
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let value = context(ContextKind::InvalidValue).unwrap_or_default();
            let arg = context(ContextKind::InvalidArg).unwrap_or_default();
            let why = std::error::Error::source(e).map_or_else(
                || format!("invalid value {}", quote(&value)),
                |s| s.to_string(),
            );
            format!(
                "invalid argument {} for {} flag: {why}",
                quote(&value),
                quote(&flag_names(&arg))
            )
        }
        ErrorKind::UnknownArgument => {
            let arg = context(ContextKind::InvalidArg).unwrap_or_default();
            match arg.strip_prefix('-').filter(|a| !a.starts_with('-')) {
                Some(short) => format!(
                    "unknown shorthand flag: '{}' in {arg}",
                    short.chars().next().unwrap_or(' ')
                ),
                None => format!("unknown flag: {}", arg.split('=').next().unwrap_or(&arg)),
            }
        }
        _ => {
            let rendered = e.to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    }
}

/// `-u, --vus` for clap's `--vus <VUS>` (or `-u <VUS>`, or `--flag[=<BOOL>]` for a flag
/// whose value is optional), as pflag names a flag.
fn flag_names(arg: &str) -> String {
    let given = arg.split_whitespace().next().unwrap_or(arg);
    let given = given.split("[=").next().unwrap_or(given);
    let cli = Cli::command();
    let run = cli.find_subcommand("run");
    let found = run.into_iter().flat_map(|c| c.get_arguments()).find(|a| {
        a.get_long().is_some_and(|l| given == format!("--{l}"))
            || a.get_short().is_some_and(|s| given == format!("-{s}"))
    });
    match found.map(|a| (a.get_short(), a.get_long())) {
        Some((Some(s), Some(l))) => format!("-{s}, --{l}"),
        Some((None, Some(l))) => format!("--{l}"),
        _ => given.to_owned(),
    }
}

/// Go's `%q` for the texts flags carry.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn text(args: &[&str]) -> String {
        let e = Cli::try_parse_from(args).unwrap_err();
        k6_text(&e)
    }

    #[test]
    fn bad_values_read_as_k6_reports_them() {
        assert_eq!(
            text(&["rk6", "run", "--vus", "x", "s.js"]),
            r#"invalid argument "x" for "-u, --vus" flag: strconv.ParseInt: parsing "x": invalid syntax"#
        );
        assert_eq!(
            text(&["rk6", "run", "-d", "1d", "s.js"]),
            r#"invalid argument "1d" for "-d, --duration" flag: time: unknown unit "d" in duration "1d""#
        );
        assert_eq!(
            text(&["rk6", "run", "--duration=5", "s.js"]),
            r#"invalid argument "5" for "-d, --duration" flag: time: missing unit in duration "5""#
        );
        assert_eq!(
            text(&["rk6", "run", "--rps", "99999999999999999999", "s.js"]),
            r#"invalid argument "99999999999999999999" for "--rps" flag: strconv.ParseInt: parsing "99999999999999999999": value out of range"#
        );
        assert_eq!(
            text(&["rk6", "run", "--bogus", "s.js"]),
            "unknown flag: --bogus"
        );
    }
}
