// quiz serve: the only script. Pages work without it; it counts an exam's time down (and submits the
// exam when it is up) and reloads the preview when the bank's file changes.
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

document.addEventListener("DOMContentLoaded", function () {
  for (const box of document.querySelectorAll("textarea.code")) codeBox(box);
  const timer = document.getElementById("timer");
  if (timer) startTimer(timer);
  const live = document.getElementById("live");
  if (live) watchBank(live);
});
