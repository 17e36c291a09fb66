use serde_json::json;

use crate::test_js::run;

/// A directory holding `files`, for scripts to open by absolute path.
fn files(name: &str, files: &[(&str, &[u8])]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rk6-fs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a-dir")).unwrap();
    for (n, body) in files {
        std::fs::write(dir.join(n), body).unwrap();
    }
    dir
}

#[test]
fn reads_seeks_and_stats_like_k6() {
    let dir = files("read", &[("data.txt", b"hello world\nline2\n")]);
    let out = run(&format!(
        r#"
        import {{ open, SeekMode }} from 'k6/experimental/fs';
        const r = {{}};
        const file = await open('{dir}/data.txt');
        r.keys = Object.keys(file);
        r.path = file.path;
        r.stat = await file.stat();
        const buf = new Uint8Array(5);
        r.read1 = await file.read(buf);
        r.buf = Array.from(buf);
        r.cur = await file.seek(2, SeekMode.Current);
        r.read2 = await file.read(new Uint8Array(100));
        r.eof = await file.read(new Uint8Array(100));
        r.end0 = await file.seek(0, SeekMode.End);
        r.end3 = await file.seek(-3, SeekMode.End);
        r.start = await file.seek(0, SeekMode.Start);
        r.zero = await file.read(new Uint8Array(0));
        const other = await open('{dir}/data.txt');
        r.own = [await other.read(new Uint8Array(3)), await file.seek(0, SeekMode.Current)];
        r.mode = SeekMode;
        export const options = r;
        "#,
        dir = dir.display()
    ))
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out["keys"], json!(["path", "read", "seek", "stat"]));
    assert_eq!(out["path"], json!(format!("{}/data.txt", dir.display())));
    assert_eq!(out["stat"], json!({"name": "data.txt", "size": 18}));
    assert_eq!(out["read1"], json!(5));
    assert_eq!(out["buf"], json!([104, 101, 108, 108, 111]));
    assert_eq!(out["cur"], json!(7));
    assert_eq!(out["read2"], json!(11));
    assert_eq!(out["eof"], json!(null));
    assert_eq!(out["end0"], json!(17), "k6 counts from the last byte");
    assert_eq!(out["end3"], json!(14));
    assert_eq!(out["start"], json!(0));
    assert_eq!(out["zero"], json!(0));
    assert_eq!(out["own"], json!([3, 0]), "each File has its own offset");
    assert_eq!(out["mode"], json!({"Start": 0, "Current": 1, "End": 2}));
}

#[test]
fn rejects_with_k6_errors() {
    let dir = files("errors", &[("data.txt", b"abc")]);
    let out = run(&format!(
        r#"
        import {{ open, SeekMode }} from 'k6/experimental/fs';
        const file = await open('{dir}/data.txt');
        const r = [];
        for (const f of [
            () => file.seek(-1, SeekMode.Start), () => file.seek(1, SeekMode.End),
            () => file.seek(-100, SeekMode.Current), () => file.seek(100, SeekMode.Start),
            () => file.seek(0, 9), () => file.seek('1', SeekMode.Start),
            () => file.seek(1.5, 0), () => file.seek(null, 0), () => file.seek(1),
            () => file.read(null), () => file.read([1]), () => file.read(new ArrayBuffer(2)),
            () => file.read(new Int8Array(2)),
            () => open('{dir}/nope.txt'), () => open('{dir}/a-dir'), () => open(''), () => open(null),
        ]) {{
            try {{ await f(); r.push('resolved'); }}
            catch (e) {{ r.push([String(e), e.name, e instanceof Error, Object.keys(e)]); }}
        }}
        export const options = {{ r }};
        "#,
        dir = dir.display()
    ))
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.display();
    let expected = [
        "TypeError: offset cannot be negative when using SeekModeStart".to_string(),
        "TypeError: offset cannot be positive when using SeekModeEnd".into(),
        "TypeError: seeking before start of file".into(),
        "TypeError: seeking beyond end of file".into(),
        "TypeError: seek() failed; reason: the whence argument must be a SeekMode".into(),
        "TypeError: seek() failed; reason: the offset argument must be a number".into(),
        "TypeError: seek() failed; reason: the offset argument must be a number".into(),
        "TypeError: seek() failed; reason: the offset argument cannot be null or undefined".into(),
        "TypeError: seek() failed; reason: the whence argument cannot be null or undefined".into(),
        "TypeError: read() failed; reason: into argument cannot be null or undefined".into(),
        "TypeError: read() failed; reason: into argument must be a Uint8Array".into(),
        "TypeError: read() failed; reason: into argument must be a Uint8Array".into(),
        "TypeError: read() failed; reason: into argument must be a Uint8Array".into(),
        format!("NotFoundError: no such file or directory \"{d}/nope.txt\""),
        format!(
            "InvalidResourceError: cannot open \"{d}/a-dir\": opening a directory is not supported"
        ),
        "TypeError: open() failed; reason: path cannot be empty".into(),
        "TypeError: open() failed; reason: path cannot be null or undefined".into(),
    ];
    let r = out["r"].as_array().unwrap();
    assert_eq!(r.len(), expected.len());
    for (got, want) in r.iter().zip(&expected) {
        let name = want.split(':').next().unwrap();
        assert_eq!(
            got,
            &json!([want, name, false, ["name", "message", "error"]])
        );
    }
}
