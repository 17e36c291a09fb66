//! `k6/experimental/streams` side by side with k6 1.1.0, which has `ReadableStream`,
//! its default reader and `CountQueuingStrategy` (rk6's `WritableStream`, from k6 2.2, is
//! tested in tests/later_modules): reads, pulls, cancels, errors and their messages.

use std::process::Command;

use super::{console_lines, k6};
use crate::{rk6, Dir};

const SCRIPT: &str = r#"
import { ReadableStream, ReadableStreamDefaultReader, CountQueuingStrategy } from 'k6/experimental/streams';
import { setTimeout } from 'k6/timers';
const say = (...a) => console.log(a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
// k6 builds read results with their keys in either order, depending on the path taken.
const rr = (x) => [x.done, x.value, Object.keys(x).sort()];
export default async function () {
  for (const f of [
    () => new ReadableStream({ type: 'bytes' }),
    () => new ReadableStream({ type: 'default' }),
    () => new ReadableStream({}, { highWaterMark: -1 }),
    () => { const l = new ReadableStream(); l.getReader(); l.getReader(); },
    () => new CountQueuingStrategy({}),
    () => new ReadableStream(5),
    () => new ReadableStream({ pull: 5 }),
    () => new ReadableStream().getReader({ mode: 'byob' }),
  ]) {
    try { f(); say('none'); } catch (x) { say(x.name, x.message, String(x)); }
  }
  let current = 0;
  const numbers = new ReadableStream({
    start(c) {
      const fn = () => { if (current < 4) { c.enqueue(++current); setTimeout(fn, 5); return; } c.close(); };
      setTimeout(fn, 5);
    },
  });
  const r = numbers.getReader();
  for (;;) { const x = await r.read(); say('read', rr(x)); if (x.done) break; }
  say('after close', rr(await r.read()), numbers.locked);
  r.releaseLock();
  try { await r.read(); } catch (e) { say('released read', e.name, e.message); }
  try { await r.closed; say('closed resolved'); } catch (e) { say('closed', e.name, e.message); }
  let pulls = 0;
  const pulled = new ReadableStream({ pull(c) { pulls++; c.enqueue(pulls); if (pulls === 6) c.close(); } }, new CountQueuingStrategy({ highWaterMark: 3 }));
  await new Promise((res) => setTimeout(res, 20));
  say('pulls before reading', pulls);
  const pr = new ReadableStreamDefaultReader(pulled);
  const got = [];
  for (;;) { const x = await pr.read(); if (x.done) break; got.push(x.value); }
  say('pulled', got, pulls);
  let cancelled;
  const c = new ReadableStream({ start(ctl) { ctl.enqueue('a'); ctl.enqueue('b'); }, cancel(reason) { cancelled = reason; return 'ignored'; } });
  const cr = c.getReader();
  say('first', rr(await cr.read()));
  say('cancel', await cr.cancel('stop'), cancelled, rr(await cr.read()));
  const e = new ReadableStream({ start(ctl) { ctl.error(new Error('boom')); } });
  try { await e.getReader().read(); } catch (x) { say('errored', String(x)); }
  new ReadableStream({ start(ctl) { ctl.close(); try { ctl.enqueue(1); } catch (x) { say('enqueue after close', x.name, x.message); } } });
  const lk = new ReadableStream(); lk.getReader();
  try { await lk.cancel(); } catch (x) { say('cancel locked', x.name, x.message); }
  const desired = [];
  new ReadableStream({ start(ctl) { desired.push(ctl.desiredSize); ctl.enqueue('a'); desired.push(ctl.desiredSize); ctl.error(new Error('x')); desired.push(ctl.desiredSize); } }, { highWaterMark: 2 });
  const cq = new CountQueuingStrategy({ highWaterMark: 3 });
  say('desired', desired, cq.highWaterMark, cq.size(), typeof cq.size);
  const sized = new ReadableStream({ start(ctl) { ctl.enqueue('abc'); ctl.enqueue('de'); say('sized desired', ctl.desiredSize); } }, { highWaterMark: 10, size: (ch) => ch.length });
  const sr = sized.getReader();
  say('sized', rr(await sr.read()));
}
"#;

#[test]
fn readable_streams_agree_with_k6() {
    let Some(bin) = k6() else { return };
    let dir = Dir::new("parity-streams");
    let path = dir.write("script.js", SCRIPT);
    let args = ["run", "-q", "--address", "", path.to_str().unwrap()];
    let theirs = Command::new(&bin)
        .args(args)
        .env("K6_NO_USAGE_REPORT", "true")
        .current_dir(&dir.0)
        .output()
        .expect("run k6");
    let ours = rk6(&args, &dir.0);
    ours.assert_code(0);
    let theirs = console_lines(&String::from_utf8_lossy(&theirs.stderr));
    assert_eq!(theirs.len(), 26, "{theirs:#?}");
    assert_eq!(console_lines(&ours.stderr), theirs);
}
