//! Whether the machine can hold the VUs a test asks for, decided before any is created.
//!
//! k6 tries: `vus: 1e12` makes it allocate until the Go runtime dies with "out of memory"
//! (exit 2). rk6 estimates what the VUs need from their measured cost
//! (docs/design/004-memory-per-vu.md) and refuses, with the figures, a test that cannot
//! fit: in memory (available RAM and swap, the cgroup's limit), in address space
//! (`ulimit -v`), or in memory mappings (`vm.max_map_count`: the VU stacks' share of their
//! pooled reservations, or two per VU where the kernel lacks `MADV_GUARD_INSTALL`; the
//! worker threads, one a core, add a handful whatever the VU count).

use std::fs;

/// Resident memory one VU takes at least: its realm on the worker's shared built-ins, its
/// module records and its stack at rest. bench/ (2026-12-07, GC domains) measures 27 KiB
/// for a VU that only sleeps and ~86 KiB with a request; a lower bound refuses only what
/// cannot run (it was 280 KiB before the built-ins were shared, which refused 100,000 VUs
/// on 24 GiB).
const RSS_PER_VU: u64 = 24 << 10;
/// Address space one VU reserves: its 8 MiB coroutine stack (the worker threads are one a
/// core, whatever the VU count).
const VIRTUAL_PER_VU: u64 = (8 << 20) + RSS_PER_VU;

/// What bounds how many VUs fit, as read from the system; `None` where unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Limits {
    /// RAM the kernel says is available without swapping, plus free swap.
    pub(crate) available: Option<u64>,
    /// The cgroup's memory limit minus what it already uses.
    pub(crate) cgroup_left: Option<u64>,
    /// The soft address-space limit (`ulimit -v`) minus what the process maps already.
    pub(crate) address_space_left: Option<u64>,
    /// `vm.max_map_count` minus the mappings the process has already.
    pub(crate) maps_left: Option<u64>,
    /// Whether a VU stack's guard needs mappings of its own (no `MADV_GUARD_INSTALL`).
    pub(crate) guard_splits: bool,
}

impl Limits {
    /// Reads the limits of this process from `/proc` and `/sys` (Linux); elsewhere all
    /// are unknown and nothing is refused.
    pub(crate) fn of_this_process() -> Limits {
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let kib = |key: &str| field_kib(&meminfo, key);
        let available = kib("MemAvailable:").map(|a| a + kib("SwapFree:").unwrap_or(0));
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let mapped = field_kib(&status, "VmSize:").unwrap_or(0);
        let address_space_left = rlimit::getrlimit(rlimit::Resource::AS)
            .ok()
            .map(|(soft, _)| soft)
            .filter(|&soft| soft != rlimit::INFINITY)
            .map(|soft| soft.saturating_sub(mapped));
        let maps_left = fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .map(|max| {
                let used = fs::read_to_string("/proc/self/maps")
                    .map(|m| m.lines().count() as u64)
                    .unwrap_or(0);
                max.saturating_sub(used)
            });
        Limits {
            available,
            cgroup_left: cgroup_left(),
            address_space_left,
            maps_left,
            guard_splits: rk6_js::stack_guards_split(),
        }
    }

    /// Mappings the VU stacks of `vus` VUs take.
    fn stack_mappings(&self, vus: u64) -> u64 {
        if self.guard_splits {
            vus.saturating_mul(2)
        } else {
            vus.div_ceil(rk6_js::STACKS_PER_MAPPING)
        }
    }

    fn maps_per_vu_text(&self) -> &'static str {
        if self.guard_splits {
            "2 per VU, as this kernel lacks MADV_GUARD_INSTALL"
        } else {
            "pooled VU stacks"
        }
    }
}

/// Refuses `vus` VUs when the smallest estimate of what they need exceeds a limit; the
/// message names the limit, the estimate and what to change.
pub(crate) fn check(vus: u64, limits: &Limits) -> Result<(), String> {
    let need_rss = vus.saturating_mul(RSS_PER_VU);
    let need_virtual = vus.saturating_mul(VIRTUAL_PER_VU);
    let refuse = |what: &str, need: String, have: String| {
        Err(format!(
            "the test needs {vus} VUs, which takes at least {need} of {what}, but only {have} is left; \
             lower vus/maxVUs/preAllocatedVUs/stage targets or run on a larger machine \
             (rk6 refuses before starting, where k6 tries and runs out of memory)"
        ))
    };
    if let Some(have) = limits.available.filter(|&a| need_rss > a) {
        return refuse(
            &format!("memory (≈{} per VU)", bytes(RSS_PER_VU)),
            bytes(need_rss),
            format!("{} (available RAM and free swap)", bytes(have)),
        );
    }
    if let Some(have) = limits.cgroup_left.filter(|&a| need_rss > a) {
        return refuse(
            &format!("memory (≈{} per VU)", bytes(RSS_PER_VU)),
            bytes(need_rss),
            format!("{} under the cgroup's memory.max", bytes(have)),
        );
    }
    if let Some(have) = limits.address_space_left.filter(|&a| need_virtual > a) {
        return refuse(
            &format!(
                "address space (≈{} per VU, mostly its 8 MiB stack)",
                bytes(VIRTUAL_PER_VU)
            ),
            bytes(need_virtual),
            format!("{} under the address-space limit (ulimit -v)", bytes(have)),
        );
    }
    let need_maps = limits.stack_mappings(vus);
    if let Some(have) = limits.maps_left.filter(|&a| need_maps > a) {
        return refuse(
            &format!("memory mappings ({})", limits.maps_per_vu_text()),
            need_maps.to_string(),
            format!("{have} under vm.max_map_count"),
        );
    }
    Ok(())
}

/// `key   123 kB` of a `/proc` file, in bytes.
fn field_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// The cgroup v2 memory limit left to this process's cgroup, when it has one.
fn cgroup_left() -> Option<u64> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = format!("/sys/fs/cgroup{}", path.trim());
    let max: u64 = fs::read_to_string(format!("{dir}/memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let current: u64 = fs::read_to_string(format!("{dir}/memory.current"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// Bytes in binary units, one decimal (`3.5 GiB`).
fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn fits_or_names_the_limit() {
        let roomy = Limits {
            available: Some(16 * GIB),
            cgroup_left: None,
            address_space_left: None,
            maps_left: Some(65_000),
            guard_splits: true,
        };
        assert!(check(1_000, &roomy).is_ok());
        assert!(check(30_000, &roomy).is_ok());
        let e = check(1_000_000_000_000, &roomy).unwrap_err();
        assert!(e.contains("1000000000000 VUs"), "{e}");
        assert!(e.contains("21.8 PiB of memory (≈24.0 KiB per VU)"), "{e}");
        assert!(e.contains("16.0 GiB (available RAM and free swap)"), "{e}");
        let e = check(40_000, &roomy).unwrap_err();
        // 2 a stack.
        assert!(e.contains("80000 of memory mappings (2 per VU"), "{e}");
        assert!(e.contains("65000 under vm.max_map_count"), "{e}");
        // Pooled stacks: 100,000 VUs take 3125 reservations.
        let pooled = Limits {
            maps_left: Some(65_000),
            ..Limits::default()
        };
        assert!(check(100_000, &pooled).is_ok());
        let e = check(
            100_000,
            &Limits {
                maps_left: Some(3_000),
                ..pooled
            },
        )
        .unwrap_err();
        assert!(
            e.contains("3125 of memory mappings (pooled VU stacks"),
            "{e}"
        );
        let small_as = Limits {
            address_space_left: Some(GIB),
            ..Limits::default()
        };
        assert!(check(100, &small_as).is_ok());
        let e = check(200, &small_as).unwrap_err();
        assert!(e.contains("ulimit -v"), "{e}");
        assert!(e.contains("(≈8.0 MiB per VU"), "{e}");
        let cgroup = Limits {
            cgroup_left: Some(100 << 20),
            ..Limits::default()
        };
        assert!(check(2_000, &cgroup).is_ok());
        assert!(check(5_000, &cgroup).unwrap_err().contains("memory.max"));
        assert!(
            check(u64::MAX, &Limits::default()).is_ok(),
            "unknown limits refuse nothing"
        );
    }

    #[test]
    fn reads_proc_fields_and_formats_sizes() {
        let info = "MemTotal:       24000000 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(field_kib(info, "MemAvailable:"), Some(1_024_000));
        assert_eq!(field_kib(info, "SwapFree:"), None);
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * GIB / 2), "1.5 GiB");
        let here = Limits::of_this_process();
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(here.available.is_some_and(|a| a > 0), "{here:?}");
        }
    }
}
