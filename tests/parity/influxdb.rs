//! `-o influxdb` side by side: k6 1.1.0 and rk6 run the same script into two databases of
//! one real InfluxDB 1.x; the measurements, points per measurement, series (tag keys and
//! values) and field keys and types must be the same.

use std::process::Command;

use crate::influxdb::{influxd_bin, script, Influx};
use crate::support::TestServer;
use crate::{rk6_env, Dir};

#[test]
fn influxdb_writes_match_k6() {
    let Some(k6) = super::k6() else {
        return;
    };
    let Some(bin) = influxd_bin() else {
        return;
    };
    let dir = Dir::new("parity-influxdb");
    let influx = Influx::start(&bin, &dir);
    let srv = TestServer::start();
    let path = dir.write("script.js", &script(&srv.url("")));

    let out = Command::new(&k6)
        .args(["run", "-q", "--address", "127.0.0.1:0", "-o"])
        .arg(format!("influxdb={}", influx.url("k6db")))
        .arg(&path)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = rk6_env(
        &[
            "run",
            "-q",
            "--address",
            "127.0.0.1:0",
            "-o",
            &format!("influxdb={}", influx.url("rk6db")),
            path.to_str().unwrap(),
        ],
        &dir.0,
        &[],
    );
    run.assert_code(0);

    // vus and vus_max are sampled once a second, so their counts depend on timing.
    let mut k6_counts = influx.counts("k6db");
    let mut rk6_counts = influx.counts("rk6db");
    for m in ["vus", "vus_max"] {
        assert!(
            k6_counts.remove(m).is_some() && rk6_counts.remove(m).is_some(),
            "{m}"
        );
    }
    assert_eq!(rk6_counts, k6_counts);
    assert_eq!(influx.series("rk6db"), influx.series("k6db"));
    assert_eq!(influx.fields("rk6db"), influx.fields("k6db"));
}
