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
