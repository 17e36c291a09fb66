// rk6's web-vitals reporter, run in every document after Google's web-vitals library:
// each reported change of a vital goes to the VU through the __rk6Vital binding, as k6
// reports them (every change, with the page's URL).
(() => {
  if (!globalThis.webVitals || globalThis.__rk6VitalsOn) return;
  globalThis.__rk6VitalsOn = true;
  const send = (m) => {
    try {
      globalThis.__rk6Vital(JSON.stringify({ name: m.name, value: m.value, rating: m.rating, url: location.href }));
    } catch (e) {}
  };
  const all = { reportAllChanges: true };
  for (const on of ['onCLS', 'onFID', 'onLCP', 'onFCP', 'onINP', 'onTTFB']) {
    if (typeof webVitals[on] === 'function') webVitals[on](send, all);
  }
  // Reports what is pending (LCP, CLS, INP settle on the page being hidden): called before
  // a page closes or its context ends.
  globalThis.__rk6FlushVitals = () => {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
    delete document.visibilityState;
  };
})();
