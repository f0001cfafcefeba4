// quiz serve: the only script. Pages work without it; it counts an exam's time down (and submits the
// exam when it is up), keeps a draft of every answer box in the browser, makes an exam's header links
// save like its buttons, and reloads the preview when the bank's file changes.
"use strict";

// The moments a screen reader is told the time left (in seconds): each five minutes, then 1 minute
// and 10 seconds. Said in words in a polite live region; the focus never moves.
function announcement(left, last) {
  if (left <= 0 || left >= last) return null;
  for (const mark of [60, 10]) {
    if (left <= mark && last > mark) return mark === 60 ? "1 minute left." : "10 seconds left.";
  }
  const mark = Math.floor((last - 1) / 300) * 300;
  if (mark >= 300 && left <= mark) {
    const minutes = mark / 60;
    return minutes + " minutes left.";
  }
  return null;
}

function startTimer(timer) {
  const text = document.getElementById("timer-text");
  const announce = document.getElementById("timer-announce");
  let last = Math.ceil(parseFloat(timer.dataset.remaining));
  const form = document.getElementById("time-up-form");
  const end = Date.now() + parseFloat(timer.dataset.remaining) * 1000;
  function pad(n) { return String(n).padStart(2, "0"); }
  function tick() {
    const left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
    text.textContent = h ? h + ":" + pad(m) + ":" + pad(s) : m + ":" + pad(s);
    timer.classList.toggle("low", left <= 60);
    const said = announce ? announcement(left, last) : null;
    if (said) announce.textContent = said;
    last = Math.min(last, left);
    if (left <= 0) {
      // The question's own form is sent as the exam's submission, so that what is in its box (typed
      // but not saved yet) is saved and graded; the page without one sends the bare time-up form.
      const answer = document.querySelector("form.answer");
      if (answer) {
        const reason = document.createElement("input");
        reason.type = "hidden";
        reason.name = "reason";
        reason.value = "time-up";
        answer.appendChild(reason);
        answer.action = form.action;
        answer.submit();
      } else {
        form.submit();
      }
      return;
    }
    window.setTimeout(tick, 250);
  }
  tick();
}

function watchBank(live) {
  const url = live.dataset.stampUrl;
  let stamp = live.dataset.stamp;
  async function poll() {
    try {
      const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (response.ok) {
        const data = await response.json();
        if (data.stamp !== stamp) {
          stamp = data.stamp;
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      // The server stopped: keep the page as it is and try again later.
    }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 1000);
}

// Drafts: what is typed in an answer box is kept in the browser's storage under the session, the
// question, the part and the variant, so that a reload, Back/Forward or a header link loses nothing;
// it is put back when the page comes again and removed once the answer is sent to be saved or graded.
const DRAFT_PREFIX = "quiz-draft:";
const DRAFT_DAYS = 7;

function draftStorage() {
  try {
    const store = window.localStorage;
    const probe = DRAFT_PREFIX + "probe";
    store.setItem(probe, "1");
    store.removeItem(probe);
    return store;
  } catch (error) {
    return null;  // storage refused (a private window, a full quota): the page asks before leaving
  }
}

function pruneDrafts(store) {
  const oldest = Date.now() - DRAFT_DAYS * 86400000;
  for (let i = store.length - 1; i >= 0; i--) {
    const key = store.key(i);
    if (!key || !key.startsWith(DRAFT_PREFIX)) continue;
    try {
      const draft = JSON.parse(store.getItem(key));
      if (!draft || typeof draft.at !== "number" || draft.at < oldest) store.removeItem(key);
    } catch (error) {
      store.removeItem(key);
    }
  }
}

// The answer a form holds: the text typed, or the letters ticked (as the server reads them).
function typedIn(form) {
  const box = form.querySelector("#response");
  if (box) return box.value;
  const ticked = [];
  for (const option of form.querySelectorAll("input[name=choice]")) {
    if (option.checked) ticked.push(option.value);
  }
  return ticked.join(", ");
}

function putBack(form, text) {
  const box = form.querySelector("#response");
  if (box) {
    box.value = text;
    // Told to the box alone (the event does not bubble to the form, whose listener would save the
    // draft again): a code box's line numbers follow what was put back.
    box.dispatchEvent(new Event("input"));
    return;
  }
  const letters = text.split(",").map(function (l) { return l.trim(); });
  for (const option of form.querySelectorAll("input[name=choice]")) {
    option.checked = letters.indexOf(option.value) >= 0;
  }
}

function keepDrafts(form) {
  const store = draftStorage();
  const key = DRAFT_PREFIX + form.dataset.draft;
  const shown = typedIn(form);  // what the server put in the box: a saved answer, or nothing
  let stored = store !== null;
  let leaving = false;
  if (store) {
    pruneDrafts(store);
    let draft = null;
    try { draft = JSON.parse(store.getItem(key)); } catch (error) { draft = null; }
    if (draft && typeof draft.text === "string" && draft.text !== shown && form.dataset.fresh !== "1") {
      putBack(form, draft.text);
      const note = document.getElementById("draft-note");
      if (note) note.hidden = false;
    }
  }
  function save() {
    const text = typedIn(form);
    if (!store) return;
    try {
      if (text === shown) store.removeItem(key);
      else store.setItem(key, JSON.stringify({ text: text, at: Date.now() }));
      stored = true;
    } catch (error) {
      stored = false;
    }
  }
  form.addEventListener("input", save);
  form.addEventListener("change", save);
  form.addEventListener("submit", function (event) {
    leaving = true;
    const by = event.submitter;
    // Kept for the buttons that neither save nor grade it (a hint; ending a practice session, which
    // asks first whether to check the answer): the page that comes next may lead back to the box.
    if (by && by.dataset.keepDraft === "1") return;
    if (store) store.removeItem(key);
  });
  window.addEventListener("beforeunload", function (event) {
    // Where a draft cannot help (the browser refuses to store it), leaving asks first.
    if (leaving || stored || typedIn(form) === shown) return;
    event.preventDefault();
    event.returnValue = "";
  });
  return function () {
    leaving = true;
    if (store) store.removeItem(key);  // sent to be saved: an answer that cannot be read comes back
  };
}

// How the answer in the box is read, shown as it is typed (asked of the server a moment after the
// last key; nothing is graded or saved). Without the script, the "Show how it reads" button asks.
function showReading(form) {
  const box = form.querySelector("#response");
  const shown = document.getElementById("reading");
  const button = document.getElementById("read-button");
  if (!box || !shown || !button) return;
  let waiting = null;
  let asked = 0;
  async function ask() {
    const text = box.value;
    const mine = ++asked;
    if (!text.trim()) {
      shown.textContent = "";
      return;
    }
    const body = new URLSearchParams();
    body.set("csrf", form.querySelector("input[name=csrf]").value);
    body.set("position", form.querySelector("input[name=position]").value);
    body.set("response", text);
    body.set("format", "json");
    try {
      const reply = await fetch(button.formAction, { method: "POST", body: body, credentials: "same-origin" });
      if (!reply.ok || mine !== asked) return;
      const data = await reply.json();
      shown.textContent = "";
      if (data.problem) {
        shown.textContent = "Cannot be read yet: " + data.problem;
      } else if (data.read_as) {
        shown.append("Read as ");
        const code = document.createElement("code");
        code.textContent = data.read_as;
        shown.append(code);
      }
    } catch (error) {
      // The server is away: the reading is shown again at the next key.
    }
  }
  box.addEventListener("input", function () {
    if (waiting !== null) window.clearTimeout(waiting);
    waiting = window.setTimeout(ask, 400);
  });
}

// An exam's header links leave the question as its buttons do: what is in the box is saved first.
function saveOnLeaving(form, leave) {
  const url = form.dataset.leave;
  for (const link of document.querySelectorAll("header.top a[href]")) {
    link.addEventListener("click", function (event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      event.preventDefault();
      const to = document.createElement("input");
      to.type = "hidden";
      to.name = "to";
      to.value = link.getAttribute("href");
      form.appendChild(to);
      form.action = url;
      leave();
      form.submit();
    });
  }
}

// A form that settles a kept draft (the page asking whether to check an answer before ending).
function settleDraft(form) {
  form.addEventListener("submit", function () {
    const store = draftStorage();
    if (store) store.removeItem(DRAFT_PREFIX + form.dataset.settles);
  });
}

// A formula wider than its box scrolls inside it (app.css): such a formula is made reachable by the
// keyboard, so that it can be scrolled without a mouse; one that fits is no extra stop.
function reachWideFormulas() {
  for (const formula of document.querySelectorAll("main math")) {
    const wide = formula.scrollWidth > formula.clientWidth + 1;
    if (wide && !formula.hasAttribute("tabindex")) formula.setAttribute("tabindex", "0");
    if (!wide && formula.getAttribute("tabindex") === "0") formula.removeAttribute("tabindex");
  }
}

// A code box: Tab indents the line by four spaces and Shift-Tab removes them, as an editor does.
// Escape first lets the next Tab leave the box, so the keyboard is never trapped in it.
function codeBox(box) {
  let leaving = false;
  box.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { leaving = true; return; }
    if (event.key !== "Tab" || leaving) { leaving = false; return; }
    event.preventDefault();
    const start = box.selectionStart, end = box.selectionEnd, text = box.value;
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    if (event.shiftKey) {
      const spaces = text.slice(lineStart, lineStart + 4).match(/^ */)[0].length;
      box.value = text.slice(0, lineStart) + text.slice(lineStart + spaces);
      box.selectionStart = box.selectionEnd = Math.max(lineStart, start - spaces);
    } else {
      box.value = text.slice(0, start) + "    " + text.slice(end);
      box.selectionStart = box.selectionEnd = start + 4;
    }
  });
}

// A code box's line numbers, in a gutter beside it that scrolls with it (the box does not wrap lines,
// so a line of code is a line of the gutter). The gutter is hidden from screen readers and never
// takes the focus; without scripts the box is a plain text area.
function lineNumbers(box) {
  const focused = document.activeElement === box;
  const frame = document.createElement("div");
  frame.className = "code-frame";
  const gutter = document.createElement("div");
  gutter.className = "code-gutter";
  gutter.setAttribute("aria-hidden", "true");
  box.parentNode.insertBefore(frame, box);
  frame.append(gutter, box);
  if (focused) box.focus();  // moving the box took its focus away
  let shown = 0;
  function number() {
    const lines = box.value.split("\n").length;
    if (lines !== shown) {
      const numbers = [];
      for (let line = 1; line <= lines; line++) numbers.push(line);
      gutter.textContent = numbers.join("\n");
      // Wide enough for the longest number (a ch is a digit's width in the gutter's font); the box
      // starts where the gutter ends.
      gutter.style.width = String(lines).length + 1.5 + "ch";
      frame.style.paddingLeft = gutter.offsetWidth + "px";
      shown = lines;
    }
    gutter.scrollTop = box.scrollTop;
  }
  box.addEventListener("input", number);
  box.addEventListener("keydown", function () { window.requestAnimationFrame(number); });  // Tab's spaces
  box.addEventListener("scroll", function () { gutter.scrollTop = box.scrollTop; });
  number();
}

document.addEventListener("DOMContentLoaded", function () {
  reachWideFormulas();
  window.addEventListener("resize", reachWideFormulas);
  for (const details of document.querySelectorAll("main details")) {
    details.addEventListener("toggle", reachWideFormulas);  // a folded formula has no width yet
  }
  for (const box of document.querySelectorAll("textarea.code")) { lineNumbers(box); codeBox(box); }
  const timer = document.getElementById("timer");
  if (timer) startTimer(timer);
  const answer = document.querySelector("form.answer[data-draft]");
  if (answer) {
    const leave = keepDrafts(answer);
    showReading(answer);
    if (answer.dataset.leave) saveOnLeaving(answer, leave);
  }
  for (const form of document.querySelectorAll("form[data-settles]")) settleDraft(form);
  const live = document.getElementById("live");
  if (live) watchBank(live);
});
