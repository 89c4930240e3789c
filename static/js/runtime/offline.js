// Offline: once Python is ready, register the site's service worker (sw.js at the site's root,
// written by the build) and ask it to keep what this lesson needs. The files are in the HTTP
// cache by then, so nothing is downloaded twice (the standard library's rest, which the boot did not
// fetch, is asked for after the worker's idle download of it: in-turn.js). When that is done, the page
// says so.
import { inTurn } from "./in-turn.js";

const SETTLE_MS = 1500; // let the reader's first run have the machine first
const OFFLINE_READY = "Saved in this browser: the lesson now works offline too.";

/** `archives`: the variant of each kind of archive the worker booted from (its init reply). */
export function keepForOffline(swURL, note, archives = null) {
  if (!("serviceWorker" in navigator) || !swURL) return;
  // after the worker's idle download, if under way: both fetch the standard library's rest (in-turn.js)
  const attempt = () => inTurn(() => precache(swURL, note, archives)).catch(() => false).then((ok) => ok || notKept(note, attempt));
  setTimeout(attempt, SETTLE_MS);
}

/** The lesson could not be kept. Offline, the connection dropped: say so, and try again once the browser is back
 *  online (it used to stay without offline support, silently, until the next visit). Online, something else
 *  refused it (a full storage quota): say that, and leave it to the next visit. */
function notKept(note, attempt) {
  const offline = navigator.onLine === false;
  if (note) {
    note.textContent = offline
      ? "Not saved for offline use yet: the connection dropped. The page tries again when you are back online."
      : "Not saved for offline use: this browser did not keep the lesson's files (its storage may be full).";
    note.hidden = false;
  }
  document.body.dataset.offline = offline ? "retrying" : "failed";
  if (offline) addEventListener("online", () => attempt(), { once: true });
}

/** Resolves true once the service worker has kept what this lesson needs, false when it could not, or when the
 *  connection drops meanwhile: a service worker's fetches may then stall rather than fail, and the page said
 *  nothing, for good (notKept tries again once the browser is back online). */
async function precache(swURL, note, archives) {
  let onDrop;
  const dropped = new Promise((resolve) => {
    onDrop = () => resolve(null);
    addEventListener("offline", onDrop, { once: true });
  });
  try {
    return (await Promise.race([keep(swURL, note, archives), dropped])) ?? false;
  } finally {
    removeEventListener("offline", onDrop);
  }
}

/**
 * The registration's worker once it is active, or null when it has none or its worker failed to install or
 * activate: `navigator.serviceWorker.ready` would wait for good then (a browser that refuses service workers
 * but resolves `register`, as Playwright's "block" does), holding the page's background downloads' turn
 * for TURN_WAIT_MS and never saying the lesson was not kept.
 */
export function activeWorker(registration) {
  if (registration?.active) return Promise.resolve(registration.active);
  const worker = registration?.installing ?? registration?.waiting;
  if (!worker) return Promise.resolve(null);
  return new Promise((resolve) => {
    const settle = () => {
      if (worker.state === "activated") resolve(registration.active ?? worker);
      else if (worker.state === "redundant") resolve(null);
      else return;
      worker.removeEventListener("statechange", settle);
    };
    worker.addEventListener("statechange", settle);
    settle();
  });
}

async function keep(swURL, note, archives) {
  const active = await activeWorker(await navigator.serviceWorker.register(swURL));
  if (!active) return false;
  const reply = new Promise((resolve) => {
    navigator.serviceWorker.addEventListener("message", function onReply(event) {
      if (event.data?.type !== "precached") return;
      navigator.serviceWorker.removeEventListener("message", onReply);
      resolve(event.data.ok);
    });
  });
  active.postMessage({ type: "precache", archives });
  if (!(await reply)) return false;
  document.body.dataset.offline = "ready";
  if (note) {
    note.textContent = OFFLINE_READY;
    note.hidden = false;
  }
  return true;
}
