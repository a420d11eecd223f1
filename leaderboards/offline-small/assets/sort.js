// Sortable tables and the sample viewer's filters; the site's only script, no libraries.
//
// A header of a table.sortable holds a <button> (reachable with Tab, pressed with Enter or
// Space). The first press sorts best first: descending where th[data-better=high], ascending
// where lower is better (data-better=low), for a measurement with no better direction
// (data-better=none: a gap) or for text; the next press reverses. Cells sort by
// their data-value (numbers for th[data-type=num]); empty values always sort last. The sort
// state is kept in the URL fragment (#sort=TABLE-ID:COLUMN:asc|desc), so a link or a reload
// shows the same order.
//
// The viewer (table#samples) shows the rows whose data-bucket and data-role match the
// select#bucket and select#role filters; the filter state is in the fragment too.
(function () {
  "use strict";
  function key(cell, numeric) {
    if (!cell) { return null; }
    var v = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (v === null || v === "") { return null; }
    if (numeric) { var f = parseFloat(v); return isNaN(f) ? null : f; }
    return v.toLowerCase();
  }
  function params() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) { out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1)); }
    });
    return out;
  }
  function setParam(name, value) {
    var p = params();
    if (value === null) { delete p[name]; } else { p[name] = value; }
    var parts = Object.keys(p).sort().map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(p[k]);
    });
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
  }
  function sortBy(table, index, asc) {
    var th = table.tHead.rows[0].cells[index];
    var numeric = th.getAttribute("data-type") === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[index], numeric), y = key(b.cells[index], numeric);
      if (x === null && y === null) { return 0; }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      var c = x < y ? -1 : (x > y ? 1 : 0);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  function firstAscending(th) {
    if (th.getAttribute("data-type") !== "num") { return true; }
    var better = th.getAttribute("data-better");
    return better === "low" || better === "none";
  }
  function initTables() {
    var tables = document.querySelectorAll("table.sortable");
    var state = params().sort;
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "sort";
        while (th.firstChild) { button.appendChild(th.firstChild); }
        th.appendChild(button);
        button.addEventListener("click", function () {
          var now = th.getAttribute("aria-sort");
          var asc = now ? now !== "ascending" : firstAscending(th);
          sortBy(table, i, asc);
          if (table.id) { setParam("sort", table.id + ":" + i + ":" + (asc ? "asc" : "desc")); }
        });
      });
      if (state && table.id && state.indexOf(table.id + ":") === 0) {
        var bits = state.split(":");
        var col = parseInt(bits[1], 10);
        if (col >= 0 && col < table.tHead.rows[0].cells.length) { sortBy(table, col, bits[2] === "asc"); }
      }
    });
    document.body.setAttribute("data-sortable-ready", String(tables.length));
  }
  function initViewer() {
    var table = document.getElementById("samples");
    var bucket = document.getElementById("bucket"), role = document.getElementById("role");
    if (!table || !bucket || !role) { return; }
    var p = params();
    if (p.bucket) { bucket.value = p.bucket; }
    if (p.role) { role.value = p.role; }
    function apply() {
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
        var ok = (!bucket.value || tr.getAttribute("data-bucket") === bucket.value) &&
                 (!role.value || tr.getAttribute("data-role") === role.value);
        tr.hidden = !ok;
        if (ok) { shown += 1; }
      });
      document.getElementById("shown").textContent = String(shown);
    }
    [bucket, role].forEach(function (sel) {
      sel.addEventListener("change", function () {
        setParam(sel.id, sel.value || null);
        apply();
      });
    });
    apply();
  }
  function init() { initTables(); initViewer(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); }
  else { init(); }
}());
