// Offline: once Python is ready, register the site's service worker (sw.js at the site's root,
// written by the build) and ask it to keep what this lesson needs. The files are in the HTTP
// cache by then, so nothing is downloaded twice. When that is done, the page says so.
const SETTLE_MS = 1500; // let the reader's first run have the machine first

export function keepForOffline(swURL, note) {
  if (!("serviceWorker" in navigator) || !swURL) return;
  setTimeout(() => precache(swURL, note).catch(() => {}), SETTLE_MS);
}

async function precache(swURL, note) {
  await navigator.serviceWorker.register(swURL);
  const { active } = await navigator.serviceWorker.ready;
  const reply = new Promise((resolve) => {
    navigator.serviceWorker.addEventListener("message", function onReply(event) {
      if (event.data?.type !== "precached") return;
      navigator.serviceWorker.removeEventListener("message", onReply);
      resolve(event.data.ok);
    });
  });
  active.postMessage({ type: "precache" });
  if (!(await reply)) return;
  document.body.dataset.offline = "ready";
  if (note) note.hidden = false;
}
