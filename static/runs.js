/* bonnieboard runs list: the ticked runs, in the order they were ticked, in <input id="chosen"
 * name="runs"> (a comma list). The filter form sends it with every filter change (hx-include), so
 * ticks survive filtering and paging, and "Compare selected" sends it as runs=: the first run ticked
 * is the comparison's baseline. "Select all N shown" ticks the rest of the page's runs, in the order
 * shown. Delegated listeners: the table is swapped by htmx.
 */
(function () {
  "use strict";

  function ids(text) {
    return text.split(",").filter(function (part) { return part !== ""; });
  }

  function show(list) {
    const text = document.getElementById("chosen-text");
    if (text) {
      text.textContent = list.length ? list.length + " ticked: " + list.map(function (id, i) { return "#" + id + (i === 0 ? " (baseline)" : ""); }).join(" ") : "";
    }
  }

  document.addEventListener("change", function (e) {
    const box = e.target;
    if (!box.matches || !box.matches("input.choose")) return;
    const chosen = document.getElementById("chosen");
    if (!chosen) return;
    let list = ids(chosen.value).filter(function (id) { return id !== box.value; });
    if (box.checked) list.push(box.value);
    chosen.value = list.join(",");
    show(list);
  });

  document.addEventListener("click", function (e) {
    const button = e.target;
    if (!button.matches || !button.matches("button.select-shown")) return;
    const chosen = document.getElementById("chosen");
    if (!chosen) return;
    const list = ids(chosen.value);
    document.querySelectorAll("input.choose").forEach(function (box) {
      box.checked = true;
      if (list.indexOf(box.value) < 0) list.push(box.value);
    });
    chosen.value = list.join(",");
    show(list);
  });
})();
