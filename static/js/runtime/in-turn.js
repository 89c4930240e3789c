// The page's background downloads, one at a time: the worker's idle prefetch (preload.js) and the
// service worker's precache for offline use (offline.js). On a first visit both fetch the standard
// library's rest (1.25 MB); asked for together, the browser may download it twice: Chromium's HTTP cache
// makes the second request wait for the first for about 20 s, then sends it too (measured with a slow
// answer: tests/browser/test_offline_browser.py). One after the other, the second reads the first's copy (the
// HTTP cache, or the service worker's kept one: kept.js).

// A task that never ends (a service worker killed before it replies, a stalled fetch) holds the next
// one back this long at most: past it a double download costs less than a preload that never starts.
export const TURN_WAIT_MS = 30_000;

let last = Promise.resolve();

/** Run `task` (-> a promise) once the background downloads given before it are over, failed or not,
 *  or have run for `waitMs` since their turn came; resolves or rejects as `task` does. */
export function inTurn(task, waitMs = TURN_WAIT_MS) {
  const turn = last.then(task);
  let timer;
  const bounded = new Promise((resolve) => {
    turn.then(resolve, resolve);
    last.then(() => (timer = setTimeout(resolve, waitMs)));
  }).finally(() => clearTimeout(timer));
  last = bounded;
  return turn;
}
