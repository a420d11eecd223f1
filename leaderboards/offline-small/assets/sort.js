// Click a header of a table.sortable to sort its rows; cells sort by their data-value
// (numbers for th[data-type=num], text otherwise). Empty values always sort last.
(function () {
  "use strict";
  function key(cell, numeric) {
    if (!cell) { return null; }
    var v = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (v === null || v === "") { return null; }
    if (numeric) { var f = parseFloat(v); return isNaN(f) ? null : f; }
    return v.toLowerCase();
  }
  function sortBy(table, th, index) {
    var numeric = th.getAttribute("data-type") === "num";
    var asc = th.getAttribute("aria-sort") !== "ascending";
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
  function init() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      var heads = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(heads, function (th, i) {
        th.addEventListener("click", function () { sortBy(table, th, i); });
      });
    });
    document.body.setAttribute("data-sortable-ready", String(tables.length));
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); }
  else { init(); }
}());
