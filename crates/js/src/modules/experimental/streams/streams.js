// k6/experimental/streams for rk6: the WHATWG Streams standard's ReadableStream (default
// controller and reader; no byte streams, tee or piping, as in k6), WritableStream and its
// default writer (k6 2.2), and the CountQueuingStrategy and ByteLengthQueuingStrategy.
// Written from the standard's algorithms, whose names the functions below keep. Evaluated
// once per VU; the expression's value is the object of exported classes.
(function () {
  'use strict';

  // The internal slots of every object, out of the scripts' reach.
  const slots = new WeakMap();
  const slotsOf = (o, kind, what) => {
    const s = typeof o === 'object' && o !== null ? slots.get(o) : undefined;
    if (s === undefined || s.kind !== kind) throw new TypeError(`${what} called on an object that is not a ${kind}`);
    return s;
  };

  // A promise with its settling functions; `handled` keeps a rejection from counting as
  // unhandled (the standard's "mark as handled").
  function deferred() {
    const d = { settled: false };
    d.promise = new Promise((resolve, reject) => {
      d.resolve = (v) => { if (!d.settled) { d.settled = true; resolve(v); } };
      d.reject = (e) => { if (!d.settled) { d.settled = true; reject(e); } };
    });
    return d;
  }
  const handled = (d) => { d.promise.catch(() => {}); return d; };
  const resolved = (v) => { const d = deferred(); d.resolve(v); return d; };
  const rejected = (e) => { const d = deferred(); d.reject(e); return handled(d); };
  const rejection = (e) => Promise.reject(e);
  // What k6 throws for what it does not implement: a GoError naming NotSupportedError.
  function notSupported(message) {
    const e = new Error(`NotSupportedError:${message}`);
    Object.defineProperty(e, 'name', { value: 'GoError', writable: true, configurable: true });
    return e;
  }
  function promiseCall(f, self, ...args) {
    try {
      return Promise.resolve(f.apply(self, args));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  // ---- queue with sizes and queuing strategies

  function isNonNegativeNumber(v) {
    return typeof v === 'number' && !Number.isNaN(v) && v >= 0;
  }
  function enqueueValueWithSize(c, value, size) {
    if (!isNonNegativeNumber(size) || size === Infinity) {
      throw new RangeError('The size of a chunk must be a finite, non-negative number');
    }
    c.queue.push({ value, size });
    c.queueTotalSize += size;
  }
  function dequeueValue(c) {
    const pair = c.queue.shift();
    c.queueTotalSize -= pair.size;
    if (c.queueTotalSize < 0) c.queueTotalSize = 0;
    return pair.value;
  }
  function resetQueue(c) {
    c.queue = [];
    c.queueTotalSize = 0;
  }

  function strategyDict(strategy) {
    if (strategy === undefined || strategy === null) return {};
    if (typeof strategy !== 'object' && typeof strategy !== 'function') {
      throw new TypeError('The queuing strategy must be an object');
    }
    return strategy;
  }
  function extractHighWaterMark(strategy, defaultHWM) {
    if (strategy.highWaterMark === undefined) return defaultHWM;
    const hwm = Number(strategy.highWaterMark);
    if (Number.isNaN(hwm) || hwm < 0) throw new RangeError('highWaterMark must be a non-negative number');
    return hwm;
  }
  function extractSizeAlgorithm(strategy) {
    const size = strategy.size;
    if (size === undefined) return () => 1;
    if (typeof size !== 'function') throw new TypeError('The size of a queuing strategy must be a function');
    return (chunk) => size.call(undefined, chunk);
  }

  function strategyInit(init, name) {
    if (init === null || typeof init !== 'object') throw new TypeError(`${name} argument must be an object`);
    if (init.highWaterMark === undefined) throw new TypeError(`${name} argument must have 'highWaterMark' property`);
    return Number(init.highWaterMark);
  }
  const countSize = function size() { return 1; };
  const byteLengthSize = function size(chunk) { return chunk.byteLength; };

  class CountQueuingStrategy {
    constructor(init) {
      slots.set(this, { kind: 'CountQueuingStrategy', highWaterMark: strategyInit(init, 'CountQueuingStrategy') });
    }
    get highWaterMark() { return slotsOf(this, 'CountQueuingStrategy', 'highWaterMark').highWaterMark; }
    get size() { slotsOf(this, 'CountQueuingStrategy', 'size'); return countSize; }
  }

  class ByteLengthQueuingStrategy {
    constructor(init) {
      slots.set(this, { kind: 'ByteLengthQueuingStrategy', highWaterMark: strategyInit(init, 'ByteLengthQueuingStrategy') });
    }
    get highWaterMark() { return slotsOf(this, 'ByteLengthQueuingStrategy', 'highWaterMark').highWaterMark; }
    get size() { slotsOf(this, 'ByteLengthQueuingStrategy', 'size'); return byteLengthSize; }
  }

  // ---- ReadableStream

  class ReadableStream {
    constructor(underlyingSource = undefined, strategy = undefined) {
      if (underlyingSource !== undefined && underlyingSource !== null && typeof underlyingSource !== 'object') {
        throw new TypeError('underlyingSource must be an object');
      }
      const src = underlyingSource === undefined || underlyingSource === null ? {} : underlyingSource;
      const dict = { cancel: src.cancel, pull: src.pull, start: src.start, type: src.type };
      for (const name of ['cancel', 'pull', 'start']) {
        if (dict[name] !== undefined && typeof dict[name] !== 'function') {
          throw new TypeError(`underlyingSource.[[${name}]] must be a function`);
        }
      }
      const strat = strategyDict(strategy);
      const s = { kind: 'ReadableStream', state: 'readable', reader: undefined, storedError: undefined, disturbed: false, controller: undefined };
      slots.set(this, s);
      if (dict.type !== undefined) {
        if (String(dict.type) === 'bytes') throw notSupported("'bytes' stream is not supported yet");
        throw new TypeError('invalid underlying source type');
      }
      const size = extractSizeAlgorithm(strat);
      const hwm = extractHighWaterMark(strat, 1);
      setUpReadableStreamDefaultControllerFromUnderlyingSource(this, src, dict, hwm, size);
    }

    get locked() {
      return slotsOf(this, 'ReadableStream', 'locked').reader !== undefined;
    }

    cancel(reason = undefined) {
      let s;
      try {
        s = slotsOf(this, 'ReadableStream', 'cancel');
      } catch (e) {
        return rejection(e);
      }
      if (s.reader !== undefined) return rejection(new TypeError('cannot cancel a locked stream'));
      return readableStreamCancel(this, reason);
    }

    getReader(options = undefined) {
      slotsOf(this, 'ReadableStream', 'getReader');
      const mode = options === undefined || options === null ? undefined : options.mode;
      if (mode !== undefined) {
        if (String(mode) === 'byob') throw notSupported("'byob' mode is not supported yet");
        throw new TypeError(`invalid reader mode ${String(mode)}`);
      }
      return new ReadableStreamDefaultReader(this);
    }
  }

  class ReadableStreamDefaultController {
    constructor() {
      throw new TypeError('Illegal constructor');
    }
    get desiredSize() {
      return readableStreamDefaultControllerGetDesiredSize(slotsOf(this, 'ReadableStreamDefaultController', 'desiredSize'));
    }
    close() {
      const c = slotsOf(this, 'ReadableStreamDefaultController', 'close');
      if (!readableStreamDefaultControllerCanCloseOrEnqueue(c)) {
        throw new TypeError('cannot close or enqueue');
      }
      readableStreamDefaultControllerClose(c);
    }
    enqueue(chunk = undefined) {
      const c = slotsOf(this, 'ReadableStreamDefaultController', 'enqueue');
      if (!readableStreamDefaultControllerCanCloseOrEnqueue(c)) {
        throw new TypeError('cannot close or enqueue');
      }
      readableStreamDefaultControllerEnqueue(c, chunk);
    }
    error(e = undefined) {
      readableStreamDefaultControllerError(slotsOf(this, 'ReadableStreamDefaultController', 'error'), e);
    }
  }

  class ReadableStreamDefaultReader {
    constructor(stream) {
      const s = slotsOf(stream, 'ReadableStream', 'ReadableStreamDefaultReader');
      if (s.reader !== undefined) throw new TypeError('stream is locked');
      const r = { kind: 'ReadableStreamDefaultReader', stream, closed: undefined, readRequests: [] };
      slots.set(this, r);
      s.reader = this;
      if (s.state === 'readable') r.closed = handled(deferred());
      else if (s.state === 'closed') r.closed = resolved(undefined);
      else r.closed = rejected(s.storedError);
    }

    get closed() {
      try {
        return slotsOf(this, 'ReadableStreamDefaultReader', 'closed').closed.promise;
      } catch (e) {
        return rejection(e);
      }
    }

    read() {
      let r;
      try {
        r = slotsOf(this, 'ReadableStreamDefaultReader', 'read');
      } catch (e) {
        return rejection(e);
      }
      if (r.stream === undefined) return rejection(new TypeError('stream is undefined'));
      const d = deferred();
      readableStreamDefaultReaderRead(r, {
        chunk: (value) => d.resolve({ value, done: false }),
        close: () => d.resolve({ value: undefined, done: true }),
        error: (e) => d.reject(e),
      });
      return d.promise;
    }

    releaseLock() {
      const r = slotsOf(this, 'ReadableStreamDefaultReader', 'releaseLock');
      if (r.stream === undefined) return;
      readableStreamReaderGenericRelease(r);
      const e = new TypeError('The reader was released');
      const requests = r.readRequests;
      r.readRequests = [];
      for (const req of requests) req.error(e);
    }

    cancel(reason = undefined) {
      let r;
      try {
        r = slotsOf(this, 'ReadableStreamDefaultReader', 'cancel');
      } catch (e) {
        return rejection(e);
      }
      if (r.stream === undefined) return rejection(new TypeError('stream is undefined'));
      return readableStreamCancel(r.stream, reason);
    }
  }

  function readableStreamCancel(stream, reason) {
    const s = slots.get(stream);
    s.disturbed = true;
    if (s.state === 'closed') return Promise.resolve(undefined);
    if (s.state === 'errored') return rejection(s.storedError);
    readableStreamClose(stream);
    const c = slots.get(s.controller);
    resetQueue(c);
    const result = c.cancelAlgorithm === undefined ? Promise.resolve(undefined) : c.cancelAlgorithm(reason);
    readableStreamDefaultControllerClearAlgorithms(c);
    return result.then(() => undefined);
  }

  function readableStreamClose(stream) {
    const s = slots.get(stream);
    s.state = 'closed';
    if (s.reader === undefined) return;
    const r = slots.get(s.reader);
    r.closed.resolve(undefined);
    const requests = r.readRequests;
    r.readRequests = [];
    for (const req of requests) req.close();
  }

  function readableStreamError(stream, e) {
    const s = slots.get(stream);
    s.state = 'errored';
    s.storedError = e;
    if (s.reader === undefined) return;
    const r = slots.get(s.reader);
    r.closed.reject(e);
    const requests = r.readRequests;
    r.readRequests = [];
    for (const req of requests) req.error(e);
  }

  function readableStreamGetNumReadRequests(s) {
    return s.reader === undefined ? 0 : slots.get(s.reader).readRequests.length;
  }

  function readableStreamFulfillReadRequest(s, chunk, done) {
    const req = slots.get(s.reader).readRequests.shift();
    if (done) req.close();
    else req.chunk(chunk);
  }

  function readableStreamDefaultReaderRead(r, req) {
    const s = slots.get(r.stream);
    s.disturbed = true;
    if (s.state === 'closed') req.close();
    else if (s.state === 'errored') req.error(s.storedError);
    else readableStreamDefaultControllerPullSteps(slots.get(s.controller), req);
  }

  function readableStreamReaderGenericRelease(r) {
    const stream = r.stream;
    const s = slots.get(stream);
    const e = new TypeError('stream is not readable');
    if (s.state === 'readable') r.closed.reject(e);
    else r.closed = rejected(e);
    handled(r.closed);
    s.reader = undefined;
    r.stream = undefined;
  }

  function setUpReadableStreamDefaultControllerFromUnderlyingSource(stream, src, dict, hwm, size) {
    const controller = Object.create(ReadableStreamDefaultController.prototype);
    const c = {
      kind: 'ReadableStreamDefaultController',
      stream,
      queue: [],
      queueTotalSize: 0,
      started: false,
      closeRequested: false,
      pullAgain: false,
      pulling: false,
      strategySizeAlgorithm: size,
      strategyHWM: hwm,
      pullAlgorithm: dict.pull === undefined ? () => Promise.resolve(undefined) : () => promiseCall(dict.pull, src, controller),
      cancelAlgorithm: dict.cancel === undefined ? () => Promise.resolve(undefined) : (reason) => promiseCall(dict.cancel, src, reason),
    };
    slots.set(controller, c);
    slots.get(stream).controller = controller;
    const startResult = dict.start === undefined ? undefined : dict.start.call(src, controller);
    Promise.resolve(startResult).then(
      () => {
        c.started = true;
        readableStreamDefaultControllerCallPullIfNeeded(c);
      },
      (e) => readableStreamDefaultControllerError(c, e),
    );
  }

  function readableStreamDefaultControllerCallPullIfNeeded(c) {
    if (!readableStreamDefaultControllerShouldCallPull(c)) return;
    if (c.pulling) {
      c.pullAgain = true;
      return;
    }
    c.pulling = true;
    c.pullAlgorithm().then(
      () => {
        c.pulling = false;
        if (c.pullAgain) {
          c.pullAgain = false;
          readableStreamDefaultControllerCallPullIfNeeded(c);
        }
      },
      (e) => readableStreamDefaultControllerError(c, e),
    );
  }

  function readableStreamDefaultControllerShouldCallPull(c) {
    if (!readableStreamDefaultControllerCanCloseOrEnqueue(c) || !c.started) return false;
    const s = slots.get(c.stream);
    if (s.reader !== undefined && readableStreamGetNumReadRequests(s) > 0) return true;
    return readableStreamDefaultControllerGetDesiredSize(c) > 0;
  }

  function readableStreamDefaultControllerClearAlgorithms(c) {
    c.pullAlgorithm = undefined;
    c.cancelAlgorithm = undefined;
    c.strategySizeAlgorithm = undefined;
  }

  function readableStreamDefaultControllerClose(c) {
    if (!readableStreamDefaultControllerCanCloseOrEnqueue(c)) return;
    c.closeRequested = true;
    if (c.queue.length === 0) {
      readableStreamDefaultControllerClearAlgorithms(c);
      readableStreamClose(c.stream);
    }
  }

  function readableStreamDefaultControllerEnqueue(c, chunk) {
    if (!readableStreamDefaultControllerCanCloseOrEnqueue(c)) return;
    const s = slots.get(c.stream);
    if (s.reader !== undefined && readableStreamGetNumReadRequests(s) > 0) {
      readableStreamFulfillReadRequest(s, chunk, false);
    } else {
      let size;
      try {
        size = c.strategySizeAlgorithm(chunk);
      } catch (e) {
        readableStreamDefaultControllerError(c, e);
        throw e;
      }
      try {
        enqueueValueWithSize(c, chunk, size);
      } catch (e) {
        readableStreamDefaultControllerError(c, e);
        throw e;
      }
    }
    readableStreamDefaultControllerCallPullIfNeeded(c);
  }

  function readableStreamDefaultControllerError(c, e) {
    if (slots.get(c.stream).state !== 'readable') return;
    resetQueue(c);
    readableStreamDefaultControllerClearAlgorithms(c);
    readableStreamError(c.stream, e);
  }

  function readableStreamDefaultControllerGetDesiredSize(c) {
    const state = slots.get(c.stream).state;
    if (state === 'errored') return null;
    if (state === 'closed') return 0;
    return c.strategyHWM - c.queueTotalSize;
  }

  function readableStreamDefaultControllerCanCloseOrEnqueue(c) {
    return !c.closeRequested && slots.get(c.stream).state === 'readable';
  }

  function readableStreamDefaultControllerPullSteps(c, req) {
    if (c.queue.length > 0) {
      const chunk = dequeueValue(c);
      if (c.closeRequested && c.queue.length === 0) {
        readableStreamDefaultControllerClearAlgorithms(c);
        readableStreamClose(c.stream);
      } else {
        readableStreamDefaultControllerCallPullIfNeeded(c);
      }
      req.chunk(chunk);
    } else {
      slots.get(slots.get(c.stream).reader).readRequests.push(req);
      readableStreamDefaultControllerCallPullIfNeeded(c);
    }
  }

  // ---- WritableStream

  const CLOSE_SENTINEL = {};

  class WritableStream {
    constructor(underlyingSink = undefined, strategy = undefined) {
      if (underlyingSink !== undefined && underlyingSink !== null && typeof underlyingSink !== 'object') {
        throw new TypeError('invalid underlying sink object');
      }
      const sink = underlyingSink === undefined || underlyingSink === null ? {} : underlyingSink;
      const dict = { abort: sink.abort, close: sink.close, start: sink.start, type: sink.type, write: sink.write };
      for (const name of ['abort', 'close', 'start', 'write']) {
        if (dict[name] !== undefined && typeof dict[name] !== 'function') {
          throw new TypeError(`underlyingSink.${name} must be a function`);
        }
      }
      const strat = strategyDict(strategy);
      if (dict.type !== undefined) throw new RangeError('Invalid type is specified');
      const s = {
        kind: 'WritableStream',
        state: 'writable',
        storedError: undefined,
        writer: undefined,
        controller: undefined,
        inFlightWriteRequest: undefined,
        closeRequest: undefined,
        inFlightCloseRequest: undefined,
        pendingAbortRequest: undefined,
        writeRequests: [],
        backpressure: false,
      };
      slots.set(this, s);
      const size = extractSizeAlgorithm(strat);
      const hwm = extractHighWaterMark(strat, 1);
      setUpWritableStreamDefaultControllerFromUnderlyingSink(this, sink, dict, hwm, size);
    }

    get locked() {
      return slotsOf(this, 'WritableStream', 'locked').writer !== undefined;
    }

    abort(reason = undefined) {
      let s;
      try {
        s = slotsOf(this, 'WritableStream', 'abort');
      } catch (e) {
        return rejection(e);
      }
      if (s.writer !== undefined) return rejection(new TypeError('Cannot abort a stream that is locked to a writer'));
      return writableStreamAbort(s, reason);
    }

    close() {
      let s;
      try {
        s = slotsOf(this, 'WritableStream', 'close');
      } catch (e) {
        return rejection(e);
      }
      if (s.writer !== undefined) return rejection(new TypeError('Cannot close a stream that is locked to a writer'));
      if (writableStreamCloseQueuedOrInFlight(s)) return rejection(new TypeError('The stream is already closing'));
      return writableStreamClose(s);
    }

    getWriter() {
      slotsOf(this, 'WritableStream', 'getWriter');
      return new WritableStreamDefaultWriter(this);
    }
  }

  class WritableStreamDefaultController {
    constructor() {
      throw new TypeError('Illegal constructor');
    }
    error(e = undefined) {
      const c = slotsOf(this, 'WritableStreamDefaultController', 'error');
      if (c.stream.state !== 'writable') return;
      writableStreamDefaultControllerError(c, e);
    }
  }

  class WritableStreamDefaultWriter {
    constructor(stream) {
      const s = slotsOf(stream, 'WritableStream', 'WritableStreamDefaultWriter');
      if (s.writer !== undefined) throw new TypeError('stream is locked');
      const w = { kind: 'WritableStreamDefaultWriter', stream: s, ready: undefined, closed: undefined };
      slots.set(this, w);
      s.writer = w;
      if (s.state === 'writable') {
        w.ready = !writableStreamCloseQueuedOrInFlight(s) && s.backpressure ? handled(deferred()) : resolved(undefined);
        w.closed = handled(deferred());
      } else if (s.state === 'erroring') {
        w.ready = rejected(s.storedError);
        w.closed = handled(deferred());
      } else if (s.state === 'closed') {
        w.ready = resolved(undefined);
        w.closed = resolved(undefined);
      } else {
        w.ready = rejected(s.storedError);
        w.closed = rejected(s.storedError);
      }
    }

    get closed() {
      try {
        return slotsOf(this, 'WritableStreamDefaultWriter', 'closed').closed.promise;
      } catch (e) {
        return rejection(e);
      }
    }

    get ready() {
      try {
        return slotsOf(this, 'WritableStreamDefaultWriter', 'ready').ready.promise;
      } catch (e) {
        return rejection(e);
      }
    }

    get desiredSize() {
      const w = slotsOf(this, 'WritableStreamDefaultWriter', 'desiredSize');
      if (w.stream === undefined) throw new TypeError('The writer has no stream: its lock was released');
      const state = w.stream.state;
      if (state === 'errored' || state === 'erroring') return null;
      if (state === 'closed') return 0;
      return writableStreamDefaultControllerGetDesiredSize(w.stream.controller);
    }

    abort(reason = undefined) {
      let w;
      try {
        w = slotsOf(this, 'WritableStreamDefaultWriter', 'abort');
      } catch (e) {
        return rejection(e);
      }
      if (w.stream === undefined) return rejection(new TypeError('The writer has no stream: its lock was released'));
      return writableStreamAbort(w.stream, reason);
    }

    close() {
      let w;
      try {
        w = slotsOf(this, 'WritableStreamDefaultWriter', 'close');
      } catch (e) {
        return rejection(e);
      }
      if (w.stream === undefined) return rejection(new TypeError('The writer has no stream: its lock was released'));
      if (writableStreamCloseQueuedOrInFlight(w.stream)) return rejection(new TypeError('The stream is already closing'));
      return writableStreamClose(w.stream);
    }

    releaseLock() {
      const w = slotsOf(this, 'WritableStreamDefaultWriter', 'releaseLock');
      if (w.stream === undefined) return;
      const e = new TypeError('The writer was released');
      writerEnsureReadyPromiseRejected(w, e);
      writerEnsureClosedPromiseRejected(w, e);
      w.stream.writer = undefined;
      w.stream = undefined;
    }

    write(chunk = undefined) {
      let w;
      try {
        w = slotsOf(this, 'WritableStreamDefaultWriter', 'write');
      } catch (e) {
        return rejection(e);
      }
      if (w.stream === undefined) return rejection(new TypeError('The writer has no stream: its lock was released'));
      return writableStreamDefaultWriterWrite(w, chunk);
    }
  }

  function writerEnsureReadyPromiseRejected(w, e) {
    if (w.ready.settled) w.ready = rejected(e);
    else handled(w.ready).reject(e);
  }

  function writerEnsureClosedPromiseRejected(w, e) {
    if (w.closed.settled) w.closed = rejected(e);
    else handled(w.closed).reject(e);
  }

  function writableStreamDefaultWriterWrite(w, chunk) {
    const s = w.stream;
    const c = s.controller;
    const size = writableStreamDefaultControllerGetChunkSize(c, chunk);
    if (s !== w.stream) return rejection(new TypeError('The writer has no stream: its lock was released'));
    if (s.state === 'errored') return rejection(s.storedError);
    if (writableStreamCloseQueuedOrInFlight(s) || s.state === 'closed') {
      return rejection(new TypeError('The stream is closing or closed and cannot be written to'));
    }
    if (s.state === 'erroring') return rejection(s.storedError);
    const d = deferred();
    s.writeRequests.push(d);
    writableStreamDefaultControllerWrite(c, chunk, size);
    return d.promise;
  }

  function writableStreamAbort(s, reason) {
    if (s.state === 'closed' || s.state === 'errored') return Promise.resolve(undefined);
    if (s.pendingAbortRequest !== undefined) return s.pendingAbortRequest.promise.promise;
    let wasAlreadyErroring = false;
    if (s.state === 'erroring') {
      wasAlreadyErroring = true;
      reason = undefined;
    }
    const d = deferred();
    s.pendingAbortRequest = { promise: d, reason, wasAlreadyErroring };
    if (!wasAlreadyErroring) writableStreamStartErroring(s, reason);
    return d.promise;
  }

  function writableStreamClose(s) {
    if (s.state === 'closed' || s.state === 'errored') {
      return rejection(new TypeError('The stream is closed or errored and cannot be closed'));
    }
    const d = deferred();
    s.closeRequest = d;
    if (s.writer !== undefined && s.backpressure && s.state === 'writable') s.writer.ready.resolve(undefined);
    enqueueValueWithSize(s.controller, CLOSE_SENTINEL, 0);
    writableStreamDefaultControllerAdvanceQueueIfNeeded(s.controller);
    return d.promise;
  }

  function writableStreamCloseQueuedOrInFlight(s) {
    return s.closeRequest !== undefined || s.inFlightCloseRequest !== undefined;
  }

  function writableStreamHasOperationMarkedInFlight(s) {
    return s.inFlightWriteRequest !== undefined || s.inFlightCloseRequest !== undefined;
  }

  function writableStreamDealWithRejection(s, e) {
    if (s.state === 'writable') writableStreamStartErroring(s, e);
    else writableStreamFinishErroring(s);
  }

  function writableStreamStartErroring(s, reason) {
    s.state = 'erroring';
    s.storedError = reason;
    if (s.writer !== undefined) writerEnsureReadyPromiseRejected(s.writer, reason);
    if (!writableStreamHasOperationMarkedInFlight(s) && s.controller.started) writableStreamFinishErroring(s);
  }

  function writableStreamFinishErroring(s) {
    s.state = 'errored';
    resetQueue(s.controller);
    for (const req of s.writeRequests) handled(req).reject(s.storedError);
    s.writeRequests = [];
    const abort = s.pendingAbortRequest;
    if (abort === undefined) {
      writableStreamRejectCloseAndClosedPromiseIfNeeded(s);
      return;
    }
    s.pendingAbortRequest = undefined;
    if (abort.wasAlreadyErroring) {
      abort.promise.reject(s.storedError);
      writableStreamRejectCloseAndClosedPromiseIfNeeded(s);
      return;
    }
    const c = s.controller;
    const result = c.abortAlgorithm === undefined ? Promise.resolve(undefined) : c.abortAlgorithm(abort.reason);
    writableStreamDefaultControllerClearAlgorithms(c);
    result.then(
      () => {
        abort.promise.resolve(undefined);
        writableStreamRejectCloseAndClosedPromiseIfNeeded(s);
      },
      (e) => {
        abort.promise.reject(e);
        writableStreamRejectCloseAndClosedPromiseIfNeeded(s);
      },
    );
  }

  function writableStreamRejectCloseAndClosedPromiseIfNeeded(s) {
    if (s.closeRequest !== undefined) {
      s.closeRequest.reject(s.storedError);
      s.closeRequest = undefined;
    }
    if (s.writer !== undefined) handled(s.writer.closed).reject(s.storedError);
  }

  function writableStreamUpdateBackpressure(s, backpressure) {
    if (s.writer !== undefined && backpressure !== s.backpressure) {
      if (backpressure) s.writer.ready = handled(deferred());
      else s.writer.ready.resolve(undefined);
    }
    s.backpressure = backpressure;
  }

  function setUpWritableStreamDefaultControllerFromUnderlyingSink(stream, sink, dict, hwm, size) {
    const controller = Object.create(WritableStreamDefaultController.prototype);
    const s = slots.get(stream);
    const c = {
      kind: 'WritableStreamDefaultController',
      stream: s,
      queue: [],
      queueTotalSize: 0,
      started: false,
      strategySizeAlgorithm: size,
      strategyHWM: hwm,
      writeAlgorithm: dict.write === undefined ? () => Promise.resolve(undefined) : (chunk) => promiseCall(dict.write, sink, chunk, controller),
      closeAlgorithm: dict.close === undefined ? () => Promise.resolve(undefined) : () => promiseCall(dict.close, sink),
      abortAlgorithm: dict.abort === undefined ? () => Promise.resolve(undefined) : (reason) => promiseCall(dict.abort, sink, reason),
    };
    slots.set(controller, c);
    s.controller = c;
    writableStreamUpdateBackpressure(s, writableStreamDefaultControllerGetDesiredSize(c) <= 0);
    const startResult = dict.start === undefined ? undefined : dict.start.call(sink, controller);
    Promise.resolve(startResult).then(
      () => {
        c.started = true;
        writableStreamDefaultControllerAdvanceQueueIfNeeded(c);
      },
      (e) => {
        c.started = true;
        writableStreamDealWithRejection(s, e);
      },
    );
  }

  function writableStreamDefaultControllerClearAlgorithms(c) {
    c.writeAlgorithm = undefined;
    c.closeAlgorithm = undefined;
    c.abortAlgorithm = undefined;
    c.strategySizeAlgorithm = undefined;
  }

  function writableStreamDefaultControllerGetChunkSize(c, chunk) {
    if (c.strategySizeAlgorithm === undefined) return 1;
    try {
      return c.strategySizeAlgorithm(chunk);
    } catch (e) {
      if (c.stream.state === 'writable') writableStreamDefaultControllerError(c, e);
      return 1;
    }
  }

  function writableStreamDefaultControllerGetDesiredSize(c) {
    return c.strategyHWM - c.queueTotalSize;
  }

  function writableStreamDefaultControllerWrite(c, chunk, size) {
    try {
      enqueueValueWithSize(c, chunk, size);
    } catch (e) {
      if (c.stream.state === 'writable') writableStreamDefaultControllerError(c, e);
      return;
    }
    const s = c.stream;
    if (!writableStreamCloseQueuedOrInFlight(s) && s.state === 'writable') {
      writableStreamUpdateBackpressure(s, writableStreamDefaultControllerGetDesiredSize(c) <= 0);
    }
    writableStreamDefaultControllerAdvanceQueueIfNeeded(c);
  }

  function writableStreamDefaultControllerAdvanceQueueIfNeeded(c) {
    const s = c.stream;
    if (!c.started || s.inFlightWriteRequest !== undefined) return;
    if (s.state === 'erroring') {
      writableStreamFinishErroring(s);
      return;
    }
    if (c.queue.length === 0) return;
    const value = c.queue[0].value;
    if (value === CLOSE_SENTINEL) {
      s.inFlightCloseRequest = s.closeRequest;
      s.closeRequest = undefined;
      dequeueValue(c);
      const result = c.closeAlgorithm();
      writableStreamDefaultControllerClearAlgorithms(c);
      result.then(
        () => {
          s.inFlightCloseRequest.resolve(undefined);
          s.inFlightCloseRequest = undefined;
          if (s.state === 'erroring') {
            s.storedError = undefined;
            if (s.pendingAbortRequest !== undefined) {
              s.pendingAbortRequest.promise.resolve(undefined);
              s.pendingAbortRequest = undefined;
            }
          }
          s.state = 'closed';
          if (s.writer !== undefined) s.writer.closed.resolve(undefined);
        },
        (e) => {
          s.inFlightCloseRequest.reject(e);
          s.inFlightCloseRequest = undefined;
          if (s.pendingAbortRequest !== undefined) {
            s.pendingAbortRequest.promise.reject(e);
            s.pendingAbortRequest = undefined;
          }
          writableStreamDealWithRejection(s, e);
        },
      );
      return;
    }
    s.inFlightWriteRequest = s.writeRequests.shift();
    c.writeAlgorithm(value).then(
      () => {
        s.inFlightWriteRequest.resolve(undefined);
        s.inFlightWriteRequest = undefined;
        dequeueValue(c);
        if (!writableStreamCloseQueuedOrInFlight(s) && s.state === 'writable') {
          writableStreamUpdateBackpressure(s, writableStreamDefaultControllerGetDesiredSize(c) <= 0);
        }
        writableStreamDefaultControllerAdvanceQueueIfNeeded(c);
      },
      (e) => {
        if (s.state === 'writable') writableStreamDefaultControllerClearAlgorithms(c);
        s.inFlightWriteRequest.reject(e);
        s.inFlightWriteRequest = undefined;
        writableStreamDealWithRejection(s, e);
      },
    );
  }

  function writableStreamDefaultControllerError(c, e) {
    writableStreamDefaultControllerClearAlgorithms(c);
    writableStreamStartErroring(c.stream, e);
  }

  for (const [cls, name] of [
    [ReadableStream, 'ReadableStream'],
    [ReadableStreamDefaultReader, 'ReadableStreamDefaultReader'],
    [ReadableStreamDefaultController, 'ReadableStreamDefaultController'],
    [WritableStream, 'WritableStream'],
    [WritableStreamDefaultWriter, 'WritableStreamDefaultWriter'],
    [WritableStreamDefaultController, 'WritableStreamDefaultController'],
    [CountQueuingStrategy, 'CountQueuingStrategy'],
    [ByteLengthQueuingStrategy, 'ByteLengthQueuingStrategy'],
  ]) {
    Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });
  }

  return {
    ByteLengthQueuingStrategy,
    CountQueuingStrategy,
    ReadableStream,
    ReadableStreamDefaultReader,
    WritableStream,
    WritableStreamDefaultWriter,
  };
})()
