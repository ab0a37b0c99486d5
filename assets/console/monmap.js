// The network map page (web/console/monitoring_map.tmpl): Leaflet draws
// the tenant's devices, links and, when asked, subscribers from the page's
// GeoJSON route. Text comes from data-* attributes and reaches the page
// through textContent only.
(function () {
  "use strict";
  var colours = { up: "#1a7f37", down: "#c62828", unknown: "#6b6f76", degraded: "#b26a00", online: "#1a7f37", offline: "#6b6f76" };

  function el(tag, text) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function start() {
    var box = document.getElementById("mon-map");
    if (!box || typeof L === "undefined") return;
    var d = box.dataset;
    var map = L.map(box, { center: [parseFloat(d.lat) || 0, parseFloat(d.lon) || 0], zoom: parseInt(d.zoom, 10) || 2, fadeAnimation: false });
    if (d.tiles) {
      L.tileLayer(d.tiles, { attribution: d.attribution || "", maxZoom: 19 }).addTo(map);
    }
    var layers = { devices: L.layerGroup().addTo(map), links: L.layerGroup().addTo(map), subscribers: L.layerGroup() };
    var counts = { devices: 0, links: 0, subscribers: 0 };
    var subscribersLoaded = false;

    function label(status) { return d["t" + status.charAt(0).toUpperCase() + status.slice(1)] || status; }

    function showCount() {
      var text = (d.tCount || "%d devices, %d links, %d subscribers")
        .replace("%d", counts.devices).replace("%d", counts.links).replace("%d", counts.subscribers);
      document.getElementById("mon-map-count").textContent = text;
    }

    function add(fc, withSubscribers) {
      fc.features.forEach(function (f) {
        var p = f.properties, c = f.geometry.coordinates;
        if (withSubscribers !== (p.layer === "subscribers")) return; // the second load adds only the subscribers
        if (p.layer === "devices") {
          var m = L.circleMarker([c[1], c[0]], { radius: 8, weight: 2, color: "#fff", fillColor: colours[p.status] || colours.unknown, fillOpacity: 1 });
          var pop = el("div"), a = el("a", p.name);
          a.href = "/monitoring/devices/" + p.kind + "/" + p.ref;
          pop.appendChild(a);
          pop.appendChild(el("div", label(p.status)));
          m.bindPopup(pop);
          m.bindTooltip(p.name + " — " + label(p.status));
          m.addTo(layers.devices);
          counts.devices++;
        } else if (p.layer === "links") {
          L.polyline([[c[0][1], c[0][0]], [c[1][1], c[1][0]]], { color: colours[p.status] || colours.unknown, weight: 3, opacity: 0.8 }).addTo(layers.links);
          counts.links++;
        } else if (p.layer === "subscribers") {
          L.circleMarker([c[1], c[0]], { radius: 3, weight: 0, fillColor: colours[p.status] || colours.offline, fillOpacity: 0.9 })
            .bindTooltip(p.username + " — " + label(p.status)).addTo(layers.subscribers);
          counts.subscribers++;
        }
      });
      showCount();
    }

    function load(withSubscribers) {
      return fetch(d.features + (withSubscribers ? "?subscribers=1" : ""), { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
        .then(function (body) { return body.data || body; });
    }

    load(false).then(function (fc) {
      add(fc, false);
      box.setAttribute("data-ready", "true");
    });

    function toggle(id, name, onFirst) {
      var box = document.getElementById(id);
      if (!box) return;
      box.addEventListener("change", function () {
        if (!box.checked) { map.removeLayer(layers[name]); return; }
        (onFirst ? onFirst() : Promise.resolve()).then(function () { layers[name].addTo(map); });
      });
    }
    toggle("map-l-devices", "devices");
    toggle("map-l-links", "links");
    toggle("map-l-subscribers", "subscribers", function () {
      if (subscribersLoaded) return Promise.resolve();
      subscribersLoaded = true;
      return load(true).then(function (fc) { add(fc, true); });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
