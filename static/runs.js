/* bonnieboard runs list: the ticked runs, in the order they were ticked, in <input id="chosen"
 * name="runs"> (a comma list). The filter form sends it with every filter change (hx-include), so
 * ticks survive filtering and paging, and "Compare selected" sends it as runs=: the first run ticked
 * is the comparison's baseline. Delegated listener: the table is swapped by htmx.
 */
(function () {
  "use strict";

  function ids(text) {
    return text.split(",").filter(function (part) { return part !== ""; });
  }

  document.addEventListener("change", function (e) {
    const box = e.target;
    if (!box.matches || !box.matches("input.choose")) return;
    const chosen = document.getElementById("chosen");
    if (!chosen) return;
    let list = ids(chosen.value).filter(function (id) { return id !== box.value; });
    if (box.checked) list.push(box.value);
    chosen.value = list.join(",");
    const text = document.getElementById("chosen-text");
    if (text) {
      text.textContent = list.length ? list.length + " ticked: " + list.map(function (id, i) { return "#" + id + (i === 0 ? " (baseline)" : ""); }).join(" ") : "";
    }
  });
})();
