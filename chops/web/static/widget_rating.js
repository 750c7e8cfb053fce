/* CHOPS chat widget, part 2: rating an answer. Thumbs up/down under each agent answer, then an optional
 * comment after a thumbs down: POST /v1/conversations/<id>/turns/<turn_id>/rating (rating again replaces
 * the rating). GET /widget.js serves this file together with widget.js (chops/web/widget.py); the widget
 * calls ChopsRating.attach(bubble, turnId, widget) when an answer is shown.
 */
(function () {
  "use strict";

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    node.className = cls;
    if (text) node.textContent = text;
    return node;
  }

  function thumbIcon(down) {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "16");
    svg.setAttribute("height", "16");
    svg.setAttribute("aria-hidden", "true");
    if (down) svg.setAttribute("transform", "rotate(180)");
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", "M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.4-1.1L13.2 1 6.6 7.6" +
                           "C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z");
    path.setAttribute("fill", "currentColor");
    svg.appendChild(path);
    return svg;
  }

  /** Send one rating; updates the buttons' pressed state and the status line, or says it failed. */
  function rate(widget, bar, turnId, thumbs, comment) {
    var conv = widget.conversation, status = bar.querySelector(".chops-rate-status");
    return fetch(widget.base + "/v1/conversations/" + encodeURIComponent(conv.id) + "/turns/" + turnId + "/rating", {
      method: "POST", headers: {"Content-Type": "application/json", "Authorization": "Bearer " + conv.token},
      body: JSON.stringify(comment ? {thumbs: thumbs, comment: comment} : {thumbs: thumbs})
    }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data.error ? data.error.message : r.statusText);
      });
    }).then(function () {
      bar.querySelectorAll(".chops-thumb").forEach(function (b) {
        b.setAttribute("aria-pressed", String(b.classList.contains("chops-thumb-" + thumbs)));
      });
      status.textContent = comment ? "Thanks for telling us." : "Thanks!";
      var form = bar.querySelector(".chops-comment");
      if (thumbs === "down" && !comment && !form) askComment(widget, bar, turnId);
      else if (form && (thumbs === "up" || comment)) form.remove();
    }, function (err) { status.textContent = "The rating was not saved: " + err.message; });
  }

  function askComment(widget, bar, turnId) {
    var form = el("form", "chops-comment"), input = el("input", "chops-comment-input");
    input.maxLength = 1000;
    input.placeholder = "What was wrong? (optional)";
    input.setAttribute("aria-label", "What was wrong with this answer? (optional)");
    var send = el("button", "chops-comment-send", "Send");
    send.type = "submit";
    form.appendChild(input);
    form.appendChild(send);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var text = input.value.trim();
      if (text) rate(widget, bar, turnId, "down", text);
    });
    bar.appendChild(form);
    input.focus();
  }

  /** Add the rating buttons under an answer bubble (``widget``: its base URL and conversation). */
  function attach(bubble, turnId, widget) {
    if (!turnId || !widget.conversation) return;
    var bar = el("div", "chops-rate");
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "Rate this answer");
    ["up", "down"].forEach(function (thumbs) {
      var b = el("button", "chops-thumb chops-thumb-" + thumbs);
      b.type = "button";
      b.setAttribute("aria-label", thumbs === "up" ? "Helpful" : "Not helpful");
      b.setAttribute("aria-pressed", "false");
      b.appendChild(thumbIcon(thumbs === "down"));
      b.addEventListener("click", function () { rate(widget, bar, turnId, thumbs); });
      bar.appendChild(b);
    });
    var status = el("span", "chops-rate-status");
    status.setAttribute("role", "status");
    bar.appendChild(status);
    bubble.appendChild(bar);
  }

  window.ChopsRating = {attach: attach};
})();
