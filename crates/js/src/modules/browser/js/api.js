// k6/browser's classes, built per VU on rk6's natives (modules/browser/mod.rs):
//   send(session, method, params) -> Promise   one DevTools protocol command
//   launch() -> version                        the run's Chromium (starts it once)
//   subscribe(session), setDispatcher(fn)      a session's events, handed to fn
//   hold(), release()                          the iteration waits for an event
//   trackContext(id), untrackContext(id)       contexts closed when the iteration ends
//   generation()                               counts ended iterations
//   emit(metric, value, tags), writeFile(path, b64), decode64(b64), isConnected()
//   injected, vitals                           the page-side scripts
(function (native) {
  'use strict';
  const DEFAULT_TIMEOUT = 30000;
  const sessions = new Map(); // session id -> Page
  native.setDispatcher((session, method, params) => {
    const page = sessions.get(session);
    if (page) page._event(method, params);
  });

  // --- small helpers -------------------------------------------------------------------
  // k6 rejects with the Go error itself: an object whose string form (and error()) is the
  // message, not an Error.
  const fail = (msg) => native.goError(String(msg));
  const messageOf = (e) => String(e && typeof e === 'object' && typeof e.message === 'string' ? e.message : e);
  const q = (s) => JSON.stringify(String(s));
  const timedOut = (ms) => fail(`timed out after ${ms}ms`);
  const delay = (ms) => new Promise((r) => setTimeout(r, ms));
  const lifecycleName = (w) => {
    switch (w === undefined ? 'load' : w) {
      case 'load': return 'load';
      case 'domcontentloaded': return 'DOMContentLoaded';
      case 'networkidle': return 'networkIdle';
      default: throw fail(`invalid lifecycle event: "${w}"; must be one of: load, domcontentloaded, networkidle`);
    }
  };
  const timeoutOf = (opts, fallback) => (opts && opts.timeout !== undefined && opts.timeout !== null ? Number(opts.timeout) : fallback);
  function urlMatches(pattern, url) {
    if (pattern === undefined || pattern === null) return true;
    if (pattern instanceof RegExp) return pattern.test(url);
    if (typeof pattern === 'function') return !!pattern(url);
    const p = String(pattern);
    if (!p.includes('*') && !p.includes('?')) return url === p;
    let re = '';
    for (let i = 0; i < p.length; i++) {
      const c = p[i];
      if (c === '*' && p[i + 1] === '*') { re += '.*'; i++; } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '.';
      else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp('^' + re + '$').test(url);
  }
  // Waits until `check()` returns something other than undefined, re-checked after every
  // event of the page; rejects with `message` after `ms` (0: no limit).
  function waitUntil(page, check, ms, message) {
    const first = check();
    if (first !== undefined) return Promise.resolve(first);
    return new Promise((resolve, reject) => {
      const w = { check, resolve, reject, timer: null };
      native.hold();
      const done = () => { if (w.timer !== null) clearTimeout(w.timer); native.release(); page._waiters.delete(w); };
      w.resolve = (v) => { done(); resolve(v); };
      w.reject = (e) => { done(); reject(e); };
      if (ms > 0) w.timer = setTimeout(() => w.reject(fail(message)), ms);
      page._waiters.add(w);
    });
  }
  const protocolError = messageOf;
  const contextGone = (e) => /Execution context was destroyed|Cannot find context|Inspected target navigated|uniqueContextId not found|Cannot find default execution context/.test(protocolError(e));

  // --- Request / Response ---------------------------------------------------------------
  class Request {
    constructor(page, p) {
      this._page = page; this._p = p; this._response = null;
    }
    url() { return this._p.request.url; }
    method() { return this._p.request.method; }
    headers() { return Object.fromEntries(Object.entries(this._p.request.headers || {}).map(([k, v]) => [k.toLowerCase(), v])); }
    async allHeaders() { return this.headers(); }
    headerValue(name) { return this.headers()[String(name).toLowerCase()] ?? null; }
    postData() { return this._p.request.postData ?? null; }
    postDataBuffer() { const d = this.postData(); return d === null ? null : native.decode64(native.encode64(d)); }
    resourceType() { return String(this._p.type || 'Other').toLowerCase(); }
    isNavigationRequest() { return this._p.requestId === this._p.loaderId && this._p.type === 'Document'; }
    frame() { return this._page._frames.get(this._p.frameId) || this._page.mainFrame(); }
    redirectedFrom() { return this._redirectedFrom || null; }
    redirectedTo() { return this._redirectedTo || null; }
    async response() { return this._response; }
    timing() { return (this._response && this._response._r.timing) || {}; }
    size() { return { body: (this.postData() || '').length, headers: 0 }; }
  }

  class Response {
    constructor(page, request, r) {
      this._page = page; this._request = request; this._r = r;
    }
    status() { return this._r.status; }
    statusText() { return this._r.statusText || ''; }
    ok() { return this._r.status === 0 || (this._r.status >= 200 && this._r.status <= 299); }
    url() { return this._r.url; }
    headers() { return Object.fromEntries(Object.entries(this._r.headers || {}).map(([k, v]) => [k.toLowerCase(), v])); }
    async allHeaders() { return this.headers(); }
    headerValue(name) { return this.headers()[String(name).toLowerCase()] ?? null; }
    headerValues(name) { const v = this.headerValue(name); return v === null ? [] : v.split('\n'); }
    async headersArray() { return Object.entries(this.headers()).map(([name, value]) => ({ name, value })); }
    request() { return this._request; }
    frame() { return this._request.frame(); }
    fromServiceWorker() { return !!this._r.fromServiceWorker; }
    async securityDetails() { return this._r.securityDetails || null; }
    async serverAddr() { return { ipAddress: this._r.remoteIPAddress || '', port: this._r.remotePort || 0 }; }
    async body() {
      const b = await native.send(this._page._session, 'Network.getResponseBody', { requestId: this._request._p.requestId });
      return native.decode64(b.base64Encoded ? b.body : native.encode64(b.body));
    }
    async text() {
      const b = await native.send(this._page._session, 'Network.getResponseBody', { requestId: this._request._p.requestId });
      if (!b.base64Encoded) return b.body;
      return native.text64(b.body);
    }
    async json() { return JSON.parse(await this.text()); }
    async finished() { return null; }
    size() { return { body: this._r.encodedDataLength || 0, headers: 0 }; }
  }

  // --- JSHandle / ElementHandle -----------------------------------------------------------
  function remoteValue(r) {
    if (!r) return undefined;
    if (r.type === 'undefined') return undefined;
    if (r.unserializableValue !== undefined) {
      switch (r.unserializableValue) {
        case 'NaN': return NaN;
        case 'Infinity': return Infinity;
        case '-Infinity': return -Infinity;
        case '-0': return -0;
        default: return r.unserializableValue.endsWith('n') ? BigInt(r.unserializableValue.slice(0, -1)) : undefined;
      }
    }
    return r.value;
  }
  function evalError(details) {
    const ex = details.exception;
    const text = (ex && (ex.description || (ex.value !== undefined ? String(ex.value) : ''))) || details.text || 'error';
    return fail(`evaluating JS: ${text}`);
  }
  // A function argument as CDP's CallArgument: handles by object id, the rest by value.
  function callArg(v) {
    if (v instanceof JSHandle) return { objectId: v._objectId };
    if (v === undefined) return { unserializableValue: 'undefined' };
    if (typeof v === 'number' && (Number.isNaN(v) || !Number.isFinite(v) || Object.is(v, -0))) return { unserializableValue: Object.is(v, -0) ? '-0' : String(v) };
    return { value: v };
  }
  const fnSource = (f) => {
    if (typeof f === 'function') return f.toString();
    const s = String(f);
    return s;
  };

  class JSHandle {
    constructor(frame, remote) {
      this._frame = frame; this._remote = remote; this._objectId = remote.objectId;
    }
    get _session() { return this._frame._page._session; }
    asElement() { return this instanceof ElementHandle ? this : null; }
    async dispose() { if (this._objectId) await native.send(this._session, 'Runtime.releaseObject', { objectId: this._objectId }).catch(() => {}); }
    async jsonValue() {
      if (!this._objectId) return remoteValue(this._remote);
      const r = await native.send(this._session, 'Runtime.callFunctionOn', { objectId: this._objectId, functionDeclaration: 'function () { return this; }', returnByValue: true, awaitPromise: true });
      return remoteValue(r.result);
    }
    async _call(fn, args, byValue) {
      const r = await native.send(this._session, 'Runtime.callFunctionOn', {
        objectId: this._objectId, functionDeclaration: fn, arguments: args.map(callArg), returnByValue: byValue, awaitPromise: true,
      });
      if (r.exceptionDetails) throw evalError(r.exceptionDetails);
      return r.result;
    }
    async evaluate(fn, ...args) {
      return remoteValue(await this._call(`function (...a) { return (${fnSource(fn)})(this, ...a); }`, args, true));
    }
    async evaluateHandle(fn, ...args) {
      return this._frame._handle(await this._call(`function (...a) { return (${fnSource(fn)})(this, ...a); }`, args, false));
    }
    async getProperties() {
      const r = await native.send(this._session, 'Runtime.getProperties', { objectId: this._objectId, ownProperties: true });
      const out = new Map();
      for (const p of r.result) if (p.enumerable && p.value) out.set(p.name, this._frame._handle(p.value));
      return out;
    }
  }

  class ElementHandle extends JSHandle {
    async _do(fn, ...args) {
      await this._frame._ensureInjected();
      return remoteValue(await this._call(`function (...a) { const r = globalThis.__rk6; return (${fn})(this, r, ...a); }`, args, true));
    }
    async _point(opts) {
      const timeout = timeoutOf(opts, this._frame._page._timeout());
      const end = Date.now() + timeout;
      let why = '';
      for (;;) {
        const p = await this._do('async (el, r, o) => r.actionPoint(el, o)', { enabled: !(opts && opts.force), force: !!(opts && opts.force), position: opts && opts.position });
        if (p && typeof p === 'object') return this._frame._offset(p);
        why = p;
        if (why === 'element is not attached to the DOM' || Date.now() >= end) break;
        await delay(20);
      }
      throw fail(why === 'element is not attached to the DOM' ? why : `timed out after ${timeout}ms`);
    }
    async click(opts) { const p = await this._point(opts); await this._frame._page.mouse.click(p.x, p.y, opts); }
    async dblclick(opts) { const p = await this._point(opts); await this._frame._page.mouse.dblclick(p.x, p.y, opts); }
    async hover(opts) { const p = await this._point(opts); await this._frame._page.mouse.move(p.x, p.y); }
    async tap(opts) { const p = await this._point(opts); await this._frame._page.touchscreen.tap(p.x, p.y); }
    async focus() { await this._do('(el) => el.focus()'); }
    async blur() { await this._do('(el) => el.blur()'); }
    async fill(value, opts) {
      value = String(value);
      const how = await this._do('(el, r, v) => r.prepareFill(el, v)', value);
      if (how.startsWith('error: ')) throw fail(how.slice(7));
      const page = this._frame._page;
      if (how === 'insert') {
        if (value === '') await page.keyboard.press('Delete');
        else await native.send(page._session, 'Input.insertText', { text: value });
      }
    }
    async clear(opts) { await this.fill('', opts); }
    async type(text, opts) { await this.focus(); await this._frame._page.keyboard.type(text, opts); }
    async pressSequentially(text, opts) { await this.type(text, opts); }
    async press(key, opts) { await this.focus(); await this._frame._page.keyboard.press(key, opts); }
    async _setChecked(want, opts) {
      if ((await this._do('(el, r) => r.isChecked(el)')) === want) return;
      await this.click(opts);
      if ((await this._do('(el, r) => r.isChecked(el)')) !== want) throw fail('clicking the element did not change its state');
    }
    async check(opts) { await this._setChecked(true, opts); }
    async uncheck(opts) { await this._setChecked(false, opts); }
    async setChecked(v, opts) { await this._setChecked(!!v, opts); }
    async selectOption(values) {
      const list = (Array.isArray(values) ? values : [values]).map((v) => (v instanceof ElementHandle ? { value: undefined } : v));
      const picked = await this._do('(el, r, v) => r.selectOptions(el, v)', list);
      if (picked === null) throw fail('no matching option');
      return picked;
    }
    async selectText() { await this._do('(el) => { el.select ? el.select() : getSelection().selectAllChildren(el); }'); }
    async setInputFiles() { throw fail('setInputFiles is not supported by rk6 yet'); }
    async dispatchEvent(type, init) { await this._do('(el, r, t, i) => el.dispatchEvent(new Event(t, Object.assign({ bubbles: true, cancelable: true, composed: true }, i || {})))', type, init); }
    async scrollIntoViewIfNeeded() { await this._do("(el) => el.scrollIntoView({ block: 'center', inline: 'center' })"); }
    async textContent() { return this._do('(el) => el.textContent'); }
    async innerText() { return this._do('(el) => el.innerText'); }
    async innerHTML() { return this._do('(el) => el.innerHTML'); }
    async inputValue() {
      return this._do("(el) => { if (!['INPUT','TEXTAREA','SELECT'].includes(el.tagName)) throw fail('Node is not an <input>, <textarea> or <select> element'); return el.value; }");
    }
    async getAttribute(name) { return this._do('(el, r, n) => el.getAttribute(n)', name); }
    async isVisible() { return this._do('(el, r) => r.isVisible(el)'); }
    async isHidden() { return this._do('(el, r) => !r.isVisible(el)'); }
    async isEnabled() { return this._do('(el, r) => !r.isDisabled(el)'); }
    async isDisabled() { return this._do('(el, r) => r.isDisabled(el)'); }
    async isEditable() { return this._do('(el, r) => r.isEditable(el)'); }
    async isChecked() { return this._do('(el, r) => r.isChecked(el)'); }
    async boundingBox() {
      const b = await this._do('(el) => { const r = el.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; }');
      const o = await this._frame._offset({ x: b.x, y: b.y });
      return { x: o.x, y: o.y, width: b.width, height: b.height };
    }
    async $(selector) { return this._frame._queryHandle(selector, this); }
    async $$(selector) { return this._frame._queryAllHandles(selector, this); }
    async waitForSelector(selector, opts) { return this._frame.waitForSelector(selector, opts, this); }
    async waitForElementState(state, opts) {
      const ms = timeoutOf(opts, this._frame._page._timeout());
      const end = Date.now() + ms;
      while (!(await this._do('(el, r, s) => r.stateOf(el, s)', state))) {
        if (Date.now() >= end) throw fail(`waiting for element state ${q(state)}: timed out after ${ms}ms`);
        await delay(20);
      }
    }
    async ownerFrame() { return this._frame; }
    async contentFrame() {
      const info = await native.send(this._session, 'DOM.describeNode', { objectId: this._objectId });
      const id = info.node && info.node.frameId;
      return (id && this._frame._page._frames.get(id)) || null;
    }
    async screenshot(opts) {
      const b = await this.boundingBox();
      return this._frame._page.screenshot(Object.assign({}, opts || {}, { clip: b }));
    }
  }

  // --- Frame -------------------------------------------------------------------------------
  class Frame {
    constructor(page, id, parentId) {
      this._page = page; this._id = id; this._parentId = parentId || null;
      this._url = 'about:blank'; this._name = ''; this._loaderId = ''; this._events = new Set();
      this._context = null; this._detached = false;
    }
    url() { return this._url; }
    name() { return this._name; }
    page() { return this._page; }
    parentFrame() { return (this._parentId && this._page._frames.get(this._parentId)) || null; }
    childFrames() { return [...this._page._frames.values()].filter((f) => f._parentId === this._id); }
    isDetached() { return this._detached; }
    async frameElement() {
      const parent = this.parentFrame();
      if (!parent) throw fail('frame has no parent');
      const r = await native.send(this._page._session, 'DOM.getFrameOwner', { frameId: this._id });
      const obj = await native.send(this._page._session, 'DOM.resolveNode', { backendNodeId: r.backendNodeId });
      return new ElementHandle(parent, obj.object);
    }

    // The page-side helper, installed in the frame's current document when missing.
    async _contextId() {
      const end = Date.now() + this._page._timeout();
      while (this._context === null) {
        if (this._detached) throw fail('frame has been detached');
        if (Date.now() >= end) throw fail('waiting for the frame\'s execution context: timeout exceeded');
        await waitUntil(this._page, () => (this._context !== null || this._detached ? true : undefined), Math.max(1, end - Date.now()), 'waiting for the frame\'s execution context: timeout exceeded');
      }
      return this._context;
    }
    async _evaluate(expression, byValue) {
      for (let attempt = 0; ; attempt++) {
        const contextId = await this._contextId();
        try {
          const r = await native.send(this._page._session, 'Runtime.evaluate', { expression, contextId, returnByValue: byValue, awaitPromise: true, userGesture: true });
          if (r.exceptionDetails) throw evalError(r.exceptionDetails);
          return r.result;
        } catch (e) {
          if (!contextGone(e) || attempt > 50) throw e;
          if (this._context === contextId) this._context = null;
        }
      }
    }
    // Documents get the helper before their own scripts (addScriptToEvaluateOnNewDocument);
    // one made before that (the first blank page, document.write) gets it here, once.
    // Runtime.callFunctionOn in the frame's current document, again in the next one if
    // a navigation replaced it meanwhile.
    async _call(params) {
      for (let attempt = 0; ; attempt++) {
        const contextId = await this._contextId();
        try {
          const r = await native.send(this._page._session, 'Runtime.callFunctionOn', Object.assign({ executionContextId: contextId }, params));
          if (r.exceptionDetails) throw evalError(r.exceptionDetails);
          return r.result;
        } catch (e) {
          if (!contextGone(e) || attempt > 50) throw e;
          if (this._context === contextId) this._context = null;
        }
      }
    }
    async _ensureInjected() {
      const id = await this._contextId();
      if (this._injectedIn === id) return;
      const has = await this._evaluate('!!globalThis.__rk6', true);
      if (!remoteValue(has)) await this._evaluate(native.injected, true);
      this._injectedIn = id;
    }
    async _helper(body, byValue) {
      await this._ensureInjected();
      return this._evaluate(`(async () => { const r = globalThis.__rk6; ${body} })()`, byValue);
    }
    _handle(remote) {
      return remote.subtype === 'node' ? new ElementHandle(this, remote) : new JSHandle(this, remote);
    }
    // A viewport point of this frame in the page's coordinates.
    async _offset(p) {
      let x = p.x, y = p.y, f = this;
      while (f.parentFrame()) {
        const owner = await f.frameElement();
        const box = await owner._do('(el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el); return { x: r.left + parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft), y: r.top + parseFloat(s.borderTopWidth) + parseFloat(s.paddingTop) }; }');
        x += box.x; y += box.y;
        f = f.parentFrame();
      }
      return { x, y };
    }

    // Waits for the first match of `selector` in `state`; an ElementHandle (null when the
    // state is detached or hidden).
    async _waitForElement(selector, state, ms, root) {
      const end = Date.now() + ms;
      for (;;) {
        const left = Math.max(0, end - Date.now());
        let r;
        try {
          await this._ensureInjected();
          const call = root
            ? root._call('function (s, st, ms) { return globalThis.__rk6.waitFor(s, st, ms, this); }', [selector, state, Math.min(left, 1000)], false)
            : this._evaluate(`globalThis.__rk6.waitFor(${JSON.stringify(selector)}, ${JSON.stringify(state)}, ${Math.min(left, 1000)})`, false);
          r = await call;
        } catch (e) {
          if (!contextGone(e)) throw e;
          r = { type: 'undefined' };
        }
        if (r.type !== 'undefined') return r.subtype === 'null' ? null : new ElementHandle(this, r);
        if (Date.now() >= end) throw timedOut(ms);
      }
    }
    async waitForSelector(selector, opts, root) {
      const state = (opts && opts.state) || 'visible';
      if (!['attached', 'detached', 'visible', 'hidden'].includes(state)) throw fail(`waiting for selector ${q(selector)}: invalid state ${q(state)}`);
      try {
        return await this._waitForElement(selector, state, timeoutOf(opts, this._page._timeout()), root);
      } catch (e) {
        throw fail(`waiting for selector ${q(selector)}: ${messageOf(e)}`);
      }
    }
    async _queryHandle(selector, root) {
      await this._ensureInjected();
      const r = root
        ? await root._call('function (s) { return globalThis.__rk6.query(s, this); }', [selector], false)
        : await this._evaluate(`globalThis.__rk6.query(${JSON.stringify(selector)})`, false);
      return r.subtype === 'null' ? null : new ElementHandle(this, r);
    }
    async _queryAllHandles(selector, root) {
      await this._ensureInjected();
      const arr = root
        ? await root._call('function (s) { return globalThis.__rk6.queryAll(s, this); }', [selector], false)
        : await this._evaluate(`globalThis.__rk6.queryAll(${JSON.stringify(selector)})`, false);
      const props = await native.send(this._page._session, 'Runtime.getProperties', { objectId: arr.objectId, ownProperties: true });
      return props.result.filter((p) => /^\d+$/.test(p.name)).sort((a, b) => a.name - b.name).map((p) => new ElementHandle(this, p.value));
    }
    async $(selector) { return this._queryHandle(selector); }
    async $$(selector) { return this._queryAllHandles(selector); }

    async evaluate(fn, ...args) {
      if (typeof fn !== 'function') return remoteValue(await this._evaluate(String(fn), true));
      return remoteValue(await this._call({ functionDeclaration: fn.toString(), arguments: args.map(callArg), returnByValue: true, awaitPromise: true, userGesture: true }));
    }
    async evaluateHandle(fn, ...args) {
      if (typeof fn !== 'function') return this._handle(await this._evaluate(String(fn), false));
      return this._handle(await this._call({ functionDeclaration: fn.toString(), arguments: args.map(callArg), returnByValue: false, awaitPromise: true, userGesture: true }));
    }
    async waitForFunction(fn, opts, ...args) {
      const ms = timeoutOf(opts, this._page._timeout());
      const polling = (opts && opts.polling) || 'raf';
      const src = typeof fn === 'function' ? fn.toString() : `() => (${fn})`;
      const body = `async function (...a) {
        const f = (${src}); const end = Date.now() + ${ms};
        for (;;) { const v = await f(...a); if (v) return v;
          if (${ms} > 0 && Date.now() >= end) throw new Error('timed out after ${ms}ms');
          await new Promise((r) => ${polling === 'raf' ? 'requestAnimationFrame(r)' : `setTimeout(r, ${Number(polling) || 100})`}); } }`;
      try {
        return this._handle(await this._call({ functionDeclaration: body, arguments: args.map(callArg), returnByValue: false, awaitPromise: true }));
      } catch (e) {
        throw String(e).includes(`timed out after ${ms}ms`) ? fail(`waiting for function: timed out after ${ms}ms`) : e;
      }
    }
    async title() { return this.evaluate(() => document.title); }
    async content() {
      return this.evaluate(() => { let s = ''; if (document.doctype) s = new XMLSerializer().serializeToString(document.doctype); return s + (document.documentElement ? document.documentElement.outerHTML : ''); });
    }
    async setContent(html, opts) {
      const event = lifecycleName(opts && opts.waitUntil);
      await this.evaluate((h) => { document.open(); document.write(h); document.close(); }, String(html));
      await waitUntil(this._page, () => (this._events.has(event) ? true : undefined), timeoutOf(opts, this._page._navTimeout()), `setting content: timed out after ${timeoutOf(opts, this._page._navTimeout())}ms`);
    }
    async waitForLoadState(state, opts) {
      const name = lifecycleName(state);
      const ms = timeoutOf(opts, this._page._navTimeout());
      await waitUntil(this._page, () => (this._events.has(name) ? true : undefined), ms, `waiting for load state ${q(state || 'load')}: timed out after ${ms}ms`);
    }
    async goto(url, opts) {
      const name = lifecycleName(opts && opts.waitUntil);
      const ms = timeoutOf(opts, this._page._navTimeout());
      const params = { url: String(url), frameId: this._id };
      if (opts && opts.referer) params.referrer = opts.referer;
      const nav = await native.send(this._page._session, 'Page.navigate', params);
      // k6 1.1 resolves a navigation the network refused (the error page loads) rather
      // than rejecting it.
      if (!nav.loaderId) return null;
      await waitUntil(this._page, () => (this._loaderId === nav.loaderId && this._events.has(name) ? true : undefined), ms,
        `navigating frame to ${q(url)}: timed out after ${ms}ms`);
      if (nav.errorText) return null;
      return this._page._documentResponse(nav.loaderId);
    }
    async waitForNavigation(opts) {
      const name = lifecycleName(opts && opts.waitUntil);
      const ms = timeoutOf(opts, this._page._navTimeout());
      const from = this._loaderId, sameDoc = this._sameDocCount;
      await waitUntil(this._page, () => {
        if (this._sameDocCount !== sameDoc && urlMatches(opts && opts.url, this._url)) return true;
        return this._loaderId !== from && this._events.has(name) && urlMatches(opts && opts.url, this._url) ? true : undefined;
      }, ms, `waiting for navigation: timed out after ${ms}ms`);
      return this._loaderId !== from ? this._page._documentResponse(this._loaderId) : null;
    }
    async waitForURL(url, opts) {
      const name = lifecycleName(opts && opts.waitUntil);
      const ms = timeoutOf(opts, this._page._navTimeout());
      await waitUntil(this._page, () => (urlMatches(url, this._url) && this._events.has(name) ? true : undefined), ms, `waiting for URL ${q(url)}: timed out after ${ms}ms`);
    }
    async waitForTimeout(ms) { await delay(Number(ms) || 0); }

    locator(selector, opts) { return new Locator(this, withFilters(selector, opts)); }
    getByRole(role, o) { return this.locator(roleSelector(role, o)); }
    getByText(t, o) { return this.locator('internal:text=' + textBody(t, o)); }
    getByLabel(t, o) { return this.locator('internal:label=' + textBody(t, o)); }
    getByPlaceholder(t, o) { return this.locator(`internal:attr=[placeholder=${textBody(t, o)}]`); }
    getByAltText(t, o) { return this.locator(`internal:attr=[alt=${textBody(t, o)}]`); }
    getByTitle(t, o) { return this.locator(`internal:attr=[title=${textBody(t, o)}]`); }
    getByTestId(t) { return this.locator('internal:testid=' + JSON.stringify(String(t))); }
    frameLocator(selector) { return new FrameLocator(this, selector); }

    // Selector-taking shortcuts of Page and Frame.
    async click(s, o) { return this.locator(s).click(o); }
    async dblclick(s, o) { return this.locator(s).dblclick(o); }
    async fill(s, v, o) { return this.locator(s).fill(v, o); }
    async type(s, t, o) { return this.locator(s).type(t, o); }
    async press(s, k, o) { return this.locator(s).press(k, o); }
    async check(s, o) { return this.locator(s).check(o); }
    async uncheck(s, o) { return this.locator(s).uncheck(o); }
    async setChecked(s, v, o) { return this.locator(s).setChecked(v, o); }
    async selectOption(s, v, o) { return this.locator(s).selectOption(v, o); }
    async hover(s, o) { return this.locator(s).hover(o); }
    async tap(s, o) { return this.locator(s).tap(o); }
    async focus(s, o) { return this.locator(s).focus(o); }
    async dispatchEvent(s, t, i, o) { return this.locator(s).dispatchEvent(t, i, o); }
    async textContent(s, o) { return this.locator(s).textContent(o); }
    async innerText(s, o) { return this.locator(s).innerText(o); }
    async innerHTML(s, o) { return this.locator(s).innerHTML(o); }
    async inputValue(s, o) { return this.locator(s).inputValue(o); }
    async getAttribute(s, n, o) { return this.locator(s).getAttribute(n, o); }
    async isVisible(s) { return this.locator(s).isVisible(); }
    async isHidden(s) { return this.locator(s).isHidden(); }
    async isEnabled(s, o) { return this.locator(s).isEnabled(o); }
    async isDisabled(s, o) { return this.locator(s).isDisabled(o); }
    async isChecked(s, o) { return this.locator(s).isChecked(o); }
    async isEditable(s, o) { return this.locator(s).isEditable(o); }
  }

  function textBody(t, o) {
    if (t instanceof RegExp) return `/${t.source}/${t.flags}`;
    return JSON.stringify(String(t)) + (o && o.exact ? 's' : 'i');
  }
  function roleSelector(role, o) {
    let s = 'internal:role=' + role;
    o = o || {};
    if (o.name !== undefined) s += `[name=${JSON.stringify(o.name instanceof RegExp ? o.name.source : String(o.name))}]`;
    if (o.exact) s += '[exact=true]';
    for (const k of ['checked', 'disabled', 'level', 'includeHidden', 'pressed', 'selected', 'expanded']) if (o[k] !== undefined) s += `[${k}=${o[k]}]`;
    return s;
  }
  function withFilters(selector, o) {
    let s = selector;
    if (o && o.hasText !== undefined) s += ' >> internal:has-text=' + textBody(o.hasText, {});
    if (o && o.hasNotText !== undefined) s += ' >> internal:has-not-text=' + textBody(o.hasNotText, {});
    return s;
  }

  // --- Locator -------------------------------------------------------------------------
  class Locator {
    constructor(frame, selector) { this._frame = frame; this._selector = selector; }
    _ms(o) { return timeoutOf(o, this._frame._page._timeout()); }
    async _element(o, state) { return this._frame._waitForElement(this._selector, state || 'attached', this._ms(o)); }
    // Runs `act` on the first match once it is in `state`, again on a fresh match if the
    // element was replaced meanwhile; failures carry k6's `verb` ("clicking on \"#go\"").
    async _act(verb, o, state, act) {
      const ms = this._ms(o);
      const end = Date.now() + ms;
      try {
        for (;;) {
          const el = await this._frame._waitForElement(this._selector, state, Math.max(1, end - Date.now()));
          try {
            return await act(el, Math.max(1, end - Date.now()));
          } catch (e) {
            const m = protocolError(e);
            if (Date.now() >= end || !(/not attached|Cannot find context|Execution context was destroyed|No node with given id|Could not find node/.test(m))) throw e;
          } finally {
            el.dispose();
          }
        }
      } catch (e) {
        const m = messageOf(e);
        throw fail(`${verb}: ${/^timed out after/.test(m) ? `timed out after ${ms}ms` : m}`);
      }
    }
    _with(o, state, act) { return this._act(`waiting for ${q(this._selector)}`, o, state, act); }
    locator(selector, o) { return new Locator(this._frame, withFilters(`${this._selector} >> ${selector}`, o)); }
    nth(i) { return new Locator(this._frame, `${this._selector} >> nth=${i}`); }
    first() { return this.nth(0); }
    last() { return this.nth(-1); }
    filter(o) { return new Locator(this._frame, withFilters(this._selector, o)); }
    getByRole(r, o) { return this.locator(roleSelector(r, o)); }
    getByText(t, o) { return this.locator('internal:text=' + textBody(t, o)); }
    getByLabel(t, o) { return this.locator('internal:label=' + textBody(t, o)); }
    getByPlaceholder(t, o) { return this.locator(`internal:attr=[placeholder=${textBody(t, o)}]`); }
    getByAltText(t, o) { return this.locator(`internal:attr=[alt=${textBody(t, o)}]`); }
    getByTitle(t, o) { return this.locator(`internal:attr=[title=${textBody(t, o)}]`); }
    getByTestId(t) { return this.locator('internal:testid=' + JSON.stringify(String(t))); }
    frameLocator(s) { return new FrameLocator(this._frame, `${this._selector} >> ${s}`); }
    async count() { await this._frame._ensureInjected(); return remoteValue(await this._frame._evaluate(`globalThis.__rk6.count(${JSON.stringify(this._selector)})`, true)); }
    async all() { const n = await this.count(); const out = []; for (let i = 0; i < n; i++) out.push(this.nth(i)); return out; }
    async click(o) { return this._act(`clicking on ${q(this._selector)}`, o, 'attached', (el, ms) => el.click(Object.assign({}, o, { timeout: ms }))); }
    async dblclick(o) { return this._act(`double clicking on ${q(this._selector)}`, o, 'attached', (el, ms) => el.dblclick(Object.assign({}, o, { timeout: ms }))); }
    async hover(o) { return this._act(`hovering on ${q(this._selector)}`, o, 'attached', (el, ms) => el.hover(Object.assign({}, o, { timeout: ms }))); }
    async tap(o) { return this._act(`tapping on ${q(this._selector)}`, o, 'attached', (el, ms) => el.tap(Object.assign({}, o, { timeout: ms }))); }
    async focus(o) { return this._act(`focusing on ${q(this._selector)}`, o, 'attached', (el) => el.focus()); }
    async blur(o) { return this._act(`bluring on ${q(this._selector)}`, o, 'attached', (el) => el.blur()); }
    async fill(v, o) { return this._act(`filling ${q(this._selector)} with ${q(v)}`, o, 'visible', (el) => el.fill(v, o)); }
    async clear(o) { return this._act(`clearing ${q(this._selector)}`, o, 'visible', (el) => el.fill('', o)); }
    async type(t, o) { return this._act(`typing ${q(t)} in ${q(this._selector)}`, o, 'visible', (el) => el.type(t, o)); }
    async pressSequentially(t, o) { return this._act(`pressing sequentially ${q(t)} on ${q(this._selector)}`, o, 'visible', (el) => el.type(t, o)); }
    async press(k, o) { return this._act(`pressing ${q(k)} on ${q(this._selector)}`, o, 'attached', (el) => el.press(k, o)); }
    async check(o) { return this._act(`checking ${q(this._selector)}`, o, 'attached', (el, ms) => el.check(Object.assign({}, o, { timeout: ms }))); }
    async uncheck(o) { return this._act(`unchecking ${q(this._selector)}`, o, 'attached', (el, ms) => el.uncheck(Object.assign({}, o, { timeout: ms }))); }
    async setChecked(v, o) { return this._act(`setting checked ${q(this._selector)}`, o, 'attached', (el, ms) => el.setChecked(v, Object.assign({}, o, { timeout: ms }))); }
    async selectOption(v, o) { return this._act(`selecting option on ${q(this._selector)}`, o, 'visible', (el) => el.selectOption(v)); }
    async dispatchEvent(t, i, o) { return this._act(`dispatching event on ${q(this._selector)}`, o, 'attached', (el) => el.dispatchEvent(t, i)); }
    async textContent(o) { return this._act(`getting text content of ${q(this._selector)}`, o, 'attached', (el) => el.textContent()); }
    async innerText(o) { return this._act(`getting inner text of ${q(this._selector)}`, o, 'attached', (el) => el.innerText()); }
    async innerHTML(o) { return this._act(`getting inner HTML of ${q(this._selector)}`, o, 'attached', (el) => el.innerHTML()); }
    async inputValue(o) { return this._act(`getting input value of ${q(this._selector)}`, o, 'attached', (el) => el.inputValue()); }
    async getAttribute(n, o) { return this._act(`getting attribute ${q(n)} of ${q(this._selector)}`, o, 'attached', (el) => el.getAttribute(n)); }
    async isEnabled(o) { return this._act(`checking is ${q(this._selector)} enabled`, o, 'attached', (el) => el.isEnabled()); }
    async isDisabled(o) { return this._act(`checking is ${q(this._selector)} disabled`, o, 'attached', (el) => el.isDisabled()); }
    async isEditable(o) { return this._act(`checking is ${q(this._selector)} editable`, o, 'attached', (el) => el.isEditable()); }
    async isChecked(o) { return this._act(`checking is ${q(this._selector)} checked`, o, 'attached', (el) => el.isChecked()); }
    async boundingBox(o) { return this._act(`getting bounding box of ${q(this._selector)}`, o, 'attached', (el) => el.boundingBox()); }
    async isVisible() {
      await this._frame._ensureInjected();
      return remoteValue(await this._frame._evaluate(`(() => { const e = globalThis.__rk6.query(${JSON.stringify(this._selector)}); return !!e && globalThis.__rk6.isVisible(e); })()`, true));
    }
    async isHidden() { return !(await this.isVisible()); }
    async waitFor(o) {
      const state = (o && o.state) || 'visible';
      const ms = this._ms(o);
      try {
        const el = await this._frame._waitForElement(this._selector, state, ms);
        if (el) el.dispose();
      } catch (e) {
        throw fail(`waiting for ${q(this._selector)}: ${messageOf(e)}`);
      }
    }
    async evaluate(fn, arg) { return this._with({}, 'attached', (el) => el.evaluate(fn, arg)); }
    async evaluateHandle(fn, arg) { const el = await this._element({}); return el.evaluateHandle(fn, arg); }
    async elementHandle(o) { return this._element(o); }
    async elementHandles() { return this._frame._queryAllHandles(this._selector); }
    async screenshot(o) { return this._act(`taking screenshot of ${q(this._selector)}`, o, 'visible', (el) => el.screenshot(o)); }
    async scrollIntoViewIfNeeded(o) { return this._with(o, 'attached', (el) => el.scrollIntoViewIfNeeded()); }
    async selectText(o) { return this._with(o, 'attached', (el) => el.selectText()); }
    async setInputFiles() { throw fail('setInputFiles is not supported by rk6 yet'); }
    contentFrame() { return new FrameLocator(this._frame, this._selector); }
  }

  // A locator inside an iframe found by `selector`: resolved at each action.
  class FrameLocator {
    constructor(frame, selector) { this._frame = frame; this._selector = selector; }
    _resolve() {
      const parent = this._frame, sel = this._selector;
      const proxy = new Locator(parent, '');
      return { parent, sel, proxy };
    }
    locator(selector) { return new FrameChildLocator(this, selector); }
    getByRole(r, o) { return this.locator(roleSelector(r, o)); }
    getByText(t, o) { return this.locator('internal:text=' + textBody(t, o)); }
    getByLabel(t, o) { return this.locator('internal:label=' + textBody(t, o)); }
    getByPlaceholder(t, o) { return this.locator(`internal:attr=[placeholder=${textBody(t, o)}]`); }
    getByTestId(t) { return this.locator('internal:testid=' + JSON.stringify(String(t))); }
    async _childFrame(ms) {
      const owner = await this._frame._waitForElement(this._selector, 'attached', ms);
      const end = Date.now() + ms;
      for (;;) {
        const f = await owner.contentFrame();
        if (f && f._context !== null) return f;
        if (Date.now() >= end) throw fail(`waiting for frame ${q(this._selector)}: timed out after ${ms}ms`);
        await delay(20);
      }
    }
  }
  class FrameChildLocator {
    constructor(fl, selector) { this._fl = fl; this._sel = selector; }
  }
  for (const name of Object.getOwnPropertyNames(Locator.prototype)) {
    if (name === 'constructor' || name.startsWith('_')) continue;
    FrameChildLocator.prototype[name] = async function (...args) {
      const ms = this._fl._frame._page._timeout();
      const f = await this._fl._childFrame(ms);
      const l = new Locator(f, this._sel);
      return l[name](...args);
    };
  }

  // --- Input devices ------------------------------------------------------------------------
  const KEYS = {
    Enter: { code: 'Enter', keyCode: 13, text: '\r' }, Tab: { code: 'Tab', keyCode: 9 }, Backspace: { code: 'Backspace', keyCode: 8 },
    Delete: { code: 'Delete', keyCode: 46 }, Escape: { code: 'Escape', keyCode: 27 }, ' ': { code: 'Space', keyCode: 32, text: ' ' },
    ArrowUp: { code: 'ArrowUp', keyCode: 38 }, ArrowDown: { code: 'ArrowDown', keyCode: 40 }, ArrowLeft: { code: 'ArrowLeft', keyCode: 37 }, ArrowRight: { code: 'ArrowRight', keyCode: 39 },
    Home: { code: 'Home', keyCode: 36 }, End: { code: 'End', keyCode: 35 }, PageUp: { code: 'PageUp', keyCode: 33 }, PageDown: { code: 'PageDown', keyCode: 34 },
    Shift: { code: 'ShiftLeft', keyCode: 16 }, Control: { code: 'ControlLeft', keyCode: 17 }, Alt: { code: 'AltLeft', keyCode: 18 }, Meta: { code: 'MetaLeft', keyCode: 91 },
    Insert: { code: 'Insert', keyCode: 45 },
  };
  const MODIFIER_BITS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
  function keyDef(key) {
    if (key === 'Space') key = ' ';
    if (key === 'ControlOrMeta') key = 'Control';
    if (KEYS[key]) return Object.assign({ key }, KEYS[key]);
    if (/^F\d{1,2}$/.test(key)) return { key, code: key, keyCode: 111 + Number(key.slice(1)) };
    if (key.length === 1) {
      const up = key.toUpperCase();
      const code = /[a-z]/i.test(key) ? 'Key' + up : /\d/.test(key) ? 'Digit' + key : '';
      return { key, code, keyCode: up.charCodeAt(0), text: key };
    }
    throw fail(`unknown key: "${key}"`);
  }

  class Keyboard {
    constructor(page) { this._page = page; this._mods = 0; }
    async down(key) {
      const d = keyDef(key);
      if (MODIFIER_BITS[d.key]) this._mods |= MODIFIER_BITS[d.key];
      const text = this._mods & ~8 ? undefined : d.text;
      await native.send(this._page._session, 'Input.dispatchKeyEvent', {
        type: text ? 'keyDown' : 'rawKeyDown', modifiers: this._mods, key: d.key, code: d.code,
        windowsVirtualKeyCode: d.keyCode, text, unmodifiedText: text,
        commands: d.key === 'a' && this._mods & 2 ? ['selectAll'] : undefined,
      });
    }
    async up(key) {
      const d = keyDef(key);
      if (MODIFIER_BITS[d.key]) this._mods &= ~MODIFIER_BITS[d.key];
      await native.send(this._page._session, 'Input.dispatchKeyEvent', { type: 'keyUp', modifiers: this._mods, key: d.key, code: d.code, windowsVirtualKeyCode: d.keyCode });
    }
    async press(key, opts) {
      const parts = String(key).split('+').filter((p, i, a) => p !== '' || i === a.length - 1);
      const keys = parts.map((p) => (p === '' ? '+' : p));
      for (const k of keys) await this.down(k);
      if (opts && opts.delay) await delay(opts.delay);
      for (const k of keys.reverse()) await this.up(k);
    }
    async type(text, opts) {
      for (const ch of String(text)) {
        let known = true;
        try { keyDef(ch); } catch (e) { known = false; }
        if (known) await this.press(ch); else await this.insertText(ch);
        if (opts && opts.delay) await delay(opts.delay);
      }
    }
    async insertText(text) { await native.send(this._page._session, 'Input.insertText', { text: String(text) }); }
  }

  class Mouse {
    constructor(page) { this._page = page; this._x = 0; this._y = 0; this._button = 'none'; }
    async _send(type, extra) {
      await native.send(this._page._session, 'Input.dispatchMouseEvent', Object.assign({ type, x: this._x, y: this._y, modifiers: this._page.keyboard._mods, button: this._button }, extra));
    }
    async move(x, y, opts) {
      const steps = (opts && opts.steps) || 1;
      const fx = this._x, fy = this._y;
      for (let i = 1; i <= steps; i++) {
        this._x = fx + ((x - fx) * i) / steps; this._y = fy + ((y - fy) * i) / steps;
        await this._send('mouseMoved', {});
      }
    }
    async down(opts) { this._button = (opts && opts.button) || 'left'; await this._send('mousePressed', { clickCount: (opts && opts.clickCount) || 1 }); }
    async up(opts) { const b = (opts && opts.button) || 'left'; await this._send('mouseReleased', { button: b, clickCount: (opts && opts.clickCount) || 1 }); this._button = 'none'; }
    async click(x, y, opts) {
      await this.move(x, y);
      const n = (opts && opts.clickCount) || 1;
      for (let i = 1; i <= n; i++) {
        await this.down(Object.assign({}, opts, { clickCount: i }));
        if (opts && opts.delay) await delay(opts.delay);
        await this.up(Object.assign({}, opts, { clickCount: i }));
      }
    }
    async dblclick(x, y, opts) { await this.click(x, y, Object.assign({}, opts, { clickCount: 2 })); }
    async wheel(dx, dy) { await this._send('mouseWheel', { deltaX: dx, deltaY: dy }); }
  }

  class Touchscreen {
    constructor(page) { this._page = page; }
    async tap(x, y) {
      await native.send(this._page._session, 'Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }], modifiers: 0 });
      await native.send(this._page._session, 'Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [], modifiers: 0 });
    }
  }

  class ConsoleMessage {
    constructor(page, p) { this._page = page; this._p = p; }
    type() { return this._p.type; }
    text() {
      return this._p.args.map((a) => (a.value !== undefined ? (typeof a.value === 'object' ? JSON.stringify(a.value) : String(a.value)) : a.unserializableValue || a.description || '')).join(' ');
    }
    args() { return this._p.args.map((a) => this._page.mainFrame()._handle(a)); }
    page() { return this._page; }
  }

  // --- Page --------------------------------------------------------------------------------
  const RESOURCE_FAILED = (s) => s === 0 || s >= 400;
  class Page {
    constructor(context, targetId, session) {
      this._context = context; this._targetId = targetId; this._session = session;
      this._frames = new Map(); this._main = null; this._closed = false; this._waiters = new Set();
      this._requests = new Map(); this._handlers = new Map(); this._routes = [];
      this._viewport = Object.assign({ width: 1280, height: 720 }, context._opts.viewport || {});
      this._defaultTimeout = null; this._defaultNavTimeout = null;
      this.keyboard = new Keyboard(this); this.mouse = new Mouse(this); this.touchscreen = new Touchscreen(this);
    }
    _timeout() { return this._defaultTimeout ?? this._context._timeout; }
    _navTimeout() { return this._defaultNavTimeout ?? this._context._navTimeout ?? this._timeout(); }
    async _init() {
      const s = this._session, send = (m, p) => native.send(s, m, p || {});
      const o = this._context._opts;
      const tree = await send('Page.getFrameTree');
      const add = (t, parent) => { const f = this._frame(t.frame.id, parent); f._url = t.frame.url; f._name = t.frame.name || ''; f._loaderId = t.frame.loaderId; for (const c of t.childFrames || []) add(c, t.frame.id); };
      add(tree.frameTree, null);
      this._main = this._frames.get(tree.frameTree.frame.id);
      this._main._events = new Set(['init', 'DOMContentLoaded', 'load', 'networkAlmostIdle', 'networkIdle']);
      const calls = [
        send('Page.enable'), send('Page.setLifecycleEventsEnabled', { enabled: true }), send('Runtime.enable'), send('Network.enable'),
        send('Runtime.addBinding', { name: '__rk6Vital' }),
        send('Page.addScriptToEvaluateOnNewDocument', { source: native.vitals }),
        send('Page.addScriptToEvaluateOnNewDocument', { source: native.injected }),
        send('Emulation.setDeviceMetricsOverride', { width: this._viewport.width, height: this._viewport.height, deviceScaleFactor: o.deviceScaleFactor || 1, mobile: !!o.isMobile }),
      ];
      for (const src of this._context._initScripts) calls.push(send('Page.addScriptToEvaluateOnNewDocument', { source: src }));
      if (o.userAgent || o.locale) calls.push(send('Emulation.setUserAgentOverride', { userAgent: o.userAgent || this._context._browser.userAgent(), acceptLanguage: o.locale }));
      if (o.locale) calls.push(send('Emulation.setLocaleOverride', { locale: o.locale }));
      if (o.timezoneID) calls.push(send('Emulation.setTimezoneOverride', { timezoneId: o.timezoneID }));
      if (o.colorScheme || o.reducedMotion) calls.push(this.emulateMedia({ colorScheme: o.colorScheme, reducedMotion: o.reducedMotion }));
      if (o.hasTouch) calls.push(send('Emulation.setTouchEmulationEnabled', { enabled: true }));
      if (o.javaScriptEnabled === false) calls.push(send('Emulation.setScriptExecutionDisabled', { value: true }));
      if (o.bypassCSP) calls.push(send('Page.setBypassCSP', { enabled: true }));
      if (o.ignoreHTTPSErrors) calls.push(send('Security.setIgnoreCertificateErrors', { ignore: true }));
      if (Object.keys(this._context._headers).length) calls.push(send('Network.setExtraHTTPHeaders', { headers: this._context._headers }));
      if (this._context._geo) calls.push(send('Emulation.setGeolocationOverride', this._context._geo));
      if (this._context._offline) calls.push(send('Network.emulateNetworkConditions', { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 }));
      if (o.httpCredentials) calls.push(send('Network.setExtraHTTPHeaders', { headers: Object.assign({}, this._context._headers, { Authorization: 'Basic ' + native.encode64(`${o.httpCredentials.username}:${o.httpCredentials.password}`) }) }));
      await Promise.all(calls);
      // The blank page exists already: give it the reporter now.
      await send('Runtime.evaluate', { expression: native.vitals }).catch(() => {});
    }
    _frame(id, parentId) {
      let f = this._frames.get(id);
      if (!f) { f = new Frame(this, id, parentId); this._frames.set(id, f); }
      return f;
    }
    _emitHandlers(name, arg) {
      const hs = this._handlers.get(name);
      if (hs) for (const h of [...hs]) { try { h(arg); } catch (e) { /* a handler's error does not stop the page */ } }
    }
    // A sample's tags: `url` and `name` are the URL unless a page.on('metric')
    // handler's metric.tag() grouped it under another name; k6 then puts that
    // name in both, so the dynamic URLs stop making series.
    _tags(url, extra, method) {
      const hs = this._handlers.get('metric');
      let name = url;
      if (hs && hs.length) {
        const metric = {
          tag: (o) => {
            if (!o || typeof o.name !== 'string' || !o.name) throw fail('name is required');
            for (const m of o.matches || []) {
              if (m.method !== undefined && method !== undefined && String(m.method).toUpperCase() !== method) continue;
              if (urlMatches(m.url, url)) { name = o.name; return; }
            }
          },
        };
        for (const h of [...hs]) h(metric);
      }
      return Object.assign({ url: name, name }, extra);
    }
    // Protocol events of this page's session, in order.
    _event(method, p) {
      switch (method) {
        case 'Page.frameAttached': this._frame(p.frameId, p.parentFrameId); break;
        case 'Page.frameNavigated': {
          const f = this._frame(p.frame.id, p.frame.parentId);
          f._url = p.frame.url + (p.frame.urlFragment || ''); f._name = p.frame.name || '';
          break;
        }
        case 'Page.navigatedWithinDocument': { const f = this._frames.get(p.frameId); if (f) { f._url = p.url; f._sameDocCount = (f._sameDocCount || 0) + 1; } break; }
        case 'Page.frameDetached': { const f = this._frames.get(p.frameId); if (f && p.reason !== 'swap') { f._detached = true; this._frames.delete(p.frameId); } break; }
        case 'Page.lifecycleEvent': {
          const f = this._frames.get(p.frameId);
          if (!f) break;
          if (p.name === 'init') { f._loaderId = p.loaderId; f._events = new Set(); }
          if (p.loaderId === f._loaderId) f._events.add(p.name);
          break;
        }
        case 'Runtime.executionContextCreated': {
          const aux = p.context.auxData || {};
          const f = this._frames.get(aux.frameId);
          if (f && aux.isDefault) f._context = p.context.id;
          break;
        }
        case 'Runtime.executionContextDestroyed': for (const f of this._frames.values()) if (f._context === p.executionContextId) f._context = null; break;
        case 'Runtime.executionContextsCleared': for (const f of this._frames.values()) f._context = null; break;
        case 'Runtime.bindingCalled': if (p.name === '__rk6Vital') this._vital(p.payload); break;
        case 'Runtime.consoleAPICalled': this._emitHandlers('console', new ConsoleMessage(this, p)); break;
        case 'Network.requestWillBeSent': this._request(p); break;
        case 'Network.responseReceived': {
          const q = this._requests.get(p.requestId);
          if (q) { q.response = new Response(this, q.request, p.response); q.request._response = q.response; q.resourceType = p.type; }
          break;
        }
        case 'Network.loadingFinished': this._finished(p); break;
        case 'Network.loadingFailed': {
          const q = this._requests.get(p.requestId);
          if (q) { q.failed = p.errorText; this._emitHandlers('requestfailed', q.request); }
          break;
        }
        case 'Inspector.targetCrashed': this._crashed = true; for (const w of [...this._waiters]) w.reject(fail('Target crashed')); break;
        case 'Fetch.requestPaused': this._paused(p); break;
        default: break;
      }
      this._emitHandlers('_event', { method, params: p });
      for (const w of [...this._waiters]) {
        let v;
        try { v = w.check(); } catch (e) { w.reject(e); continue; }
        if (v !== undefined) w.resolve(v);
      }
    }
    _request(p) {
      const prev = this._requests.get(p.requestId);
      if (prev && p.redirectResponse) {
        prev.response = new Response(this, prev.request, p.redirectResponse);
        prev.request._response = prev.response;
        this._emitRequestMetrics(prev, p.redirectResponse, p.timestamp, p.redirectResponse.encodedDataLength || 0);
      }
      const q = { request: new Request(this, p), started: p.timestamp, response: null, resourceType: p.type };
      if (prev && p.redirectResponse) { q.request._redirectedFrom = prev.request; prev.request._redirectedTo = q.request; }
      this._requests.set(p.requestId, q);
      const r = p.request;
      let size = `${r.method} ${r.url} HTTP/1.1\r\n`.length + 2;
      for (const [k, v] of Object.entries(r.headers || {})) size += k.length + String(v).length + 4;
      if (r.postData) size += r.postData.length;
      native.emit('browser_data_sent', size, this._tags(r.url, { method: r.method, resource_type: p.type || 'Other' }, r.method));
      this._emitHandlers('request', q.request);
    }
    _emitRequestMetrics(q, resp, end, received) {
      const r = q.request._p.request;
      const tags = this._tags(r.url, {
        method: r.method, resource_type: q.resourceType || 'Other', status: String(resp.status),
        proto: resp.protocol || '', from_cache: String(!!resp.fromDiskCache), from_prefetch_cache: String(!!resp.fromPrefetchCache),
        from_service_worker: String(!!resp.fromServiceWorker),
      }, r.method);
      native.emit('browser_http_req_duration', Math.max(0, (end - q.started) * 1000), tags);
      native.emit('browser_data_received', received, tags);
      native.emit('browser_http_req_failed', RESOURCE_FAILED(resp.status) ? 1 : 0, tags);
    }
    _finished(p) {
      const q = this._requests.get(p.requestId);
      if (!q) return;
      if (q.response) {
        this._emitRequestMetrics(q, q.response._r, p.timestamp, p.encodedDataLength || 0);
        this._emitHandlers('response', q.response);
      }
      this._emitHandlers('requestfinished', q.request);
      // Documents are kept for goto()'s and waitForNavigation()'s answers.
      if (q.request._p.type !== 'Document') this._requests.delete(p.requestId);
    }
    _documentResponse(loaderId) {
      const q = this._requests.get(loaderId);
      return q ? q.response : null;
    }
    _vital(payload) {
      let m;
      try { m = JSON.parse(payload); } catch (e) { return; }
      const name = String(m.name).toLowerCase();
      if (!['cls', 'fcp', 'fid', 'inp', 'lcp', 'ttfb'].includes(name)) return;
      native.emit('browser_web_vital_' + name, Number(m.value), this._tags(m.url, { rating: m.rating }));
    }
    async _flushVitals() {
      if (this._closed || this._crashed) return;
      await native.send(this._session, 'Runtime.evaluate', { expression: 'globalThis.__rk6FlushVitals && globalThis.__rk6FlushVitals()' }).catch(() => {});
    }

    // k6's Page API.
    context() { return this._context; }
    mainFrame() { return this._main; }
    frames() { return [...this._frames.values()]; }
    frame(o) {
      const name = typeof o === 'string' ? o : o && o.name;
      const url = typeof o === 'object' && o ? o.url : undefined;
      return this.frames().find((f) => (name !== undefined ? f.name() === name : urlMatches(url, f.url()))) || null;
    }
    url() { return this._main.url(); }
    isClosed() { return this._closed; }
    viewportSize() { return { width: this._viewport.width, height: this._viewport.height }; }
    async setViewportSize(v) {
      this._viewport = { width: v.width, height: v.height };
      await native.send(this._session, 'Emulation.setDeviceMetricsOverride', { width: v.width, height: v.height, deviceScaleFactor: this._context._opts.deviceScaleFactor || 1, mobile: !!this._context._opts.isMobile });
    }
    setDefaultTimeout(ms) { this._defaultTimeout = Number(ms); }
    setDefaultNavigationTimeout(ms) { this._defaultNavTimeout = Number(ms); }
    async setExtraHTTPHeaders(h) { await native.send(this._session, 'Network.setExtraHTTPHeaders', { headers: h }); }
    async emulateMedia(o) {
      o = o || {};
      const features = [];
      if (o.colorScheme) features.push({ name: 'prefers-color-scheme', value: o.colorScheme });
      if (o.reducedMotion) features.push({ name: 'prefers-reduced-motion', value: o.reducedMotion });
      await native.send(this._session, 'Emulation.setEmulatedMedia', { media: o.media || '', features });
    }
    async emulateVisionDeficiency(type) { await native.send(this._session, 'Emulation.setEmulatedVisionDeficiency', { type }); }
    async throttleCPU(o) { await native.send(this._session, 'Emulation.setCPUThrottlingRate', { rate: (o && o.rate) || 1 }); }
    async throttleNetwork(o) {
      await native.send(this._session, 'Network.emulateNetworkConditions', { offline: false, latency: o.latency || 0, downloadThroughput: o.download === undefined ? -1 : o.download, uploadThroughput: o.upload === undefined ? -1 : o.upload });
    }
    async bringToFront() { await native.send(this._session, 'Page.bringToFront'); }
    on(event, handler) {
      if (typeof handler !== 'function') throw fail(`the handler of "${event}" must be a function`);
      if (!this._handlers.has(event)) this._handlers.set(event, []);
      this._handlers.get(event).push(handler);
    }
    off(event, handler) { const hs = this._handlers.get(event); if (hs) this._handlers.set(event, hs.filter((h) => h !== handler)); }
    async waitForEvent(event, o) {
      const predicate = typeof o === 'function' ? o : o && o.predicate;
      const ms = timeoutOf(typeof o === 'object' ? o : undefined, this._timeout());
      let got;
      const h = (arg) => { if (got === undefined && (!predicate || predicate(arg))) got = arg; };
      this.on(event, h);
      try { return await waitUntil(this, () => got, ms, `waiting for event ${q(event)}: timed out after ${ms}ms`); } finally { this.off(event, h); }
    }
    async waitForResponse(url, o) {
      return this.waitForEvent('response', { predicate: (r) => (typeof url === 'function' ? url(r) : urlMatches(url, r.url())), timeout: timeoutOf(o, this._timeout()) });
    }
    async waitForRequest(url, o) {
      return this.waitForEvent('request', { predicate: (r) => (typeof url === 'function' ? url(r) : urlMatches(url, r.url())), timeout: timeoutOf(o, this._timeout()) });
    }
    async goto(url, o) { return this._main.goto(url, o); }
    async reload(o) {
      const name = lifecycleName(o && o.waitUntil);
      const from = this._main._loaderId;
      await native.send(this._session, 'Page.reload', {});
      await waitUntil(this, () => (this._main._loaderId !== from && this._main._events.has(name) ? true : undefined), timeoutOf(o, this._navTimeout()), `reloading page: timed out after ${timeoutOf(o, this._navTimeout())}ms`);
      return this._documentResponse(this._main._loaderId);
    }
    async _history(delta, o) {
      const h = await native.send(this._session, 'Page.getNavigationHistory');
      const entry = h.entries[h.currentIndex + delta];
      if (!entry) return null;
      const name = lifecycleName(o && o.waitUntil);
      const from = this._main._loaderId, same = this._main._sameDocCount;
      await native.send(this._session, 'Page.navigateToHistoryEntry', { entryId: entry.id });
      await waitUntil(this, () => (this._main._sameDocCount !== same || (this._main._loaderId !== from && this._main._events.has(name)) ? true : undefined), timeoutOf(o, this._navTimeout()), `navigating in history: timed out after ${timeoutOf(o, this._navTimeout())}ms`);
      return this._main._loaderId !== from ? this._documentResponse(this._main._loaderId) : null;
    }
    async goBack(o) { return this._history(-1, o); }
    async goForward(o) { return this._history(1, o); }
    async screenshot(o) {
      o = o || {};
      const type = o.type || (o.path && /\.jpe?g$/i.test(o.path) ? 'jpeg' : 'png');
      if (type !== 'png' && type !== 'jpeg') throw fail(`unsupported screenshot type "${type}"`);
      const params = { format: type, captureBeyondViewport: !!o.fullPage };
      if (type === 'jpeg' && o.quality !== undefined) params.quality = o.quality;
      if (o.omitBackground) await native.send(this._session, 'Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } });
      if (o.clip) params.clip = Object.assign({ scale: 1 }, o.clip);
      else if (o.fullPage) {
        const m = await native.send(this._session, 'Page.getLayoutMetrics');
        const size = m.cssContentSize || m.contentSize;
        params.clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.ceil(size.height), scale: 1 };
      }
      const r = await native.send(this._session, 'Page.captureScreenshot', params);
      if (o.omitBackground) await native.send(this._session, 'Emulation.setDefaultBackgroundColorOverride', {});
      if (o.path) native.writeFile(String(o.path), r.data);
      return native.decode64(r.data);
    }
    async close(o) {
      if (this._closed) return;
      await this._flushVitals();
      this._closed = true;
      await native.send(null, 'Target.closeTarget', { targetId: this._targetId }).catch(() => {});
      sessions.delete(this._session);
      this._context._pages = this._context._pages.filter((p) => p !== this);
      for (const w of [...this._waiters]) w.reject(fail('page closed'));
      this._emitHandlers('close', this);
    }

    // page.route: requests matching `url` are paused and handed to `handler`.
    async route(url, handler) {
      this._routes.push({ url, handler });
      if (this._routes.length === 1) await native.send(this._session, 'Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
    }
    async unroute(url, handler) {
      this._routes = this._routes.filter((r) => !(r.url === url && (!handler || r.handler === handler)));
      if (!this._routes.length) await native.send(this._session, 'Fetch.disable');
    }
    async unrouteAll() { this._routes = []; await native.send(this._session, 'Fetch.disable'); }
    _paused(p) {
      const r = [...this._routes].reverse().find((x) => urlMatches(x.url, p.request.url));
      const send = (m, q) => native.send(this._session, m, Object.assign({ requestId: p.requestId }, q)).catch(() => {});
      if (!r) { send('Fetch.continueRequest', {}); return; }
      const route = {
        request: () => new Request(this, { request: p.request, type: p.resourceType, frameId: p.frameId, requestId: p.networkId || p.requestId }),
        abort: async (code) => { await send('Fetch.failRequest', { errorReason: abortReason(code) }); },
        continue: async (o) => {
          o = o || {};
          const q = {};
          if (o.url) q.url = o.url;
          if (o.method) q.method = o.method;
          if (o.postData !== undefined) q.postData = native.encode64(String(o.postData));
          if (o.headers) q.headers = Object.entries(o.headers).map(([name, value]) => ({ name, value: String(value) }));
          await send('Fetch.continueRequest', q);
        },
        fulfill: async (o) => {
          o = o || {};
          const headers = Object.entries(o.headers || {}).map(([name, value]) => ({ name, value: String(value) }));
          if (o.contentType) headers.push({ name: 'Content-Type', value: o.contentType });
          const body = o.body === undefined ? '' : o.body;
          await send('Fetch.fulfillRequest', { responseCode: o.status || 200, responseHeaders: headers, body: native.encode64(body) });
        },
      };
      // As k6 documents it: a routed request stalls until its handler continues,
      // fulfills or aborts it.
      Promise.resolve().then(() => r.handler(route, route.request())).catch(() => {});
    }
  }
  function abortReason(code) {
    const map = { aborted: 'Aborted', accessdenied: 'AccessDenied', addressunreachable: 'AddressUnreachable', blockedbyclient: 'BlockedByClient', blockedbyresponse: 'BlockedByResponse', connectionaborted: 'ConnectionAborted', connectionclosed: 'ConnectionClosed', connectionfailed: 'ConnectionFailed', connectionrefused: 'ConnectionRefused', connectionreset: 'ConnectionReset', internetdisconnected: 'InternetDisconnected', namenotresolved: 'NameNotResolved', timedout: 'TimedOut', failed: 'Failed' };
    return map[String(code || 'failed').toLowerCase()] || 'Failed';
  }
  // Page has every selector-taking method of its main frame.
  for (const name of Object.getOwnPropertyNames(Frame.prototype)) {
    if (name === 'constructor' || name.startsWith('_') || name in Page.prototype) continue;
    Page.prototype[name] = function (...args) { return this._main[name](...args); };
  }

  // --- BrowserContext ---------------------------------------------------------------------
  const PERMISSIONS = {
    geolocation: 'geolocation', midi: 'midi', 'midi-sysex': 'midiSysex', notifications: 'notifications', camera: 'videoCapture',
    microphone: 'audioCapture', 'background-sync': 'backgroundSync', 'ambient-light-sensor': 'sensors', accelerometer: 'sensors',
    gyroscope: 'sensors', magnetometer: 'sensors', 'clipboard-read': 'clipboardReadWrite', 'clipboard-write': 'clipboardSanitizedWrite',
    'payment-handler': 'paymentHandler',
  };
  class BrowserContext {
    constructor(browser, id, opts) {
      this._browser = browser; this._id = id; this._opts = opts || {}; this._pages = []; this._closed = false;
      this._timeout = DEFAULT_TIMEOUT; this._navTimeout = null; this._initScripts = []; this._headers = Object.assign({}, this._opts.extraHTTPHeaders || {});
      this._geo = this._opts.geolocation ? geo(this._opts.geolocation) : null; this._offline = !!this._opts.offline; this._handlers = new Map();
      this._generation = native.generation();
    }
    browser() { return this._browser; }
    pages() { return this._pages.slice(); }
    async newPage() {
      if (this._closed) throw fail('browser context has been closed');
      const t = await native.send(null, 'Target.createTarget', { url: 'about:blank', browserContextId: this._id });
      const a = await native.send(null, 'Target.attachToTarget', { targetId: t.targetId, flatten: true });
      native.subscribe(a.sessionId);
      const page = new Page(this, t.targetId, a.sessionId);
      sessions.set(a.sessionId, page);
      await page._init();
      this._pages.push(page);
      const hs = this._handlers.get('page');
      if (hs) for (const h of hs) h(page);
      return page;
    }
    setDefaultTimeout(ms) { this._timeout = Number(ms); }
    setDefaultNavigationTimeout(ms) { this._navTimeout = Number(ms); }
    async setExtraHTTPHeaders(h) { this._headers = Object.assign({}, h); await Promise.all(this._pages.map((p) => p.setExtraHTTPHeaders(this._headers))); }
    async setGeolocation(g) { this._geo = geo(g); await Promise.all(this._pages.map((p) => native.send(p._session, 'Emulation.setGeolocationOverride', this._geo))); }
    async setOffline(offline) {
      this._offline = !!offline;
      await Promise.all(this._pages.map((p) => native.send(p._session, 'Network.emulateNetworkConditions', { offline: this._offline, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })));
    }
    async addInitScript(script) {
      const src = typeof script === 'function' ? `(${script.toString()})()` : script && script.content !== undefined ? String(script.content) : String(script);
      this._initScripts.push(src);
      await Promise.all(this._pages.map((p) => native.send(p._session, 'Page.addScriptToEvaluateOnNewDocument', { source: src })));
    }
    async grantPermissions(perms, o) {
      const list = perms.map((p) => { const m = PERMISSIONS[p]; if (!m) throw fail(`unknown permission: ${p}`); return m; });
      const params = { permissions: list, browserContextId: this._id };
      if (o && o.origin) params.origin = o.origin;
      await native.send(null, 'Browser.grantPermissions', params);
    }
    async clearPermissions() { await native.send(null, 'Browser.resetPermissions', { browserContextId: this._id }); }
    async cookies(...urls) {
      const r = await native.send(null, 'Storage.getCookies', { browserContextId: this._id });
      const list = urls.flat().map((u) => new URL(u));
      return r.cookies.filter((c) => !list.length || list.some((u) => {
        const host = u.hostname, domain = c.domain.replace(/^\./, '');
        return (host === domain || (c.domain.startsWith('.') && host.endsWith('.' + domain))) && u.pathname.startsWith(c.path) && (!c.secure || u.protocol === 'https:');
      })).map((c) => ({ name: c.name, value: c.value, domain: c.domain, path: c.path, expires: c.expires, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite || 'Lax' }));
    }
    async addCookies(cookies) {
      const list = cookies.map((c) => {
        if (!c.url && !(c.domain && c.path)) throw fail('Cookie should have a url or a domain/path pair');
        const out = Object.assign({}, c);
        if (out.expires === undefined || out.expires === null) delete out.expires;
        return out;
      });
      await native.send(null, 'Storage.setCookies', { cookies: list, browserContextId: this._id });
    }
    async clearCookies() { await native.send(null, 'Storage.clearCookies', { browserContextId: this._id }); }
    on(event, handler) { if (!this._handlers.has(event)) this._handlers.set(event, []); this._handlers.get(event).push(handler); }
    async waitForEvent(event, o) {
      if (event !== 'page') throw fail(`unsupported event: ${event}`);
      const predicate = typeof o === 'function' ? o : o && o.predicate;
      const ms = timeoutOf(typeof o === 'object' ? o : undefined, this._timeout);
      return new Promise((resolve, reject) => {
        native.hold();
        let done = false;
        const t = setTimeout(() => { if (!done) { done = true; native.release(); reject(fail(`waiting for event ${q(event)}: timed out after ${ms}ms`)); } }, ms);
        this.on('page', (p) => { if (!done && (!predicate || predicate(p))) { done = true; clearTimeout(t); native.release(); resolve(p); } });
      });
    }
    async close() {
      if (this._closed) return;
      for (const p of this._pages) await p._flushVitals();
      this._closed = true;
      for (const p of this._pages) { p._closed = true; sessions.delete(p._session); }
      this._pages = [];
      native.untrackContext(this._id);
      await native.send(null, 'Target.disposeBrowserContext', { browserContextId: this._id }).catch(() => {});
      if (this._browser._context === this) this._browser._context = null;
    }
  }
  function geo(g) {
    if (!g || typeof g.latitude !== 'number' || typeof g.longitude !== 'number') throw fail('geolocation needs latitude and longitude');
    if (g.latitude < -90 || g.latitude > 90) throw fail(`invalid latitude "${g.latitude}": precondition -90 <= LATITUDE <= 90 failed`);
    if (g.longitude < -180 || g.longitude > 180) throw fail(`invalid longitude "${g.longitude}": precondition -180 <= LONGITUDE <= 180 failed`);
    return { latitude: g.latitude, longitude: g.longitude, accuracy: g.accuracy || 0 };
  }

  // --- Browser -------------------------------------------------------------------------------
  class Browser {
    constructor() { this._context = null; this._version = null; }
    _fresh() {
      // Objects of an ended iteration are gone with its contexts (Rust disposed them).
      const gen = native.generation();
      if (this._context && this._context._generation !== gen) this._context = null;
      for (const [id, page] of sessions) if (page._context._generation !== gen) sessions.delete(id);
    }
    // The run's browser; throws outside a browser scenario (checked at every use, since a
    // VU can run several scenarios).
    _launch() { this._version = native.launch(); return this._version; }
    async newContext(opts) {
      this._launch();
      this._fresh();
      if (this._context) throw fail('existing browser context must be closed before creating a new one');
      const r = await native.send(null, 'Target.createBrowserContext', { disposeOnDetach: false });
      native.trackContext(r.browserContextId);
      this._context = new BrowserContext(this, r.browserContextId, opts);
      if (opts && Array.isArray(opts.permissions) && opts.permissions.length) await this._context.grantPermissions(opts.permissions);
      return this._context;
    }
    async newPage(opts) {
      this._launch();
      this._fresh();
      if (this._context) throw fail('new page: existing browser context must be closed before creating a new one');
      const ctx = await this.newContext(opts);
      return ctx.newPage();
    }
    context() { this._fresh(); return this._context; }
    async closeContext() {
      this._fresh();
      if (!this._context) throw fail('cannot close context: no browser context to close');
      await this._context.close();
    }
    isConnected() { return native.isConnected(); }
    version() { const v = this._launch(); return String(v.product || '').replace(/^[^/]*\//, ''); }
    userAgent() { return this._launch().userAgent || ''; }
  }

  const networkProfiles = {
    'No Throttling': { download: -1, upload: -1, latency: 0 },
    'Fast 3G': { download: ((1.6 * 1000 * 1000) / 8) * 0.9, upload: ((750 * 1000) / 8) * 0.9, latency: 150 * 3.75 },
    'Slow 3G': { download: ((500 * 1000) / 8) * 0.8, upload: ((500 * 1000) / 8) * 0.8, latency: 400 * 5 },
  };
  const devices = {
    'Desktop Chrome': { name: 'Desktop Chrome', userAgent: '', viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
    'iPhone X': { name: 'iPhone X', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 11_0 like Mac OS X) AppleWebKit/604.1.38 (KHTML, like Gecko) Version/11.0 Mobile/15A372 Safari/604.1', viewport: { width: 375, height: 812 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true },
    'Pixel 5': { name: 'Pixel 5', userAgent: 'Mozilla/5.0 (Linux; Android 11; Pixel 5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/90.0.4430.91 Mobile Safari/537.36', viewport: { width: 393, height: 851 }, deviceScaleFactor: 2.75, isMobile: true, hasTouch: true },
  };

  return { browser: new Browser(), devices, networkProfiles };
})
