//! The release binary runs where a load generator has to run: `tools/build-portable` makes a
//! fully static one (musl), which needs no libc of the host. These tests read its ELF
//! headers (no interpreter, so no dynamic loader and no glibc; a dynamically linked build
//! would have to stay at glibc 2.17's symbols) and run it in an empty root.
//!
//! CI builds it first (`.ci/run`); elsewhere the test is skipped until it is built.

use std::path::PathBuf;
use std::process::Command;

/// The oldest glibc a dynamically linked rk6 may need (CentOS 7, Ubuntu 14.04).
const GLIBC_BASELINE: (u32, u32) = (2, 17);

fn portable_binary() -> Option<PathBuf> {
    let path = std::env::var_os("RK6_PORTABLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/portable/rk6"));
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: run tools/build-portable first",
        path.display()
    );
    eprintln!(
        "skipped: {} not built (tools/build-portable)",
        path.display()
    );
    None
}

/// The program header types of a 64-bit little-endian ELF file; `None` if it is not one.
fn program_header_types(elf: &[u8]) -> Option<Vec<u32>> {
    if elf.get(..4)? != b"\x7fELF" || *elf.get(4)? != 2 || *elf.get(5)? != 1 {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let phoff = u64::from_le_bytes(elf.get(0x20..0x28)?.try_into().ok()?) as usize;
    let size = usize::from(u16_at(0x36)?);
    let count = usize::from(u16_at(0x38)?);
    (0..count)
        .map(|i| {
            let at = phoff + i * size;
            Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?))
        })
        .collect()
}

/// The highest `GLIBC_x.y` version named in the file (its symbol version needs).
fn highest_glibc(elf: &[u8]) -> Option<(u32, u32)> {
    let mut best = None;
    for (i, _) in elf.windows(6).enumerate().filter(|(_, w)| w == b"GLIBC_") {
        let rest = &elf[i + 6..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'.'))
            .unwrap_or(rest.len());
        let text = std::str::from_utf8(&rest[..end]).unwrap_or("");
        let mut parts = text.split('.').map(|p| p.parse::<u32>());
        if let (Some(Ok(major)), Some(Ok(minor))) = (parts.next(), parts.next()) {
            best = best.max(Some((major, minor)));
        }
    }
    best
}

const PT_INTERP: u32 = 3;

#[test]
fn the_version_scan_finds_the_highest_glibc() {
    let needs = b"\0libc.so.6\0GLIBC_2.2.5\0GLIBC_2.17\0GLIBC_2.3.4\0GLIBC_2.35\0";
    assert_eq!(
        highest_glibc(needs),
        Some((2, 35)),
        "a build on a new host fails"
    );
    assert_eq!(
        highest_glibc(b"\0GLIBC_2.14\0GLIBC_2.17\0"),
        Some(GLIBC_BASELINE)
    );
    assert_eq!(highest_glibc(b"no libc here"), None);
    assert_eq!(program_header_types(b"not an ELF file"), None);
}

#[test]
fn the_release_binary_needs_no_libc_from_the_host() {
    let Some(path) = portable_binary() else {
        return;
    };
    let elf = std::fs::read(&path).unwrap();
    let headers = program_header_types(&elf).expect("a 64-bit ELF executable");
    if headers.contains(&PT_INTERP) {
        // Dynamically linked: allowed only against glibc 2.17's symbols.
        let highest = highest_glibc(&elf).expect("a dynamic rk6 links glibc");
        assert!(
            highest <= GLIBC_BASELINE,
            "{} needs GLIBC_{}.{}, above the {}.{} baseline",
            path.display(),
            highest.0,
            highest.1,
            GLIBC_BASELINE.0,
            GLIBC_BASELINE.1
        );
    } else {
        assert_eq!(
            highest_glibc(&elf),
            None,
            "static, yet naming glibc versions"
        );
    }
    let out = Command::new(&path).arg("version").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("rk6 v"));
}

/// In a root that holds nothing but the binary and a script (no libc, no /etc, no
/// certificates), it still runs a test: what `FROM scratch` or an old host gives it.
#[test]
fn the_release_binary_runs_a_test_in_an_empty_root() {
    let Some(path) = portable_binary() else {
        return;
    };
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: chroot needs root");
        return;
    }
    let root = std::env::temp_dir().join(format!("rk6-empty-root-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    std::fs::copy(&path, root.join("rk6")).unwrap();
    std::fs::write(
        root.join("t.js"),
        "import { check } from 'k6';\nexport const options = { iterations: 3, thresholds: { checks: ['rate==1'] } };\nexport default function () { check(1, { one: (v) => v === 1 }); }\n",
    )
    .unwrap();
    assert!(!root.join("lib").exists() && !root.join("etc").exists());
    // The child's environment is cleared, so its PATH cannot find chroot.
    let chroot = ["/usr/sbin/chroot", "/usr/bin/chroot", "/sbin/chroot"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("chroot (coreutils)");
    let out = Command::new(chroot)
        .arg(&root)
        .args(["/rk6", "run", "-q", "/t.js"])
        .env_clear()
        .env("HOME", "/tmp")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&root);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("checks_succeeded...................: 100.00% 3 out of 3"),
        "{stdout}"
    );
}
