// Starts the vendored Swagger UI on /docs. A file of its own, not an inline script, because the
// Content-Security-Policy allows only this site's scripts.
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    dom_id: "#swagger-ui",
    // no deep links: their <a> inside each operation's <button> is a control nested in a control (axe: nested-interactive)
    deepLinking: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    persistAuthorization: false,
  });
});
