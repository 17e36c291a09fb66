// k6/experimental/streams: ReadableStream as k6 1.1 and its docs have it (k6-docs
// javascript-api/k6-experimental/streams: readablestream, countqueuingstrategy,
// readablestreamdefaultreader) and WritableStream as k6 2.2 added it (release notes v2.2.0,
// #6132), with the WHATWG Streams standard's behaviour around them.
import { check } from 'k6';
import { ReadableStream, ReadableStreamDefaultReader, CountQueuingStrategy, ByteLengthQueuingStrategy, WritableStream, WritableStreamDefaultWriter } from 'k6/experimental/streams';
import { setTimeout } from 'k6/timers';

function numbersStream(n, strategy) {
  let current = 0;
  return new ReadableStream({
    start(controller) {
      const fn = () => {
        if (current < n) { controller.enqueue(++current); setTimeout(fn, 5); return; }
        controller.close();
      };
      setTimeout(fn, 5);
    },
  }, strategy);
}

export default async function () {
  const reader = numbersStream(5).getReader();
  const got = [];
  while (true) { const { done, value } = await reader.read(); if (done) break; got.push(value); }
  check(got, { 'numbers': (g) => g.join() === '1,2,3,4,5' });

  // pull with a count strategy: pulls until the queue holds highWaterMark chunks
  let pulls = 0;
  const s = new ReadableStream({ pull(c) { pulls++; c.enqueue(pulls); if (pulls === 10) c.close(); } }, new CountQueuingStrategy({ highWaterMark: 3 }));
  await new Promise((r) => setTimeout(r, 10));
  check(pulls, { 'pulled up to the high water mark': (p) => p === 3 });
  const r2 = new ReadableStreamDefaultReader(s);
  const all = [];
  for (;;) { const x = await r2.read(); if (x.done) break; all.push(x.value); }
  check(all, { 'all pulled': (a) => a.length === 10 && s.locked });
  r2.releaseLock();
  check(s, { 'unlocked': (x) => !x.locked });

  // cancel and error
  let cancelled;
  const c = new ReadableStream({ start(ctl) { ctl.enqueue('a'); ctl.enqueue('b'); }, cancel(reason) { cancelled = reason; } });
  const cr = c.getReader();
  check((await cr.read()).value, { 'first': (v) => v === 'a' });
  await cr.cancel('stop');
  check([cancelled, (await cr.read()).done], { 'cancelled': (x) => x[0] === 'stop' && x[1] === true });
  const e = new ReadableStream({ start(ctl) { ctl.error(new Error('boom')); } });
  let err = '';
  try { await e.getReader().read(); } catch (x) { err = String(x); }
  check(err, { 'errored': (x) => x === 'Error: boom' });
  let thrown = [];
  for (const f of [() => ReadableStream(), () => new ReadableStream({ type: 'bytes' }), () => new ReadableStream({}, { highWaterMark: -1 }), () => { const l = new ReadableStream(); l.getReader(); l.getReader(); }, () => new CountQueuingStrategy({})]) {
    try { f(); thrown.push('none'); } catch (x) { thrown.push(x.name); }
  }
  check(thrown, { 'errors': (t) => t.join() === 'TypeError,GoError,RangeError,TypeError,TypeError' });
  check(new ByteLengthQueuingStrategy({ highWaterMark: 16 }), { 'byte length': (b) => b.highWaterMark === 16 && b.size(new Uint8Array(5)) === 5 });

  // writable
  const written = [];
  let closed = false;
  const ws = new WritableStream({
    write(chunk) { return new Promise((r) => setTimeout(() => { written.push(chunk); r(); }, 2)); },
    close() { closed = true; },
  }, new CountQueuingStrategy({ highWaterMark: 2 }));
  const w = ws.getWriter();
  check(w.desiredSize, { 'desired size': (d) => d === 2 });
  const p1 = w.write('hello');
  const p2 = w.write('world');
  check(w.desiredSize, { 'backpressure': (d) => d === 0 });
  await w.ready;
  await Promise.all([p1, p2]);
  await w.close();
  await w.closed;
  check([written, closed], { 'written and closed': (x) => x[0].join(' ') === 'hello world' && x[1] });
  let aborted;
  const wa = new WritableStream({ abort(reason) { aborted = reason; } });
  const wr = wa.getWriter();
  await wr.abort('nope');
  let late = '';
  try { await wr.write('x'); } catch (x) { late = String(x); }
  check([aborted, late], { 'aborted': (x) => x[0] === 'nope' && x[1] === 'nope' });
  const we = new WritableStream({ write() { throw new Error('sink failed'); } });
  const wew = we.getWriter();
  let wErr = '';
  try { await wew.write(1); } catch (x) { wErr = String(x); }
  let closedErr = '';
  try { await wew.closed; } catch (x) { closedErr = String(x); }
  check([wErr, closedErr], { 'sink errors': (x) => x[0] === 'Error: sink failed' && x[1] === 'Error: sink failed' });
  let noNew = '';
  try { WritableStream(); } catch (x) { noNew = x.name; }
  check(noNew, { 'new required': (n) => n === 'TypeError' });
  const ww = new WritableStreamDefaultWriter(new WritableStream());
  await ww.write('x');
  check(ww, { 'writer constructor': () => true });
  check([Object.prototype.toString.call(ws), String(new ReadableStream())], {
    'string tags': (t) => t[0] === '[object WritableStream]' && t[1] === '[object ReadableStream]',
  });

  // The release notes' example (v2.2.0).
  const notes = [];
  const example = new WritableStream({ write(chunk) { notes.push(`wrote ${chunk}`); } });
  const writer = example.getWriter();
  await writer.write('hello');
  await writer.close();
  check(notes, { 'release notes example': (n) => n.join() === 'wrote hello' });
}
