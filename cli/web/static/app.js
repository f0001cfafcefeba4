// quiz serve: the only script. Pages work without it; it counts an exam's time down (and submits the
// exam when it is up) and reloads the preview when the bank's file changes.
"use strict";

function startTimer(timer) {
  const text = document.getElementById("timer-text");
  const form = document.getElementById("time-up-form");
  const end = Date.now() + parseFloat(timer.dataset.remaining) * 1000;
  function pad(n) { return String(n).padStart(2, "0"); }
  function tick() {
    const left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
    text.textContent = h ? h + ":" + pad(m) + ":" + pad(s) : m + ":" + pad(s);
    timer.classList.toggle("low", left <= 60);
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

document.addEventListener("DOMContentLoaded", function () {
  const timer = document.getElementById("timer");
  if (timer) startTimer(timer);
  const live = document.getElementById("live");
  if (live) watchBank(live);
});
