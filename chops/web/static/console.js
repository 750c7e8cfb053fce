/* Live parts of the console: an element with data-live="<url>" is re-fetched every few seconds. */
(function () {
  "use strict";
  document.querySelectorAll("[data-live]").forEach(function (node) {
    var period = parseInt(node.dataset.period || "3000", 10);
    setInterval(function () {
      if (document.hidden) return;
      fetch(node.dataset.live, {credentials: "same-origin"}).then(function (r) {
        if (r.ok) return r.text();
      }).then(function (html) {
        if (html !== undefined && html !== node.innerHTML) node.innerHTML = html;
      }).catch(function () {});
    }, period);
  });
})();
