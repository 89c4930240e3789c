// Offline: once Python is ready, register the site's service worker (sw.js at the site's root,
// written by the build) and ask it to keep what this lesson needs. The files are in the HTTP
// cache by then, so nothing is downloaded twice (the standard library's rest, which the boot did not
// fetch, is asked for after the worker's idle download of it: in-turn.js). When that is done, the page
// says so.
import { inTurn } from "./in-turn.js";

const SETTLE_MS = 1500; // let the reader's first run have the machine first

/** `archives`: the variant of each kind of archive the worker booted from (its init reply). */
export function keepForOffline(swURL, note, archives = null) {
  if (!("serviceWorker" in navigator) || !swURL) return;
  // after the worker's idle download, if under way: both fetch the standard library's rest (in-turn.js)
  setTimeout(() => inTurn(() => precache(swURL, note, archives)).catch(() => {}), SETTLE_MS);
}

async function precache(swURL, note, archives) {
  await navigator.serviceWorker.register(swURL);
  const { active } = await navigator.serviceWorker.ready;
  const reply = new Promise((resolve) => {
    navigator.serviceWorker.addEventListener("message", function onReply(event) {
      if (event.data?.type !== "precached") return;
      navigator.serviceWorker.removeEventListener("message", onReply);
      resolve(event.data.ok);
    });
  });
  active.postMessage({ type: "precache", archives });
  if (!(await reply)) return;
  document.body.dataset.offline = "ready";
  if (note) note.hidden = false;
}
