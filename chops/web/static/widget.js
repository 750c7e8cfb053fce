/* CHOPS chat widget: no build step. Embed with
 *   <script src="https://<chops-host>/widget.js" data-token="<signed user token>"></script>
 * (or data-nickname="..." when the service runs in demo mode). It opens a chat panel that talks to
 * the JSON API: POST /v1/conversations, then POST /v1/conversations/<id>/messages as Server-Sent
 * Events, authorised by the conversation token in "Authorization: Bearer <token>".
 */
(function () {
  "use strict";

  var STEP_LABELS = {classify: "understanding the request", execute: "working on it",
                     verify: "checking the answer", commit: "saving the change", reply: "writing the reply"};

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function Widget(root, opts) {
    this.base = (opts.base || "").replace(/\/$/, "");
    this.token = opts.token || null;
    this.nickname = opts.nickname || null;
    this.conversation = null;  // {id, token}
    this.root = root;
    this.build();
  }

  Widget.prototype.build = function () {
    this.root.classList.add("chops-widget");
    this.log = el("div", "chops-log");
    this.log.setAttribute("aria-live", "polite");
    this.form = el("form", "chops-form");
    this.input = el("textarea", "chops-input");
    this.input.name = "text";
    this.input.rows = 2;
    this.input.placeholder = "Ask a question or request a change…";
    this.send = el("button", "chops-send", "Send");
    this.send.type = "submit";
    this.form.appendChild(this.input);
    this.form.appendChild(this.send);
    this.root.appendChild(this.log);
    this.root.appendChild(this.form);
    var self = this;
    this.form.addEventListener("submit", function (ev) { ev.preventDefault(); self.submit(); });
    this.input.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); self.submit(); }
    });
  };

  Widget.prototype.bubble = function (who, text) {
    var b = el("div", "chops-msg chops-" + who);
    b.appendChild(el("div", "chops-text", text));
    this.log.appendChild(b);
    this.log.scrollTop = this.log.scrollHeight;
    return b;
  };

  Widget.prototype.start = function () {
    var self = this;
    if (this.conversation) return Promise.resolve(this.conversation);
    var body = this.token ? {token: this.token} : {nickname: this.nickname};
    return fetch(this.base + "/v1/conversations", {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data.error ? data.error.message : "could not start the chat");
        self.conversation = {id: data.id, token: data.token};
        self.root.dataset.conversationId = data.id;
        return self.conversation;
      });
    });
  };

  Widget.prototype.submit = function () {
    var text = this.input.value.trim();
    if (!text || this.busy) return;
    this.busy = true;
    this.send.disabled = true;
    this.input.value = "";
    this.bubble("user", text);
    var pending = this.bubble("bot chops-pending", "");
    var progress = el("ol", "chops-progress");
    pending.appendChild(progress);
    var self = this;
    this.start().then(function (conv) {
      return self.stream(conv, text, pending, progress);
    }).catch(function (err) {
      pending.classList.remove("chops-pending");
      pending.classList.add("chops-error");
      pending.querySelector(".chops-text").textContent = "Sorry: " + err.message;
    }).then(function () {
      self.busy = false;
      self.send.disabled = false;
      self.input.focus();
    });
  };

  Widget.prototype.stream = function (conv, text, pending, progress) {
    var self = this;
    return fetch(this.base + "/v1/conversations/" + encodeURIComponent(conv.id) + "/messages", {
      method: "POST",
      headers: {"Content-Type": "application/json", "Accept": "text/event-stream",
                "Authorization": "Bearer " + conv.token},
      body: JSON.stringify({text: text})
    }).then(function (r) {
      if (!r.ok) {
        return r.json().then(function (data) { throw new Error(data.error ? data.error.message : r.statusText); });
      }
      var reader = r.body.getReader(), decoder = new TextDecoder(), buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) return;
          buffer += decoder.decode(chunk.value, {stream: true});
          var parts = buffer.split("\n\n");
          buffer = parts.pop();
          parts.forEach(function (part) { self.onEvent(part, pending, progress); });
          return pump();
        });
      }
      return pump();
    });
  };

  Widget.prototype.onEvent = function (raw, pending, progress) {
    var event = "message", data = "";
    raw.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) event = line.slice(6).trim();
      else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
    });
    if (!data) return;
    var payload = JSON.parse(data);
    if (event === "progress") {
      var label = STEP_LABELS[payload.step] || payload.step;
      if (payload.iteration > 1) label += " (attempt " + payload.iteration + ")";
      progress.appendChild(el("li", "chops-step chops-step-" + payload.step, label));
    } else if (event === "delta") {
      /* A piece of the answer the model is writing: a draft (plain text) until the answer event.
         A new attempt (the verifier rejected the last) starts its draft afresh. */
      var draft = pending.querySelector(".chops-text");
      if (pending.draftIteration !== payload.iteration) {
        draft.textContent = "";
        pending.draftIteration = payload.iteration;
      }
      draft.textContent += payload.text;
    } else if (event === "answer") {
      pending.classList.remove("chops-pending");
      pending.querySelector(".chops-text").textContent = payload.reply;
      if (payload.queued) {
        pending.appendChild(el("div", "chops-badge chops-queued",
                               "Sent to support staff for approval — you will see their decision here."));
      } else if (payload.committed) {
        pending.appendChild(el("div", "chops-badge chops-committed", "Change saved."));
      }
      progress.classList.add("chops-done");
    } else if (event === "error") {
      throw new Error(payload.error ? payload.error.message : "the service failed");
    }
    this.log.scrollTop = this.log.scrollHeight;
  };

  /* Staff decisions arrive as reply-only turns: fetch the history to show them. */
  Widget.prototype.refresh = function () {
    var self = this;
    if (!this.conversation) return Promise.resolve();
    return fetch(this.base + "/v1/conversations/" + encodeURIComponent(this.conversation.id), {
      headers: {"Authorization": "Bearer " + this.conversation.token}
    }).then(function (r) { return r.json(); }).then(function (data) {
      var shown = self.log.querySelectorAll(".chops-staff").length;
      (data.turns || []).filter(function (t) { return !t.user_text; }).slice(shown).forEach(function (t) {
        self.bubble("bot chops-staff", t.reply);
      });
    });
  };

  window.ChopsWidget = {
    /** Mount a widget in ``root``: opts = {base, token} or {base, nickname} (demo mode). */
    mount: function (root, opts) {
      var w = new Widget(root, opts || {});
      setInterval(function () { if (!w.busy) w.refresh(); }, 5000);
      return w;
    }
  };

  var script = document.currentScript;
  if (script && (script.dataset.token || script.dataset.nickname)) {
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = script.src.replace(/\/widget\.js(\?.*)?$/, "/static/widget.css");
    document.head.appendChild(css);
    var host = el("div", "chops-floating");
    document.body.appendChild(host);
    var base = script.dataset.base || script.src.replace(/\/widget\.js(\?.*)?$/, "");
    window.ChopsWidget.mount(host, {base: base, token: script.dataset.token, nickname: script.dataset.nickname});
  }
})();
