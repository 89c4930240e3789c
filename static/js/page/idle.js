// Work the page does in its idle time, after what the reader is waiting for: the widgets far from the
// screen (widget-loader.js) and the editors not built yet (lazy-editor.js). One scheduler serves both, so they
// share one fallback for browsers without requestIdleCallback (Safari) and one rule for waiting.
// Neither starts before the reader has moved on the page (readerMoved): what is near the screen is
// built as it comes near anyway.

/** The fallback: a timer this long, reporting an idle slice this long (nothing better can be known). */
const FALLBACK_DELAY_MS = 50;
const FALLBACK_SLICE_MS = 50;

/** Call fn(deadline) when the page is idle (or after `timeout` ms at most, when one is given). */
export function whenIdle(fn, { timeout } = {}) {
  if (globalThis.requestIdleCallback) {
    globalThis.requestIdleCallback(fn, timeout === undefined ? undefined : { timeout });
    return;
  }
  setTimeout(() => fn({ didTimeout: false, timeRemaining: () => FALLBACK_SLICE_MS }), FALLBACK_DELAY_MS);
}

/**
 * Do work one `step` per idle period until a step returns (or resolves to) false: nothing is left.
 * A step that returns a promise is awaited before the next period is asked for. No step runs while
 * `busy()` says so (Python is computing: on a machine with few cores the reader's result comes
 * first) or when the period has less than `sliceMs` left; the next period is asked for instead.
 * Resolves when the work is done; rejects with the error of a step that threw.
 */
export function inIdleTime(step, { busy = () => false, sliceMs = 0, timeout } = {}) {
  return new Promise((resolve, reject) => {
    const next = () => whenIdle(tick, { timeout });
    const tick = (deadline) => {
      if (busy() || deadline.timeRemaining() < sliceMs) {
        next();
        return;
      }
      Promise.resolve().then(step).then((more) => (more === false ? resolve() : next()), reject);
    };
    next();
  });
}

/** The first sign of the reader going further than the first screen: these, on the window, in capture. */
const MOVES = ["scroll", "wheel", "keydown", "pointerdown", "touchstart"];
let moved = null;

/**
 * Resolves at the reader's first scroll, wheel, key, pointer or touch (any of them, anywhere in the page).
 * The page's far work (editors and widgets off the screen) waits for it: a reader still on the first screen
 * needs none of it, and done during the load it was about half of the page's blocking time on a phone
 * (Lighthouse mobile, Lesson 4, 3 runs: total blocking time 1,110 -> 447 ms, performance 76 -> 87 without it).
 */
export function readerMoved() {
  moved ??= new Promise((resolve) => {
    const done = () => {
      for (const type of MOVES) globalThis.removeEventListener(type, done, true);
      resolve();
    };
    for (const type of MOVES) globalThis.addEventListener(type, done, { capture: true, passive: true });
  });
  return moved;
}
