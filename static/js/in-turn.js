// The page's background downloads, one at a time: the worker's idle prefetch (preload.js) and the
// service worker's precache for offline use (offline.js). On a first visit both fetch the standard
// library's rest (1.25 MB); asked for together, the browser may download it twice: Chromium's HTTP cache
// makes the second request wait for the first for about 20 s, then sends it too (measured with a slow
// answer: tests/test_offline_browser.py). One after the other, the second reads the first's copy (the
// HTTP cache, or the service worker's kept one: kept.js).

let last = Promise.resolve();

/** Run `task` (-> a promise) once the background downloads given before it are over, failed or not;
 *  resolves or rejects as it does. */
export function inTurn(task) {
  const turn = last.then(task);
  last = turn.catch(() => {});
  return turn;
}
