// The page's Python status line (role="status"): loading progress, then "ready", or what went wrong.

/** Bind the status element to a runtime's "status" events; returns nothing. */
export function bindStatus(el, runtime, { onRetry }) {
  const text = el.querySelector(".py-status-text");
  const bar = el.querySelector(".py-progress");
  const show = (detail) => {
    el.dataset.state = detail.state;
    el.querySelector(".py-retry")?.remove();
    if (detail.state === "loading") {
      const percent = Math.round(detail.fraction * 100);
      text.textContent = `Loading Python… ${percent}% (${detail.stage})`;
      bar.hidden = false;
      bar.value = percent;
    } else if (detail.state === "ready") {
      text.textContent = "Python is ready.";
      bar.hidden = true;
    } else if (detail.state === "error") {
      text.textContent = `Python could not start: ${detail.stage}. `;
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
