/* CHOPS chat widget: no build step. Embed with
 *   <script src="https://<chops-host>/widget.js" data-token="<user JWT>"></script>
 * (or data-nickname="..." when the service runs in demo mode). It adds a floating button that opens
 * a chat panel talking to the JSON API: POST /v1/conversations, then POST
 * /v1/conversations/<id>/messages as Server-Sent Events (progress, delta, answer, error), authorised
 * by the conversation token in "Authorization: Bearer <token>"; 202 means staff have the conversation.
 * Each message carries an Idempotency-Key, the same on every resend, so it is never answered twice; a
 * 429 "busy" (the model's queue is full) is retried by itself once its Retry-After has passed.
 * Everything a user or the model wrote is set with textContent, never as HTML.
 */
(function () {
  "use strict";

  var STEP_LABELS = {classify: "understanding the request", execute: "working on it",
                     verify: "checking the answer", commit: "saving the change", reply: "writing the reply"};
  var BUSY_RETRIES = 3;  // automatic resends after "busy"; then the user decides (the Retry button)

  /** A fresh key for one message (kept for its resends). */
  function messageKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return "m-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  /** The honest status of a finished turn: [css class, label], or null for answers and reads. */
  function badgeFor(p) {
    if (p.queued) return ["chops-queued", "Waiting for staff approval — their decision will appear here."];
    if (p.pending) return ["chops-awaiting", "Nothing is changed until you confirm."];
    if (p.outcome === "declined" || p.outcome === "lapsed") return ["chops-noop", "Nothing changed."];
    if (!p.operation && !p.error) return null;
    if (p.outcome === "ok_noop") return ["chops-noop", "Nothing changed."];
    if (p.committed && p.outcome === "ok") return ["chops-committed", "Change saved."];
    // A request of several changes of which some were saved: the reply says which were not, and why.
    if (p.committed && p.outcome === "partial") return ["chops-partial", "Partly done — see the reply."];
    if (p.error || (p.outcome && p.outcome !== "ok")) return ["chops-not-done", "Not done."];
    return null;
  }

  function clock(date) {
    var t = el("time", "chops-time", date.toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}));
    t.dateTime = date.toISOString();
    return t;
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
    this.log.setAttribute("role", "log");
    this.log.setAttribute("aria-live", "polite");
    this.log.setAttribute("aria-label", "Conversation");
    this.form = el("form", "chops-form");
    this.input = el("textarea", "chops-input");
    this.input.name = "text";
    this.input.rows = 2;
    this.input.placeholder = "Ask a question or request a change…";
    this.input.setAttribute("aria-label", "Your message (Enter sends, Shift+Enter adds a line)");
    this.send = el("button", "chops-send", "Send");
    this.send.type = "submit";
    this.form.appendChild(this.input);
    this.form.appendChild(this.send);
    this.status = el("p", "chops-status");
    this.status.setAttribute("role", "status");
    this.status.hidden = true;
    this.root.appendChild(this.status);
    this.root.appendChild(this.log);
    this.root.appendChild(this.form);
    var self = this;
    this.form.addEventListener("submit", function (ev) { ev.preventDefault(); self.submit(); });
    this.input.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); self.submit(); }
    });
    this.greet();
  };

  /* The agent speaks first: its opening line, in the browser's language, before anything is sent. */
  Widget.prototype.greet = function () {
    var self = this;
    var lang = (navigator.language || "en").split("-")[0];
    fetch(this.base + "/v1/greeting?lang=" + encodeURIComponent(lang)).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (data) {
      if (data && data.greeting && !self.log.firstChild) self.bubble("greeting", data.greeting);
    }).catch(function () { /* no greeting: the panel simply starts empty */ });
  };

  Widget.prototype.bubble = function (who, text, when) {
    var b = el("div", "chops-msg chops-" + who);
    var meta = el("div", "chops-meta");
    meta.appendChild(el("span", "chops-visually-hidden", who.indexOf("user") === 0 ? "You" : "Support"));
    meta.appendChild(clock(when ? new Date(when) : new Date()));
    b.appendChild(meta);
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

  Widget.prototype.submit = function (retryText, retryKey) {
    var text = retryText || this.input.value.trim();
    if (!text) return;
    // The answer shows before its stream has closed: a message sent in that moment is sent once the
    // turn is over rather than dropped (the box keeps its text until then).
    if (this.busy) { if (!retryText) this.sendAfter = true; return; }
    this.busy = true;
    this.send.disabled = true;
    if (!retryText) { this.input.value = ""; this.bubble("user", text); }
    var pending = this.bubble("bot chops-pending", "");
    var typing = el("div", "chops-typing");
    typing.setAttribute("role", "status");
    typing.appendChild(el("span", "chops-visually-hidden", "Support is typing"));
    for (var i = 0; i < 3; i++) typing.appendChild(el("span", "chops-dot"));
    pending.appendChild(typing);
    var turn = {pending: pending, progress: el("ol", "chops-progress"), answered: false,
                key: retryKey || messageKey(), busyRetries: 0};
    turn.progress.setAttribute("aria-hidden", "true");
    pending.appendChild(turn.progress);
    var self = this;
    var countBefore = null;
    this.start().then(function (conv) {
      return self.turnCount().then(function (n) { countBefore = n; return self.stream(conv, text, turn); });
    }).then(function () {
      if (!turn.answered) throw new TypeError("the connection closed before the answer");
    }).catch(function (err) {
      return self.recover(err, text, turn, countBefore);
    }).then(function () {
      typing.remove();
      self.busy = false;
      self.send.disabled = false;
      self.input.focus();
      if (self.sendAfter) { self.sendAfter = false; self.submit(); }
    });
  };

  /** Turns stored so far (null if unknown): after a dropped connection, more means it was answered. */
  Widget.prototype.turnCount = function () {
    return this.history().then(function (t) { return t ? t.length : null; }, function () { return null; });
  };

  Widget.prototype.history = function () {
    var self = this;
    if (!this.conversation) return Promise.resolve(null);
    return fetch(this.base + "/v1/conversations/" + encodeURIComponent(this.conversation.id), {
      headers: {"Authorization": "Bearer " + this.conversation.token}
    }).then(function (r) { return r.ok ? r.json() : null; }).then(function (d) {
      if (d && d.state && d.state.state !== "agent") self.showState(d.state, d.state.staff_online);
      return d ? d.turns : null;
    });
  };

  /* A dropped stream may still have been answered (and a change saved): look in the history before
   * offering a retry, so one request is never carried out twice by an automatic resend. */
  Widget.prototype.recover = function (err, text, turn, countBefore) {
    var self = this, dropped = err instanceof TypeError;
    var check = dropped && countBefore !== null ? this.history() : Promise.resolve(null);
    return check.catch(function () { return null; }).then(function (turns) {
      var last = turns && turns.length > countBefore ? turns[turns.length - 1] : null;
      if (last && last.user_text === text) { self.answer(last, turn); return; }
      self.fail(turn, dropped ? "The connection dropped before the answer arrived." : "Sorry: " + err.message,
                dropped || err.busy ? text : null);
    });
  };

  Widget.prototype.fail = function (turn, message, retryText) {
    var self = this, p = turn.pending;
    p.classList.remove("chops-pending");
    p.classList.add("chops-error");
    p.querySelector(".chops-text").textContent = message;
    turn.progress.remove();
    dropQueueLine(turn);
    if (retryText) {
      var again = el("button", "chops-retry", "Retry");
      again.type = "button";
      again.addEventListener("click", function () { p.remove(); self.submit(retryText, turn.key); });
      p.appendChild(again);
    }
    this.log.scrollTop = this.log.scrollHeight;
  };

  Widget.prototype.stream = function (conv, text, turn) {
    var self = this;
    return fetch(this.base + "/v1/conversations/" + encodeURIComponent(conv.id) + "/messages", {
      method: "POST",
      headers: {"Content-Type": "application/json", "Accept": "text/event-stream",
                "Authorization": "Bearer " + conv.token, "Idempotency-Key": turn.key},
      body: JSON.stringify({text: text})
    }).then(function (r) {
      if (r.status === 429) return r.json().then(function (data) { return self.retryWhenFree(conv, text, turn, r, data); });
      if (!r.ok) {
        return r.json().then(function (data) { throw new Error(data.error ? data.error.message : r.statusText); });
      }
      if (r.status === 202) return r.json().then(function (data) { self.heldForStaff(data, turn); });
      return chopsReadEvents(r, function (event, payload) { self.onEvent(event, payload, turn); });
    });
  };

  /* The model's queue was full: nothing was sent on. Say so, wait for Retry-After, resend (same key). */
  Widget.prototype.retryWhenFree = function (conv, text, turn, r, data) {
    var err = data.error || {}, self = this;
    var seconds = parseInt(r.headers.get("Retry-After") || err.retry_after || "5", 10);
    if (err.code !== "busy" || turn.busyRetries >= BUSY_RETRIES) {
      var fail = new Error(err.message || r.statusText);
      fail.busy = err.code === "busy";
      throw fail;
    }
    turn.busyRetries += 1;
    this.queueLine(turn, err.message + " (retrying by itself)");
    return new Promise(function (resolve) { setTimeout(resolve, Math.max(1, seconds) * 1000); })
      .then(function () { return self.stream(conv, text, turn); });
  };

  /** The waiting turn's place in the queue (announced to screen readers), replaced as it moves. */
  Widget.prototype.queueLine = function (turn, message) {
    var line = turn.pending.querySelector(".chops-queue");
    if (!line) {
      line = el("p", "chops-queue");
      line.setAttribute("role", "status");
      turn.pending.appendChild(line);
    }
    line.textContent = message;
  };

  function dropQueueLine(turn) {
    var line = turn.pending.querySelector(".chops-queue");
    if (line) line.remove();
  }

  Widget.prototype.onEvent = function (event, payload, turn) {
    if (event === "progress" && payload.step === "queued") {
      this.queueLine(turn, payload.message);
    } else if (event === "progress") {
      dropQueueLine(turn);  /* its turn has come */
      var label = STEP_LABELS[payload.step] || payload.step;
      if (payload.iteration > 1) label += " (attempt " + payload.iteration + ")";
      turn.progress.appendChild(el("li", "chops-step chops-step-" + payload.step, label));
    } else if (event === "delta") {
      var typing = turn.pending.querySelector(".chops-typing");
      if (typing) typing.remove();
      var draft = turn.pending.querySelector(".chops-text");
      if (turn.draftIteration !== payload.iteration) {  /* a retried attempt writes its draft afresh */
        draft.textContent = "";
        turn.draftIteration = payload.iteration;
      }
      draft.textContent += String(payload.text || "");
    } else if (event === "answer") {
      this.answer(payload, turn);
    } else if (event === "error") {
      throw new Error(payload.error ? payload.error.message : "the service failed");
    }
    this.log.scrollTop = this.log.scrollHeight;
  };

  /** Show the final turn: its reply replaces any streamed draft; the badge says what really happened. */
  Widget.prototype.answer = function (payload, turn) {
    var p = turn.pending;
    turn.answered = true;
    dropQueueLine(turn);
    p.classList.remove("chops-pending");
    var typing = p.querySelector(".chops-typing");
    if (typing) typing.remove();
    p.querySelector(".chops-text").textContent = payload.reply;
    var badge = badgeFor(payload);
    if (badge) p.appendChild(el("div", "chops-badge " + badge[0], badge[1]));
    p.querySelector(".chops-time").replaceWith(clock(payload.created_at ? new Date(payload.created_at) : new Date()));
    turn.progress.classList.add("chops-done");
    if (window.ChopsRating) window.ChopsRating.attach(p, payload.turn_id, this);  /* widget_rating.js */
    if (payload.pending) this.confirmButtons(p, payload.reply || "");
    this.log.scrollTop = this.log.scrollHeight;
    this.afterAnswer(payload);
  };

  /* A change described and waiting for the user's yes: Confirm and Cancel send the same answer a typed
     message would (the agent reads it like any reply), in the language of the question. */
  var CONFIRM_WORDS = {en: ["Confirm", "Yes, go ahead.", "Cancel", "No, leave it as it is."],
                       zh: ["确认", "好的，请继续。", "取消", "不用了，保持不变。"]};
  Widget.prototype.confirmButtons = function (bubble, question) {
    var self = this;
    var words = CONFIRM_WORDS[/[\u4e00-\u9fff]/.test(question) ? "zh" : "en"];
    var bar = el("div", "chops-confirm");
    [[words[0], words[1], "chops-confirm-yes"], [words[2], words[3], "chops-confirm-no"]].forEach(function (b) {
      var button = el("button", b[2], b[0]);
      button.type = "button";
      button.addEventListener("click", function () {
        bar.remove();
        self.input.value = b[1];  /* sent as the user's own message, shown in the conversation */
        self.submit();
      });
      bar.appendChild(button);
    });
    bubble.appendChild(bar);
    /* A typed message decides the change too: the buttons then no longer apply. */
    this.form.addEventListener("submit", function () { bar.remove(); }, {once: true});
  };

  /* Staff decisions, people from support and state changes arrive on the conversation's event
   * stream: widget_desk.js (served in front of this file as one /widget.js) adds that part. */
  chopsDesk(Widget.prototype, {el: el});

  function mount(root, opts) {
    return new Widget(root, opts || {});
  }

  /* A speech-bubble icon as SVG (an emoji needs a font the page may not have). */
  function chatIcon() {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "26");
    svg.setAttribute("height", "26");
    svg.setAttribute("aria-hidden", "true");
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z");
    path.setAttribute("fill", "currentColor");
    svg.appendChild(path);
    return svg;
  }

  /** A floating button that opens the chat panel; Escape closes it and gives focus back. */
  function launch(opts) {
    var button = el("button", "chops-launcher");
    button.type = "button";
    button.setAttribute("aria-label", "Open support chat");
    button.setAttribute("aria-expanded", "false");
    button.appendChild(chatIcon());
    var panel = el("section", "chops-panel");
    panel.id = "chops-panel";
    panel.hidden = true;
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-label", "Support chat");
    button.setAttribute("aria-controls", panel.id);
    var head = el("header", "chops-head");
    head.appendChild(el("h2", "chops-title", "Support chat"));
    var close = el("button", "chops-close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Close support chat");
    head.appendChild(close);
    panel.appendChild(head);
    var body = el("div", "chops-body");
    panel.appendChild(body);
    document.body.appendChild(panel);
    document.body.appendChild(button);
    var widget = mount(body, opts);
    function toggle(open) {
      panel.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      button.hidden = open;
      (open ? widget.input : button).focus();
    }
    button.addEventListener("click", function () { toggle(true); });
    close.addEventListener("click", function () { toggle(false); });
    panel.addEventListener("keydown", function (ev) { if (ev.key === "Escape") toggle(false); });
    widget.open = function () { toggle(true); };
    return widget;
  }

  window.ChopsWidget = {mount: mount, launch: launch, badgeFor: badgeFor};

  var script = document.currentScript;
  if (script && (script.dataset.token || script.dataset.nickname)) {
    var root = script.src.replace(/\/widget\.js(\?.*)?$/, "");
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = root + "/static/widget.css";
    document.head.appendChild(css);
    launch({base: script.dataset.base || root, token: script.dataset.token, nickname: script.dataset.nickname});
  }
})();
