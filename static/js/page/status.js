// The page's Python status line (role="status"): loading progress, then "ready", or what went wrong.

/**
 * Bind the status element to a runtime's "status" events, and `restartButton` (the reader's
 * "Restart Python (clear all variables)", shown while Python is ready) to onRestart.
 */
export function bindStatus(el, runtime, { onRetry, restartButton, onRestart }) {
  const text = el.querySelector(".py-status-text");
  const bar = el.querySelector(".py-progress");
  // What a phone's one-line header shows instead (site.css): a short word, a button that opens the whole
  // status and the offline note in a popover (filled as it opens, so it is always the current text).
  const short = el.parentElement?.querySelector(".py-status-short");
  const word = short?.querySelector(".py-status-word"); // the button's name goes on: the word is its start
  const details = short && document.getElementById(short.getAttribute("popovertarget"));
  details?.addEventListener("beforetoggle", (event) => {
    if (event.newState !== "open") return;
    const note = el.parentElement.querySelector(".offline-note");
    details.replaceChildren(...[text.textContent, note && !note.hidden ? note.textContent : ""]
      .filter(Boolean).map((line) => Object.assign(document.createElement("p"), { textContent: line })));
  });
  let restarted = ""; // what the latest restart did, said with "Python is ready"
  // A page served isolated (COOP/COEP) in a browser that still cannot share an interrupt buffer with the worker
  // (start-python.js, newInterruptBuffer): Stop restarts Python there. Said once, with the first "ready".
  let toldStop = false;
  const stopNote = () => (globalThis.crossOriginIsolated === true && !runtime.interruptBuffer
    ? " In this browser Stop cannot interrupt Python in place: it restarts Python and re-runs your earlier cells." : "");
  runtime.addEventListener("restarted", ({ detail }) => {
    const cells = `${detail.replayed.length} earlier cell${detail.replayed.length === 1 ? "" : "s"}`;
    // A request nobody's cell owns (the idle install) outlived its deadline: say why Python restarted.
    restarted = detail.cleared ? " It was restarted: every variable is cleared."
      : detail.stuck ? ` ${detail.stuck.what} did not finish within ${detail.stuck.seconds} s, so Python was restarted and re-ran ${cells}.`
      : ` It was restarted and re-ran ${cells}.`;
  });
  restartButton?.addEventListener("click", onRestart);
  const show = (detail) => {
    el.dataset.state = detail.state;
    el.querySelector(".py-retry")?.remove();
    if (restartButton) {
      // Hiding the focused button would drop the reader's focus: it stays, and waits on `ready`.
      if (detail.state === "ready") restartButton.hidden = false;
      else if (document.activeElement !== restartButton) restartButton.hidden = true;
    }
    if (detail.state === "loading") {
      const percent = Math.round(detail.fraction * 100);
      text.textContent = `Loading Python… ${percent}% (${detail.stage})`;
      if (word) word.textContent = `Python ${percent}%`;
      bar.hidden = false;
      bar.value = percent;
    } else if (detail.state === "ready") {
      text.textContent = `Python is ready.${restarted}${toldStop ? "" : stopNote()}`;
      toldStop = true;
      if (word) word.textContent = "Ready";
      restarted = "";
      bar.hidden = true;
    } else if (detail.state === "error") {
      text.textContent = `Python could not start: ${detail.stage}. `; // shown whole on a phone too
      bar.hidden = true;
      const retry = document.createElement("button");
      retry.type = "button";
      retry.className = "py-retry";
      retry.textContent = "Try again";
      retry.addEventListener("click", onRetry);
      el.append(retry);
    }
  };
  if (runtime.status) show(runtime.status); // Python may have got somewhere before the page was parsed
  runtime.addEventListener("status", ({ detail }) => show(detail));
}
