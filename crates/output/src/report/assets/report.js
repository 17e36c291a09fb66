// Draws the rk6 report from the JSON in #report-data: summary cards, SVG line charts and
// tables. No libraries and no network access, so the file works offline. On the live
// dashboard (#app has data-live) the same drawing runs again for each `report` event of
// the page's feed.
(function () {
  "use strict";
  var app = document.getElementById("app");
  var COLORS = ["#2563eb", "#f59e0b", "#db2777", "#7c3aed", "#059669", "#dc2626"];

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
    if (digits === undefined) digits = Number.isInteger(v) ? 0 : 2;
    return v.toFixed(digits);
  }
  function ms(v) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    if (v >= 60000) return (v / 60000).toFixed(2) + "m";
    if (v >= 1000) return (v / 1000).toFixed(2) + "s";
    if (v >= 1) return v.toFixed(2) + "ms";
    return (v * 1000).toFixed(0) + "µs";
  }
  function pct(part, whole) {
    if (!whole) return "–";
    return (100 * part / whole).toFixed(2) + "%";
  }
  function secs(t) {
    t = Math.round(t * 1000) / 1000;
    if (t < 60) return (Number.isInteger(t) ? t : t.toFixed(1)) + "s";
    var m = Math.floor(t / 60), s = Math.round(t - m * 60);
    if (m < 60) return m + "m" + (s ? s + "s" : "");
    var h = Math.floor(m / 60);
    return h + "h" + (m % 60 ? (m % 60) + "m" : "");
  }
  function bytes(v) {
    if (!isFinite(v)) return "–";
    var units = ["B", "kB", "MB", "GB", "TB"], i = 0;
    while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return (i ? v.toFixed(1) : v.toFixed(0)) + " " + units[i];
  }
  // The width of an axis label at the axis' 11px, in a chart's units: each character as
  // wide as in DejaVu Sans (Linux's usual sans-serif, wider than most), so the room left
  // for the labels fits narrower fonts too.
  var EM = { ".": 0.318, "/": 0.337, "m": 0.974, "s": 0.521, "k": 0.579, "M": 0.863, "G": 0.779, "µ": 0.635, "–": 0.5 };
  function labelWidth(text) {
    var em = 0;
    for (var i = 0; i < text.length; i++) em += EM[text[i]] || (/[0-9]/.test(text[i]) ? 0.636 : 0.75);
    return em * 11;
  }
  // A round step so an axis gets about `count` ticks.
  function niceStep(max, count) {
    var raw = max / count, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
  }

  // Draws the whole page from one report data object.
  function render(data) {
  var tl = data.timeline;
  var n = tl.t.length;
  // Bucket midpoints, so a value sits in the middle of the interval it describes.
  var xs = tl.t.map(function (t, i) { return t + tl.span[i] / 2; });
  var rate = function (arr) { return arr.map(function (v, i) { return v / tl.span[i]; }); };

  // Draws one chart into `box`; returns the number of points drawn. `left` is the room
  // for the y-axis labels when the first drawing measured that they need more.
  function lineChart(box, opts, left) {
    var W = 640, H = 230, L = 56, R = 14, T = 12, B = 28, GAP = 6;
    var xmax = Math.max(data.duration, n ? tl.t[n - 1] + tl.span[n - 1] : 0, 1e-3);
    var ymax = 0, points = 0;
    opts.series.forEach(function (s) {
      s.values.forEach(function (v) { if (v !== null && isFinite(v)) { ymax = Math.max(ymax, v); points++; } });
    });
    var svg = ['<svg class="chart-svg" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="' + esc(opts.title) + '">'];
    if (opts.empty) points = 0;
    if (!points) {
      svg.push('<text class="empty" x="' + W / 2 + '" y="' + H / 2 + '" text-anchor="middle">no data</text></svg>');
      box.innerHTML = "<h2>" + esc(opts.title) + "</h2>" + svg.join("");
      box.querySelector("svg").setAttribute("data-points", "0");
      return 0;
    }
    if (ymax <= 0) ymax = 1;
    var ystep = niceStep(ymax, 4);
    if (opts.integer) ystep = Math.max(1, Math.round(ystep));
    ymax = Math.ceil(ymax / ystep) * ystep;
    var ticks = [];
    for (var y = 0; y <= ymax + ystep / 2; y += ystep) ticks.push([y, opts.fmt(y)]);
    // Room for the widest label (`150.00ms`), so none is cut at the chart's left edge.
    ticks.forEach(function (t) { L = Math.max(L, Math.ceil(labelWidth(t[1])) + GAP + 4); });
    if (left) L = Math.max(L, left);
    var X = function (x) { return L + (x / xmax) * (W - L - R); };
    var Y = function (y) { return T + (1 - y / ymax) * (H - T - B); };
    svg.push('<g class="grid axis">');
    ticks.forEach(function (t) {
      svg.push('<line x1="' + L + '" x2="' + (W - R) + '" y1="' + Y(t[0]) + '" y2="' + Y(t[0]) + '"/>');
      svg.push('<text class="ylabel" x="' + (L - GAP) + '" y="' + (Y(t[0]) + 4) + '" text-anchor="end">' + esc(t[1]) + "</text>");
    });
    var xstep = niceStep(xmax, 6);
    if (xmax > 120) { var steps = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400]; xstep = steps.find(function (s) { return xmax / s <= 8; }) || xstep; }
    for (var x = 0; x <= xmax + 1e-9; x += xstep) {
      svg.push('<text x="' + X(x) + '" y="' + (H - 8) + '" text-anchor="middle">' + esc(secs(x)) + "</text>");
    }
    svg.push("</g>");
    opts.series.forEach(function (s, si) {
      var color = s.color || COLORS[si % COLORS.length];
      var d = "", pen = false, dots = [];
      s.values.forEach(function (v, i) {
        if (v === null || !isFinite(v)) { if (!opts.connect) pen = false; return; }
        d += (pen ? "L" : "M") + X(xs[i]).toFixed(1) + " " + Y(v).toFixed(1);
        pen = true;
        dots.push([X(xs[i]), Y(v)]);
      });
      svg.push('<path class="series" data-series="' + esc(s.label) + '" d="' + d + '" fill="none" stroke="' + color + '" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>');
      // Few points draw as dots too, so a one-bucket run still shows something.
      if (dots.length <= 60) {
        dots.forEach(function (p) { svg.push('<circle cx="' + p[0].toFixed(1) + '" cy="' + p[1].toFixed(1) + '" r="2.5" fill="' + color + '"/>'); });
      }
    });
    svg.push('<line class="cursor" y1="' + T + '" y2="' + (H - B) + '" stroke="#9aa5b1" stroke-dasharray="3 3" visibility="hidden"/>');
    svg.push("</svg>");
    var legend = opts.series.map(function (s, si) {
      return '<span><i style="background:' + (s.color || COLORS[si % COLORS.length]) + '"></i>' + esc(s.label) + "</span>";
    }).join("");
    box.innerHTML = "<h2>" + esc(opts.title) + "</h2>" + svg.join("") + '<div class="legend">' + legend + '</div><div class="tip"></div>';
    var el = box.querySelector("svg"), tip = box.querySelector(".tip"), cursor = el.querySelector(".cursor");
    // A font wider than the estimate: measured as drawn, and drawn once more with the room.
    if (!left) {
      var leftmost = Infinity;
      el.querySelectorAll(".ylabel").forEach(function (t) {
        try { leftmost = Math.min(leftmost, t.getBBox().x); } catch (e) { /* not laid out */ }
      });
      if (leftmost < 0) return lineChart(box, opts, L + Math.ceil(-leftmost) + 2);
    }
    el.setAttribute("data-points", String(points));
    el.addEventListener("mousemove", function (ev) {
      var r = el.getBoundingClientRect(), px = (ev.clientX - r.left) * W / r.width;
      var best = 0;
      for (var i = 1; i < n; i++) if (Math.abs(X(xs[i]) - px) < Math.abs(X(xs[best]) - px)) best = i;
      cursor.setAttribute("x1", X(xs[best])); cursor.setAttribute("x2", X(xs[best]));
      cursor.setAttribute("visibility", "visible");
      tip.innerHTML = "<b>" + esc(secs(tl.t[best])) + "–" + esc(secs(tl.t[best] + tl.span[best])) + "</b><br>" +
        opts.series.map(function (s) { return esc(s.label) + ": " + esc(opts.fmt(s.values[best])); }).join("<br>");
      tip.style.display = "block";
      var left = ev.clientX - box.getBoundingClientRect().left + 12;
      tip.style.left = Math.min(left, box.clientWidth - tip.offsetWidth - 4) + "px";
      tip.style.top = "40px";
    });
    el.addEventListener("mouseleave", function () { tip.style.display = "none"; cursor.setAttribute("visibility", "hidden"); });
    return points;
  }

  function table(title, head, rows, empty) {
    var h = "<section><h2>" + esc(title) + "</h2>";
    if (!rows.length) return h + '<p class="muted">' + esc(empty) + "</p></section>";
    h += "<table><thead><tr>" + head.map(function (c) {
      return '<th class="' + (c[1] || "") + '">' + esc(c[0]) + "</th>";
    }).join("") + "</tr></thead><tbody>";
    rows.forEach(function (r) {
      h += "<tr>" + r.map(function (c, i) {
        return '<td class="' + (head[i][1] || "") + '">' + c + "</td>";
      }).join("") + "</tr>";
    });
    return h + "</tbody></table></section>";
  }

  var sum = data.summary;
  var thresholds = sum ? sum.thresholds : [];
  var crossed = thresholds.filter(function (t) { return !t.ok; }).length;
  var verdict = !sum ? '<span class="badge none">no summary</span>'
    : !thresholds.length ? '<span class="badge none">no thresholds</span>'
    : crossed ? '<span class="badge bad">' + crossed + " of " + thresholds.length + " thresholds crossed" + (data.live ? " so far" : "") + "</span>"
    : '<span class="badge ok">all ' + thresholds.length + " thresholds " + (data.live ? "passing" : "passed") + "</span>";
  if (data.live) verdict = '<span class="badge live">● running</span>' + verdict;
  var tot = data.totals;
  var metric = function (name) {
    return sum ? sum.metrics.find(function (m) { return m.name === name; }) : undefined;
  };
  var checksPass = 0, checksAll = 0;
  (sum ? sum.checks : []).forEach(function (c) { checksPass += c.passes; checksAll += c.passes + c.fails; });

  var html = "<header><h1>" + (live ? "rk6 live dashboard" : "rk6 test report") + "</h1>" + verdict +
    '<span class="meta">started ' + esc(data.started.replace("T", " ").replace("Z", " UTC")) +
    " · duration " + esc(secs(data.duration)) + "</span></header>";
  var cards = [
    ["Requests", num(tot.http_reqs), num(tot.http_reqs / Math.max(data.duration, 1e-3), 2) + " req/s"],
    ["Failed requests", pct(tot.http_req_failed, tot.http_reqs), num(tot.http_req_failed) + " failed"],
    ["Latency p95", tot.latency ? ms(tot.latency.p95) : "–", tot.latency ? "p50 " + ms(tot.latency.p50) + " · max " + ms(tot.latency.max) : "no requests"],
    ["Iterations", num(tot.iterations), num(tot.iterations / Math.max(data.duration, 1e-3), 2) + " /s"],
    ["Peak VUs", tot.vus_max === null ? "–" : num(tot.vus_max), metric("vus_max") ? "max " + num(metric("vus_max").values.max) + " initialised" : ""],
    ["Checks", checksAll ? pct(checksPass, checksAll) : "–", checksAll ? num(checksAll - checksPass) + " failed of " + num(checksAll) : "none"],
  ];
  var rx = metric("data_received"), txm = metric("data_sent");
  if (rx || txm) cards.push(["Data", rx ? bytes(rx.values.count) : "–", "received · sent " + (txm ? bytes(txm.values.count) : "–")]);
  html += '<div class="cards">' + cards.map(function (c) {
    return '<div class="card"><div class="label">' + esc(c[0]) + '</div><div class="value">' + esc(c[1]) + '</div><div class="sub">' + esc(c[2]) + "</div></div>";
  }).join("") + "</div>";
  html += '<div class="charts"><div class="chart" id="c-rate"></div><div class="chart" id="c-latency"></div>' +
    '<div class="chart" id="c-vus"></div><div class="chart" id="c-iter"></div></div>';

  html += table("Thresholds", [["Metric"], ["Threshold"], ["Value", "num"], ["Verdict"]],
    thresholds.map(function (t) {
      var m = metric(t.metric);
      var isTime = m && m.contains === "time" && m.kind === "trend" && !/^count/.test(t.source);
      return ['<span class="name">' + esc(t.metric) + "</span>", esc(t.source),
        t.value === null ? "–" : esc(isTime ? ms(t.value) : num(t.value, 4).replace(/\.?0+$/, "")),
        t.ok ? '<span class="ok">✓ passed</span>' : '<span class="bad">✗ crossed</span>'];
    }), sum ? "No thresholds defined." : "The run ended before a summary was made.");
  html += table("Checks", [["Group"], ["Check"], ["Passes", "num"], ["Fails", "num"], ["Pass rate", "num"]],
    (sum ? sum.checks : []).map(function (c) {
      return [esc(c.group || "(root)"), esc(c.name), num(c.passes), c.fails ? '<span class="bad">' + num(c.fails) + "</span>" : "0", pct(c.passes, c.passes + c.fails)];
    }), "No checks ran.");
  html += table("Requests by name", [["Name", "name"], ["Requests", "num"], ["Failed", "num"], ["Mean", "num"], ["p50", "num"], ["p95", "num"], ["p99", "num"]],
    data.endpoints.map(function (e) {
      return ['<span class="name">' + esc(e.name) + "</span>", num(e.count),
        e.failed ? '<span class="bad">' + pct(e.failed, e.count) + "</span>" : "0%",
        ms(e.mean), ms(e.p50), ms(e.p95), ms(e.p99)];
    }), "No HTTP requests.");
  html += table("Errors by code", [["error_code"], ["Requests", "num"], ["Example"]],
    data.errors.map(function (e) { return [esc(e.code), num(e.count), esc(e.example || "")]; }),
    "No request errors.");
  html += table("Metrics", [["Metric"], ["Type"], ["Values"]],
    (sum ? sum.metrics : []).map(function (m) {
      var vals = Object.keys(m.values).map(function (k) {
        var v = m.values[k];
        var f = m.contains === "time" && m.kind === "trend" ? ms(v) : m.contains === "data" && k === "count" ? bytes(v) : num(v);
        return esc(k) + "=" + esc(f);
      }).join(" · ");
      return ['<span class="name">' + esc(m.name) + "</span>", esc(m.kind), vals];
    }), "No summary.");
  html += "<footer>" + esc(data.generator) + " · " + (data.timeline.width >= 1 ? secs(data.timeline.width) : data.timeline.width * 1000 + "ms") + " intervals · self-contained, works offline</footer>";
  app.innerHTML = html;

  var drawn = 0;
  drawn += lineChart(document.getElementById("c-rate"), {
    title: "Request rate", fmt: function (v) { return num(v) + "/s"; }, empty: !tot.http_reqs,
    series: [{ label: "requests/s", values: rate(tl.reqs) }, { label: "failed/s", color: "#dc2626", values: rate(tl.failed) }],
  });
  drawn += lineChart(document.getElementById("c-latency"), {
    title: "Request duration (http_req_duration)", fmt: ms,
    series: [{ label: "p50", values: tl.p50 }, { label: "p90", values: tl.p90 }, { label: "p95", values: tl.p95 }, { label: "p99", values: tl.p99 }],
  });
  drawn += lineChart(document.getElementById("c-vus"), {
    title: "Virtual users", fmt: function (v) { return num(v); }, connect: true, integer: true,
    series: [{ label: "VUs", color: "#059669", values: tl.vus }],
  });
  drawn += lineChart(document.getElementById("c-iter"), {
    title: "Iteration rate", fmt: function (v) { return num(v) + "/s"; },
    series: [{ label: "iterations/s", color: "#7c3aed", values: rate(tl.iterations) }],
  });
  document.body.setAttribute("data-points", String(drawn));
  document.body.setAttribute("data-rendered", "true");
  }

  var live = app.getAttribute("data-live");
  render(JSON.parse(document.getElementById("report-data").textContent));
  if (live && window.EventSource) {
    var updates = 0, failures = 0;
    var feed = new EventSource(live);
    feed.addEventListener("report", function (ev) {
      failures = 0;
      render(JSON.parse(ev.data));
      document.body.setAttribute("data-updates", String(++updates));
    });
    // The browser reconnects by itself; a server that stays away (the run ended) is let go.
    feed.addEventListener("error", function () {
      if (++failures >= 3) {
        feed.close();
        document.body.setAttribute("data-stopped", "lost");
      }
    });
    // The run is over: the last report has arrived, and the server is about to go.
    feed.addEventListener("stop", function () {
      feed.close();
      document.body.setAttribute("data-stopped", "true");
    });
  }
})();
