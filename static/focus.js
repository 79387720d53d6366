/* bonnieboard: keyboard focus across htmx updates.
 *
 * An htmx update that replaces the part of the page holding the focused control (the compare page's form is inside
 * the fragment it swaps) would leave the focus on <body>: a keyboard or screen-reader user who changed the mode or
 * pressed Enter in "Group by" would start again from the top of the page. So the control that had the focus before
 * the swap gets it back after it: the same element by its id, else the control of the same name (and, for a radio
 * button, checkbox or submit button, the same value) in the new content, with a text box's caret where it was, or a
 * button, link or fold without a name (the form's "Show") of the same words;
 * when no such control is left, the updated region itself takes the focus.
 * htmx 4 names the events htmx:before:swap and htmx:after:swap. No inline script: the CSP allows files only.
 */
(function () {
  "use strict";

  let saved = null;

  function describe(element) {
    if (!element || element === document.body || element === document.documentElement) return null;
    const text = typeof element.selectionStart === "number" && /^(text|search|url|tel|password|)$/.test(element.type || "");
    return {
      element: element,
      id: element.id,
      name: element.getAttribute("name"),
      tag: element.tagName,
      type: element.type || "",
      value: element.value,
      text: (element.textContent || "").trim(),
      caret: text ? [element.selectionStart, element.selectionEnd] : null,
    };
  }

  function find(focus) {
    if (focus.element.isConnected) return focus.element;
    if (focus.id) {
      const byId = document.getElementById(focus.id);
      if (byId) return byId;
    }
    if (!focus.name) {
      // a button or link without a name ("Show"): the one of the same kind and words
      if (!focus.text || !/^(BUTTON|A|SUMMARY)$/.test(focus.tag)) return null;
      return Array.from(document.getElementsByTagName(focus.tag)).find(function (e) {
        return (e.textContent || "").trim() === focus.text && (e.type || "") === focus.type;
      }) || null;
    }
    const named = Array.from(document.getElementsByName(focus.name)).filter(function (e) { return e.tagName === focus.tag; });
    const valued = /^(radio|checkbox|submit|button)$/.test(focus.type);
    const same = named.find(function (e) { return !valued || e.value === focus.value; });
    // a radio group's checked button; a removed run's × button: the next run's
    return same || named.find(function (e) { return e.checked; }) || named[0] || null;
  }

  document.addEventListener("htmx:before:swap", function () {
    saved = describe(document.activeElement);
  });

  document.addEventListener("htmx:after:swap", function (event) {
    const focus = saved;
    saved = null;
    if (!focus) return;
    const now = document.activeElement;
    if (now && now !== document.body && now.isConnected && now !== focus.element) return; // the reader moved on
    if (focus.element.isConnected && now === focus.element) return;
    const target = find(focus);
    if (target) {
      target.focus({ preventScroll: true });
      if (focus.caret && typeof target.setSelectionRange === "function" && target.value === focus.value) {
        target.setSelectionRange(focus.caret[0], focus.caret[1]);
      }
      return;
    }
    // The control is gone: the region the update replaced takes the focus, so that reading goes on from there.
    const region = event.target instanceof Element ? event.target : null;
    if (region && region !== document.body) {
      if (!region.hasAttribute("tabindex")) region.setAttribute("tabindex", "-1");
      region.focus({ preventScroll: true });
    }
  });
})();
