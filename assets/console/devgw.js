// xr console: the remote console page (device gateway). A terminal
// (xterm.js, vendored as an ES module) on a WebSocket to the API's
// /admin/devgw/ssh/ws row. Binary frames carry terminal bytes both ways;
// text frames are JSON control messages: resize and close from here,
// opened, error and closed from the server. No inline script: everything
// the page knows comes in data- attributes of #devgw-terminal (texts
// already localized, the modules' hashed URLs). Loaded as a module
// (deferred); it imports xterm.js only on this page.
(function () {
  "use strict";

  // The console's CSP (style-src 'self') blocks the <style> elements
  // xterm.js writes its row and theme rules into. Their text is still in
  // the DOM: mirror each into a constructed stylesheet, which the CSP does
  // not govern (script already runs with the page's rights), and follow
  // every change.
  function mirrorStyles(root) {
    if (!("adoptedStyleSheets" in document) || typeof CSSStyleSheet !== "function") { return; }
    var sheets = new Map();
    function sync() {
      var seen = new Set();
      root.querySelectorAll("style").forEach(function (el) {
        seen.add(el);
        var m = sheets.get(el);
        if (!m) {
          m = { sheet: new CSSStyleSheet(), text: null };
          sheets.set(el, m);
          document.adoptedStyleSheets = document.adoptedStyleSheets.concat([m.sheet]);
        }
        if (m.text !== el.textContent) {
          m.text = el.textContent;
          try { m.sheet.replaceSync(m.text); } catch (e) { /* a rule the browser refuses: skip it */ }
        }
      });
      sheets.forEach(function (m, el) {
        if (!seen.has(el)) {
          sheets.delete(el);
          document.adoptedStyleSheets = document.adoptedStyleSheets.filter(function (s) { return s !== m.sheet; });
        }
      });
    }
    new MutationObserver(sync).observe(root, { subtree: true, childList: true, characterData: true });
    return sync;
  }

  function start(Terminal, FitAddon) {
    var box = document.getElementById("devgw-terminal");
    var d = box.dataset;
    var state = document.getElementById("devgw-state");
    var disconnect = document.getElementById("devgw-disconnect");
    var reconnect = document.getElementById("devgw-reconnect");
    var reasons = {};
    try { reasons = JSON.parse(d.reasons || "{}"); } catch (e) { reasons = {}; }

    function say(st, text) {
      box.dataset.state = st;
      if (state) {
        state.textContent = text;
        state.className = "badge " + ({ open: "ok", error: "bad", closed: "warn" }[st] || "");
        state.dataset.state = st;
      }
      if (disconnect) { disconnect.disabled = st !== "open" && st !== "connecting"; }
      if (reconnect) { reconnect.hidden = st === "open" || st === "connecting"; }
    }
    // A reason in words: the page's text for it, else its code.
    function reasonText(prefix, r) {
      var t = reasons[r || ""] || (r ? String(r).replace(/_/g, " ") : "");
      return prefix + (t ? ": " + t : "");
    }

    var sync = mirrorStyles(box);
    var term = new Terminal({ cursorBlink: true, scrollback: 2000, fontSize: 14,
      fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace' });
    var fit = FitAddon ? new FitAddon() : null;
    if (fit) { term.loadAddon(fit); }
    term.open(box);
    if (sync) { sync(); }
    if (term.textarea && d.label) { term.textarea.setAttribute("aria-label", d.label); }
    function refit() { if (fit) { try { fit.fit(); } catch (e) { /* hidden: keep the size */ } } }
    refit();
    window.addEventListener("resize", refit);

    var ws = null;
    var enc = new TextEncoder();
    function send(obj) { if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify(obj)); } }
    function sendResize() { send({ type: "resize", cols: term.cols, rows: term.rows }); }
    term.onData(function (s) { if (ws && ws.readyState === WebSocket.OPEN) { ws.send(enc.encode(s)); } });
    term.onBinary(function (s) {
      if (!ws || ws.readyState !== WebSocket.OPEN) { return; }
      var b = new Uint8Array(s.length);
      for (var i = 0; i < s.length; i++) { b[i] = s.charCodeAt(i) & 255; }
      ws.send(b);
    });
    term.onResize(sendResize);

    function connect(url) {
      var u = new URL(url, window.location.href);
      u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
      say("connecting", d.tConnecting);
      var ended = false;
      ws = new WebSocket(u.toString());
      ws.binaryType = "arraybuffer";
      ws.onopen = function () { sendResize(); term.focus(); };
      ws.onmessage = function (ev) {
        if (typeof ev.data !== "string") { term.write(new Uint8Array(ev.data)); return; }
        var m;
        try { m = JSON.parse(ev.data); } catch (e) { return; }
        if (m.type === "opened") {
          box.dataset.session = String(m.session_id || "");
          say("open", d.tOpen);
        } else if (m.type === "error") {
          ended = true;
          say("error", reasonText(d.tError, m.reason));
        } else if (m.type === "closed") {
          ended = true;
          say("closed", reasonText(d.tClosed, m.reason));
        }
      };
      ws.onerror = function () {
        if (!ended) { ended = true; say("error", reasonText(d.tError, "")); }
      };
      ws.onclose = function () {
        if (!ended) { ended = true; say("closed", d.tClosed); }
        ws = null;
      };
    }

    if (disconnect) {
      disconnect.addEventListener("click", function () {
        if (!ws) { return; }
        send({ type: "close" });
        var w = ws;
        // The server answers "closed" then closes; give up waiting soon.
        window.setTimeout(function () { if (w.readyState !== WebSocket.CLOSED) { w.close(1000); } }, 1500);
      });
    }
    if (reconnect) {
      reconnect.addEventListener("click", function () {
        say("connecting", d.tConnecting);
        fetch(d.ticket, { method: "POST", credentials: "same-origin", headers: { "Accept": "application/json" } })
          .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, j: j }; }); })
          .then(function (res) {
            if (!res.ok || !res.j.url) { say("error", d.tError + (res.j.message ? ": " + res.j.message : "")); return; }
            term.reset();
            connect(res.j.url);
          }, function () { say("error", reasonText(d.tError, "")); });
      });
    }
    if (d.url) {
      connect(d.url);
    } else {
      say("idle", d.tIdle);
    }
  }
  var box = document.getElementById("devgw-terminal");
  if (!box) { return; }
  Promise.all([import(box.dataset.xterm), import(box.dataset.fit)]).then(function (m) {
    start(m[0].Terminal, m[1].FitAddon);
  }, function () {
    box.dataset.state = "error";
    var st = document.getElementById("devgw-state");
    if (st) { st.textContent = box.dataset.tError; }
  });
})();
