// xr console: the little behaviour htmx does not give. No inline scripts
// (the CSP forbids them): everything hangs off data- attributes.
(function () {
  "use strict";
  // Forms that change money or many records ask first; the text is in
  // data-confirm, already localized and escaped by the server.
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (f && f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) {
      e.preventDefault();
    }
  }, true);
  // "Select all" boxes for bulk actions.
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t && t.dataset && t.dataset.selectAll) {
      document.querySelectorAll("input[name='" + t.dataset.selectAll + "']").forEach(function (b) { b.checked = t.checked; });
    }
  });
})();
// Copy buttons: data-copy names the element (an input or any element)
// whose value or text goes to the clipboard; data-copied is the localized
// "copied" label shown after.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var b = e.target && e.target.closest ? e.target.closest("[data-copy]") : null;
    if (!b) { return; }
    var el = document.querySelector(b.dataset.copy);
    if (!el) { return; }
    var text = "value" in el ? el.value : el.textContent;
    var done = function () { if (b.dataset.copied) { b.textContent = b.dataset.copied; } };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { if (el.select) { el.select(); } });
      return;
    }
    if (el.select) { el.select(); }
    try { document.execCommand("copy"); } catch (err) { /* the text stays selected for a manual copy */ }
    done();
  });
})();
// Usage charts: data-usage holds {t: [unix seconds], in: [bytes], out:
// [bytes], labels: {in, out}}; uPlot (vendored, loaded by the page that
// has a chart) draws it as bars. The page keeps a table of the same data.
(function () {
  "use strict";
  function human(n) {
    if (n == null) { return ""; }
    var u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  }
  // Day labels in the page's language (Arabic month names on an Arabic
  // page), never uPlot's built-in English ones: the axis and the legend.
  var lang = document.documentElement.lang || undefined;
  var dayShort = new Intl.DateTimeFormat(lang, { day: "numeric", month: "short" });
  var dayLong = new Intl.DateTimeFormat(lang, { day: "numeric", month: "long", year: "numeric" });
  var xSeries = { value: function (u, v) { return v == null ? "" : dayLong.format(new Date(v * 1000)); } };
  var xAxis = { values: function (u, vals) { return vals.map(function (v) { return dayShort.format(new Date(v * 1000)); }); } };
  function draw() {
    if (!window.uPlot) { return; }
    document.querySelectorAll("[data-usage]").forEach(function (el) {
      if (el.dataset.drawn) { return; }
      var d;
      try { d = JSON.parse(el.dataset.usage); } catch (e) { return; }
      el.dataset.drawn = "1";
      var bars = window.uPlot.paths && window.uPlot.paths.bars ? window.uPlot.paths.bars({ size: [0.7, 40] }) : undefined;
      var val = function (u, v) { return human(v); };
      var opts = {
        width: el.clientWidth || 600, height: 220,
        scales: { x: { time: true } },
        series: [xSeries, { label: d.labels["in"], stroke: "#1f5fbf", fill: "rgba(31,95,191,.35)", paths: bars, value: val },
          { label: d.labels.out, stroke: "#17663a", fill: "rgba(23,102,58,.35)", paths: bars, value: val }],
        axes: [xAxis, { size: 80, values: function (u, vals) { return vals.map(human); } }]
      };
      var chart = new window.uPlot(opts, [d.t, d["in"], d.out], el);
      window.addEventListener("resize", function () { chart.setSize({ width: el.clientWidth || 600, height: 220 }); });
    });
    // Report charts: data-series holds {t: [unix seconds], v: [numbers],
    // label, unit: bytes|money|count}, one bar per day.
    document.querySelectorAll("[data-series]").forEach(function (el) {
      if (el.dataset.drawn) { return; }
      var d;
      try { d = JSON.parse(el.dataset.series); } catch (e) { return; }
      el.dataset.drawn = "1";
      var bars = window.uPlot.paths && window.uPlot.paths.bars ? window.uPlot.paths.bars({ size: [0.7, 40] }) : undefined;
      var fmt = d.unit === "bytes" ? human : function (n) { return n == null ? "" : window.uPlot.fmtNum(n); };
      var opts = {
        width: el.clientWidth || 600, height: 200,
        scales: { x: { time: true } },
        series: [xSeries, { label: d.label, stroke: "#1f5fbf", fill: "rgba(31,95,191,.35)", paths: bars, value: function (u, v) { return fmt(v); } }],
        axes: [xAxis, { size: 80, values: function (u, vals) { return vals.map(fmt); } }]
      };
      var chart = new window.uPlot(opts, [d.t, d.v], el);
      window.addEventListener("resize", function () { chart.setSize({ width: el.clientWidth || 600, height: 200 }); });
    });
  }
  // Deferred scripts (uPlot among them) have all run by DOMContentLoaded.
  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", draw);
})();
