/* CHOPS chat widget, the event-stream and support desk part: served in front of widget.js as one
 * /widget.js. chopsReadEvents reads any text/event-stream response (the reply stream and this one).
 * While a person from support has the conversation (or a write waits for staff approval) the widget
 * listens to GET /v1/conversations/<id>/events (Server-Sent Events read with fetch, so the bearer
 * token and Last-Event-ID go in headers), shows the state in words, staff messages with the staff
 * member's name and staff decisions, and reconnects where it left off when a stream ends.
 * Everything shown is set with textContent, never as HTML.
 */
/** Read a text/event-stream response to its end: onEvent(name, parsed data) per event with data. */
function chopsReadEvents(response, onEvent) {
  var reader = response.body.getReader(), decoder = new TextDecoder(), buffer = "";
  function dispatch(raw) {
    var event = "message", data = "";
    raw.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) event = line.slice(6).trim();
      else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
    });
    if (data) onEvent(event, JSON.parse(data));
  }
  function pump() {
    return reader.read().then(function (chunk) {
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, {stream: true});
      var parts = buffer.split("\n\n");
      buffer = parts.pop();
      parts.forEach(dispatch);
      return pump();
    });
  }
  return pump();
}

function chopsDesk(proto, h) {
  "use strict";
  var el = h.el;

  function statusText(state, staffOnline) {
    if (state.state === "waiting") {
      return "Waiting for a person — a person will reply here." +
        (staffOnline === false ? " No one from support is online right now; they will answer as soon as they can." : "");
    }
    if (state.state === "staff") return (state.staff || "A person") + " from support is replying here.";
    if (state.state === "closed") return "This conversation was closed. Your next message starts a new one.";
    return null;
  }

  /** Show the state in words; ``staffOnline`` (known from the API, not from state events) is kept. */
  proto.showState = function (state, staffOnline) {
    this.state = state.state;
    if (staffOnline !== undefined) this.staffOnline = staffOnline;
    var text = statusText(state, this.staffOnline);
    this.status.hidden = !text;
    this.status.textContent = text || "";
    this.root.dataset.state = state.state;
    if (state.state === "closed") {  /* the next message starts a new conversation */
      this.conversation = null;
      delete this.root.dataset.conversationId;
    }
  };

  /** 202: staff have the conversation; the message was stored for them (no reply from the agent). */
  proto.heldForStaff = function (data, turn) {
    turn.answered = true;
    turn.pending.remove();
    this.showState(data.state, data.state.staff_online);
    this.listen();
  };

  /** After an answer: a hand-off or a write queued for approval means staff will write here. */
  proto.afterAnswer = function (payload) {
    if (payload.queued) this.awaiting = (this.awaiting || 0) + 1;
    if (payload.route === "handoff" || payload.queued) this.listen();
  };

  proto.needsLive = function () {
    return !!this.conversation && (this.state === "waiting" || this.state === "staff" || this.awaiting > 0);
  };

  /** Read the event stream until it ends, then reconnect while it is still needed. */
  proto.listen = function () {
    var self = this, conv = this.conversation;
    if (this.listening || !conv) return;
    this.listening = true;
    if (!this.lastEventId) {  /* the first time: whether anyone from support is online */
      this.history().then(function () {}, function () {});
    }
    this.shownTurns = this.shownTurns || {};
    var headers = {"Authorization": "Bearer " + conv.token, "Accept": "text/event-stream"};
    if (this.lastEventId) headers["Last-Event-ID"] = String(this.lastEventId);
    fetch(this.base + "/v1/conversations/" + encodeURIComponent(conv.id) + "/events", {headers: headers})
      .then(function (r) {
        if (!r.ok) throw new Error("event stream " + r.status);
        return chopsReadEvents(r, function (kind, e) { self.onDeskEvent(kind, e, conv); });
      })
      .then(function () { return 0; }, function () { return 3000; })
      .then(function (pause) {
        self.listening = false;
        if (self.conversation === conv && self.needsLive()) setTimeout(function () { self.listen(); }, pause);
      });
  };

  proto.onDeskEvent = function (kind, e, conv) {
    if (this.conversation !== conv) return;
    this.lastEventId = e.id;
    if (kind === "state") {
      this.showState({state: e.to, staff: e.display_name || e.actor, changed_at: e.created_at});
    } else if (kind === "staff") {
      var b = this.bubble("bot chops-person", e.text, e.created_at);
      b.querySelector(".chops-meta").prepend(el("span", "chops-name", (e.display_name || e.actor) + " · support"));
    } else if (kind === "turn" && e.turn && !e.turn.user_text && !this.shownTurns[e.turn.turn_id]) {
      /* a reply-only turn: a staff decision on a queued write */
      this.shownTurns[e.turn.turn_id] = true;
      this.awaiting = Math.max(0, (this.awaiting || 0) - 1);
      this.bubble("bot chops-staff", e.turn.reply, e.turn.created_at);
    }
    /* user events are the user's own messages, already shown; other turns came back on their POST */
  };
}
