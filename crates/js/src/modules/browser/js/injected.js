// rk6's page-side helper for k6/browser, installed once per document (main world) as
// globalThis.__rk6: selector engines, element states, actionability waits and the DOM
// parts of actions. Everything here runs inside Chromium, never in the VU.
(() => {
  if (globalThis.__rk6) return;
  const normalize = (s) => String(s).replace(/\s+/g, ' ').trim();

  // A text matcher from k6's/Playwright's text syntax: "quoted" is exact (after whitespace
  // normalisation), /re/flags a regular expression, anything else a case-insensitive
  // substring.
  function textMatcher(body, exactDefault) {
    body = body.trim();
    const re = /^\/(.*)\/([a-z]*)$/s.exec(body);
    if (re) {
      const r = new RegExp(re[1], re[2]);
      return (t) => r.test(t);
    }
    let exact = exactDefault;
    if ((body.startsWith('"') && body.endsWith('"')) || (body.startsWith("'") && body.endsWith("'"))) {
      body = body.slice(1, -1);
      exact = true;
    } else if (/"[si]?$/.test(body) && body.startsWith('"')) {
      exact = body.endsWith('"s');
      body = body.replace(/^"/, '').replace(/"[si]$/, '');
    }
    const want = normalize(body);
    if (exact) return (t) => normalize(t) === want;
    const low = want.toLowerCase();
    return (t) => normalize(t).toLowerCase().includes(low);
  }

  const elementText = (el) => (el.tagName === 'INPUT' && (el.type === 'button' || el.type === 'submit') ? el.value : el.textContent || '');

  // The elements under `root` whose own text matches, innermost first as Playwright picks:
  // an element matches when its text does and none of its element children's does alone.
  function byText(root, match) {
    const out = [];
    const walk = (el) => {
      let childMatched = false;
      for (const c of el.children) childMatched = walk(c) || childMatched;
      if (el.tagName === 'SCRIPT' || el.tagName === 'STYLE' || el.tagName === 'HEAD') return false;
      if (match(elementText(el))) {
        if (!childMatched) out.push(el);
        return true;
      }
      return childMatched;
    };
    for (const c of (root.nodeType === 9 ? [root.documentElement] : root.children)) if (c) walk(c);
    return out;
  }

  function labelOf(el) {
    const labels = [];
    if (el.labels) for (const l of el.labels) labels.push(l.textContent || '');
    const aria = el.getAttribute && el.getAttribute('aria-label');
    if (aria) labels.push(aria);
    const by = el.getAttribute && el.getAttribute('aria-labelledby');
    if (by) for (const id of by.split(/\s+/)) { const t = document.getElementById(id); if (t) labels.push(t.textContent || ''); }
    return labels;
  }

  const implicitRole = (el) => {
    const t = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    switch (t) {
      case 'a': return el.hasAttribute('href') ? 'link' : null;
      case 'button': return 'button';
      case 'input':
        if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
        if (type === 'checkbox') return 'checkbox';
        if (type === 'radio') return 'radio';
        if (type === 'range') return 'slider';
        if (type === 'search') return el.hasAttribute('list') ? 'combobox' : 'searchbox';
        if (type === 'hidden') return null;
        return el.hasAttribute('list') ? 'combobox' : 'textbox';
      case 'textarea': return 'textbox';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'option': return 'option';
      case 'img': return el.getAttribute('alt') === '' ? 'presentation' : 'img';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'ul': case 'ol': return 'list';
      case 'li': return 'listitem';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'form': return 'form';
      case 'table': return 'table';
      case 'tr': return 'row';
      case 'td': return 'cell';
      case 'th': return 'columnheader';
      case 'dialog': return 'dialog';
      case 'header': return 'banner';
      case 'footer': return 'contentinfo';
      case 'p': return 'paragraph';
      default: return null;
    }
  };
  const roleOf = (el) => (el.getAttribute('role') || '').split(/\s+/)[0] || implicitRole(el);
  const accessibleName = (el) => {
    const l = labelOf(el);
    if (l.length) return normalize(l.join(' '));
    if (el.tagName === 'IMG') return el.getAttribute('alt') || '';
    if (el.tagName === 'INPUT' && ['button', 'submit', 'reset'].includes(el.type)) return el.value || '';
    return normalize(el.textContent || el.getAttribute('title') || '');
  };

  // Role selector body: `button[name="Log in"i][exact]...`, rk6's encoding of getByRole.
  function byRole(root, body) {
    const m = /^([a-z]+)(.*)$/s.exec(body.trim());
    const role = m[1];
    const opts = {};
    for (const a of m[2].matchAll(/\[([a-z-]+)(?:=("(?:[^"\\]|\\.)*"|[^\]]*))?\]/g)) {
      opts[a[1]] = a[2] === undefined ? true : a[2].startsWith('"') ? JSON.parse(a[2]) : a[2];
    }
    const all = root.querySelectorAll('*');
    const out = [];
    for (const el of all) {
      if (roleOf(el) !== role) continue;
      if (opts.name !== undefined) {
        const n = accessibleName(el);
        if (opts.exact === 'true' ? n !== opts.name : !n.toLowerCase().includes(String(opts.name).toLowerCase())) continue;
      }
      if (opts.checked !== undefined && String(!!el.checked) !== String(opts.checked)) continue;
      if (opts.disabled !== undefined && String(!!el.disabled) !== String(opts.disabled)) continue;
      if (opts.level !== undefined && el.tagName !== 'H' + opts.level) continue;
      if (opts.includeHidden !== 'true' && !isVisible(el)) continue;
      out.push(el);
    }
    return out;
  }

  function cssWithPseudo(root, sel) {
    // Playwright's :has-text("…") / :text("…") / :visible, applied after the CSS part.
    const filters = [];
    sel = sel.replace(/:(has-text|text|text-is)\((["'])(.*?)\2\)|:visible/g, (all, kind, q, body) => {
      if (all === ':visible') filters.push(isVisible);
      else if (kind === 'has-text') { const m = textMatcher(body, false); filters.push((e) => m(elementText(e))); }
      else { const m = textMatcher(body, kind === 'text-is'); filters.push((e) => m(elementText(e))); }
      return '';
    });
    let els = [...root.querySelectorAll(sel.trim() || '*')];
    for (const f of filters) els = els.filter(f);
    return els;
  }

  function queryPart(root, part) {
    part = part.trim();
    const eq = /^([a-z:_-]+)=(.*)$/s.exec(part);
    let engine = 'css', body = part;
    if (eq && ['css', 'xpath', 'text', 'id', 'data-testid', 'nth', 'internal:role', 'internal:text', 'internal:label', 'internal:attr', 'internal:has-text', 'internal:testid', 'visible'].includes(eq[1])) {
      engine = eq[1]; body = eq[2];
    } else if (part.startsWith('//') || part.startsWith('..') || part.startsWith('(//')) {
      engine = 'xpath';
    } else if (part.startsWith('"') || part.startsWith("'")) {
      engine = 'text';
    }
    switch (engine) {
      case 'css': return cssWithPseudo(root, body);
      case 'xpath': {
        const doc = root.ownerDocument || root;
        const r = doc.evaluate(body, root, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        const out = [];
        for (let i = 0; i < r.snapshotLength; i++) { const n = r.snapshotItem(i); if (n.nodeType === 1) out.push(n); }
        return out;
      }
      case 'text': case 'internal:text': return byText(root, textMatcher(body, false));
      case 'id': return [...root.querySelectorAll(`[id=${JSON.stringify(body)}]`)];
      case 'data-testid': case 'internal:testid': return [...root.querySelectorAll(`[data-testid=${JSON.stringify(body.replace(/^"|"s?$/g, ''))}]`)];
      case 'internal:role': return byRole(root, body);
      case 'internal:label': {
        const m = textMatcher(body, false);
        return [...root.querySelectorAll('input,textarea,select,button,[aria-label],[aria-labelledby]')].filter((e) => labelOf(e).some((l) => m(l)));
      }
      case 'internal:attr': {
        const a = /^\[([a-zA-Z-]+)=(.*)\]$/s.exec(body);
        const m = textMatcher(a[2], false);
        return [...root.querySelectorAll(`[${a[1]}]`)].filter((e) => m(e.getAttribute(a[1])));
      }
      default: return [];
    }
  }

  // `a >> b >> nth=1`: each part scopes the next; nth= and visible= filter the set so far;
  // internal:has-text= keeps elements containing the text, internal:has-not-text= the rest.
  function queryAll(selector, root) {
    let set = [root || document];
    for (const raw of selector.split(/\s+>>\s+/)) {
      const part = raw.trim();
      let m;
      if ((m = /^nth=(-?\d+)$/.exec(part))) {
        const i = Number(m[1]);
        const el = i < 0 ? set[set.length + i] : set[i];
        set = el ? [el] : [];
        continue;
      }
      if ((m = /^visible=(true|false)$/.exec(part))) { set = set.filter((e) => isVisible(e) === (m[1] === 'true')); continue; }
      if ((m = /^internal:has-text=(.*)$/s.exec(part))) { const t = textMatcher(m[1], false); set = set.filter((e) => t(elementText(e))); continue; }
      if ((m = /^internal:has-not-text=(.*)$/s.exec(part))) { const t = textMatcher(m[1], false); set = set.filter((e) => !t(elementText(e))); continue; }
      const next = [];
      for (const r of set) for (const e of queryPart(r, part)) if (!next.includes(e)) next.push(e);
      set = next;
    }
    return set.filter((e) => e && e.nodeType === 1);
  }

  function isVisible(el) {
    if (!el.isConnected) return false;
    const style = getComputedStyle(el);
    if (style.visibility !== 'visible') return false;
    if (typeof el.checkVisibility === 'function' && !el.checkVisibility()) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  const isDisabled = (el) => !!(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP'].includes(el.tagName) && (el.disabled || el.closest('fieldset[disabled]'))) || el.getAttribute('aria-disabled') === 'true';
  const isEditable = (el) => !isDisabled(el) && !el.readOnly && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
  const isChecked = (el) => {
    if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) return el.checked;
    const a = el.getAttribute('aria-checked');
    if (a === 'true' || a === 'false') return a === 'true';
    throw new Error('Not a checkbox or radio button');
  };

  function stateOf(el, state) {
    switch (state) {
      case 'attached': return !!el && el.isConnected;
      case 'detached': return !el || !el.isConnected;
      case 'visible': return !!el && isVisible(el);
      case 'hidden': return !el || !isVisible(el);
      case 'enabled': return !!el && !isDisabled(el);
      case 'editable': return !!el && isEditable(el);
      default: return false;
    }
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));

  globalThis.__rk6 = {
    queryAll,
    query: (selector, root) => queryAll(selector, root)[0] || null,
    count: (selector, root) => queryAll(selector, root).length,
    isVisible, isDisabled, isEditable, isChecked, stateOf,
    // Resolves with the first match once it is in `state` (null for detached/hidden), or
    // with undefined when `ms` runs out.
    async waitFor(selector, state, ms, root) {
      const end = Date.now() + ms;
      for (;;) {
        const el = this.query(selector, root);
        if (stateOf(el, state)) return state === 'detached' || state === 'hidden' ? null : el;
        if (Date.now() >= end) return undefined;
        await sleep(Math.min(20, Math.max(1, end - Date.now())));
      }
    },
    // The point to click once the element is visible, enabled (unless `force`), stable for
    // two animation frames, scrolled into view and the one receiving events there; a
    // string says why not yet.
    async actionPoint(el, opts) {
      if (!el.isConnected) return 'element is not attached to the DOM';
      if (!isVisible(el)) return 'element is not visible';
      if (opts.enabled && isDisabled(el)) return 'element is not enabled';
      const r1 = el.getBoundingClientRect();
      await frame();
      const r2 = el.getBoundingClientRect();
      if (r1.x !== r2.x || r1.y !== r2.y || r1.width !== r2.width || r1.height !== r2.height) return 'element is not stable';
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      const r = el.getBoundingClientRect();
      let x = r.left + r.width / 2, y = r.top + r.height / 2;
      if (opts.position) { x = r.left + opts.position.x; y = r.top + opts.position.y; }
      if (!opts.force) {
        const rootNode = el.getRootNode();
        const hit = (rootNode.elementFromPoint ? rootNode : document).elementFromPoint(x, y);
        if (hit && hit !== el && !el.contains(hit) && !(hit.tagName === 'LABEL' && hit.control === el) && !(el.tagName === 'LABEL' && el.control === hit)) {
          return 'element does not receive pointer events';
        }
      }
      return { x, y };
    },
    // Prepares `fill`: focuses and selects the field's text; returns how to enter the
    // value ("insert": type it, "set": it was set here) or why it cannot be filled.
    prepareFill(el, value) {
      if (el.tagName === 'INPUT') {
        const type = (el.type || 'text').toLowerCase();
        const kinds = ['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week'];
        if (['checkbox', 'radio', 'file', 'button', 'submit', 'reset', 'image', 'hidden'].includes(type)) return `error: input of type "${type}" cannot be filled`;
        if (type === 'number' && value !== '' && isNaN(Number(value))) return 'error: cannot type text into input[type=number]';
        if (kinds.includes(type)) {
          el.focus();
          el.value = value;
          if (el.value !== value) return 'error: malformed value';
          el.dispatchEvent(new Event('input', { bubbles: true }));
          el.dispatchEvent(new Event('change', { bubbles: true }));
          return 'set';
        }
      } else if (el.tagName !== 'TEXTAREA' && !el.isContentEditable) {
        return 'error: element is not an <input>, <textarea> or [contenteditable] element';
      }
      if (!isEditable(el)) return 'error: element is not editable';
      el.focus();
      if (el.isContentEditable) {
        const range = document.createRange();
        range.selectNodeContents(el);
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      } else {
        el.select();
      }
      return 'insert';
    },
    selectOptions(el, values) {
      if (el.tagName !== 'SELECT') throw new Error('element is not a <select> element');
      const opts = [...el.options];
      const picked = [];
      for (const v of values) {
        const o = opts.find((o) => (v.value !== undefined ? o.value === v.value : v.label !== undefined ? o.label === v.label : v.index !== undefined ? o.index === v.index : o.value === v || o.label === v));
        if (o) picked.push(o);
        if (!el.multiple && picked.length) break;
      }
      if (values.length && !picked.length) return null;
      for (const o of opts) o.selected = picked.includes(o);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return picked.map((o) => o.value);
    },
    text: elementText,
  };
})();
