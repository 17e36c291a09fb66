//! Logging `httpDebug` dumps the way k6 does: one info line per request and per response,
//! with the VU's position and a request id shared by a hop's two lines.

use rk6_http::Dump;

use crate::host::Host;
use crate::log::Level;

/// Logs `dumps` (from one `Client::send`) to stderr.
pub(super) fn log(host: &Host, dumps: &[Dump]) {
    if dumps.is_empty() {
        return;
    }
    let group = host
        .tags
        .borrow()
        .get("group")
        .unwrap_or_default()
        .to_owned();
    let scenario = host
        .iteration
        .borrow()
        .as_ref()
        .map_or_else(String::new, |i| i.scenario.name.clone());
    let iter = host
        .iteration
        .borrow()
        .as_ref()
        .map_or(0, |i| i.vu_iteration)
        .to_string();
    let vu = host.vu_id.to_string();
    let mut id = (usize::MAX, String::new());
    for dump in dumps {
        if id.0 != dump.hop {
            id = (
                dump.hop,
                crate::modules::crypto::random_uuid().unwrap_or_default(),
            );
        }
        host.shared.logger.log_bytes(
            Level::Info,
            &dump.text,
            &[
                ("group", &group),
                ("iter", &iter),
                ("request_id", &id.1),
                ("scenario", &scenario),
                ("source", "http-debug"),
                ("vu", &vu),
            ],
        );
    }
}
