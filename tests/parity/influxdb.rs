//! `-o influxdb` side by side: k6 1.1.0 and rk6 run the same script into two databases of
//! one real InfluxDB 1.x; the measurements, points per measurement, series (tag keys and
//! values) and field keys and types must be the same; and the same settings must be
//! accepted or refused (same exit code).

use std::process::Command;

use crate::influxdb::{influxd_bin, script, Influx};
use crate::support::TestServer;
use crate::{rk6_env, Dir};

#[test]
fn influxdb_writes_match_k6() {
    let _serial = crate::influxdb::serial();
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
    // The same measurements; their point counts are not compared here, as InfluxDB 1.6.7
    // can hold a point fewer than either tool wrote when the suite loads the machine (see
    // `influxdb::every_sample_is_written_as_one_point` for rk6's exact count on the wire).
    assert_eq!(
        rk6_counts.keys().collect::<Vec<_>>(),
        k6_counts.keys().collect::<Vec<_>>()
    );
    assert_eq!(influx.series("rk6db"), influx.series("k6db"));
    assert_eq!(influx.fields("rk6db"), influx.fields("k6db"));
}

#[test]
fn influxdb_settings_accepted_and_refused_as_k6() {
    let Some(k6) = super::k6() else {
        return;
    };
    let dir = Dir::new("parity-influxdb-settings");
    let path = dir.write(
        "script.js",
        "export const options = { iterations: 1 };\nexport default function () {}\n",
    );
    // Nothing listens there: accepted settings run the test (writes fail, exit 0).
    let closed = format!("http://{}/db", crate::support::closed_addr());
    let cases: [(&str, &[(&str, &str)]); 14] = [
        (&closed, &[("K6_INFLUXDB_PUSH_INTERVAL", "abc")]),
        (&closed, &[("K6_INFLUXDB_PUSH_INTERVAL", "0")]),
        (&closed, &[("K6_INFLUXDB_PUSH_INTERVAL", "500")]),
        (&closed, &[("K6_INFLUXDB_CONCURRENT_WRITES", "-2")]),
        (&closed, &[("K6_INFLUXDB_CONCURRENT_WRITES", "")]),
        (&closed, &[("K6_INFLUXDB_TAGS_AS_FIELDS", "vu,vu:int")]),
        (&closed, &[("K6_INFLUXDB_TAGS_AS_FIELDS", "url:float,name")]),
        (&closed, &[("K6_INFLUXDB_INSECURE", "True")]),
        (&closed, &[("K6_INFLUXDB_PAYLOAD_SIZE", "x")]),
        (&closed, &[("K6_INFLUXDB_PRECISION", "xx")]),
        ("ftp://127.0.0.1:1/db", &[]),
        ("http://127.0.0.1:1/db?payload_size=1&foo=1", &[]),
        ("mydb", &[("K6_INFLUXDB_ADDR", "ftp://x")]),
        ("udp://127.0.0.1:1", &[]),
    ];
    for (arg, env) in cases {
        let out = format!("influxdb={arg}");
        let k6_run = Command::new(&k6)
            .args(["run", "-q", "--address", "127.0.0.1:0", "-o", &out])
            .arg(&path)
            .env("K6_NO_USAGE_REPORT", "true")
            .envs(env.iter().copied())
            .current_dir(&dir.0)
            .output()
            .expect("run k6");
        let rk6_run = rk6_env(
            &[
                "run",
                "-q",
                "--address",
                "127.0.0.1:0",
                "-o",
                &out,
                path.to_str().unwrap(),
            ],
            &dir.0,
            env,
        );
        assert_eq!(
            rk6_run.code,
            k6_run.status.code().unwrap_or(-1),
            "{arg} {env:?}\nk6: {}\nrk6: {}",
            String::from_utf8_lossy(&k6_run.stderr),
            rk6_run.stderr
        );
    }
}
