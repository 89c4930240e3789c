// The page's one idle-time scheduler (static/js/page/idle.js), which builds the far widgets and the editors.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { inIdleTime, readerMoved, whenIdle } from "../../static/js/page/idle.js";

/** A requestIdleCallback the test drives: idle periods are handed out one at a time, each with `left` ms. */
function fakeIdle() {
  const queue = [];
  globalThis.requestIdleCallback = (fn, options) => queue.push({ fn, options });
  return {
    queue,
    /** Give the oldest waiter an idle period with `left` ms, then let promises settle. */
    async period(left = 50) {
      assert.ok(queue.length, "nothing asked for an idle period");
      queue.shift().fn({ didTimeout: false, timeRemaining: () => left });
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

afterEach(() => {
  delete globalThis.requestIdleCallback;
});

test("one step per idle period, in order, until a step says nothing is left", async () => {
  const idle = fakeIdle();
  const items = ["a", "b", "c"];
  const done = [];
  let finished = false;
  inIdleTime(() => {
    done.push(items.shift());
    return items.length > 0;
  }).then(() => { finished = true; });
  await idle.period();
  assert.deepEqual(done, ["a"]);
  await idle.period();
  assert.deepEqual(done, ["a", "b"]);
  assert.equal(finished, false);
  await idle.period();
  assert.deepEqual(done, ["a", "b", "c"]);
  assert.equal(finished, true);
  assert.equal(idle.queue.length, 0, "it asks for no more periods once done");
});

test("no step while busy, nor in a period too short; each waits for the next period", async () => {
  const idle = fakeIdle();
  let busy = true;
  let steps = 0;
  inIdleTime(() => ++steps < 2, { busy: () => busy, sliceMs: 15 });
  await idle.period(50);
  await idle.period(50);
  assert.equal(steps, 0, "a step ran while busy");
  busy = false;
  await idle.period(10);
  assert.equal(steps, 0, "a step ran with 10 ms left of a 15 ms slice");
  await idle.period(20);
  assert.equal(steps, 1);
});

test("a step's promise is awaited before the next period is asked for", async () => {
  const idle = fakeIdle();
  let finish;
  let steps = 0;
  inIdleTime(() => {
    steps += 1;
    return steps === 1 ? new Promise((resolve) => { finish = resolve; }).then(() => true) : false;
  });
  await idle.period();
  assert.equal(idle.queue.length, 0, "the next period was asked for before the step finished");
  finish();
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.equal(idle.queue.length, 1);
  await idle.period();
  assert.equal(steps, 2);
});

test("the timeout is passed on to requestIdleCallback; a step that throws rejects", async () => {
  const idle = fakeIdle();
  const work = inIdleTime(() => { throw new Error("broken"); }, { timeout: 2000 });
  assert.deepEqual(idle.queue[0].options, { timeout: 2000 });
  await idle.period();
  await assert.rejects(work, /broken/);
});

test("without requestIdleCallback (Safari) a timer stands in, with a slice of idle time", async () => {
  assert.equal(globalThis.requestIdleCallback, undefined);
  const deadline = await new Promise((resolve) => whenIdle(resolve));
  assert.ok(deadline.timeRemaining() >= 15, "the fallback's slice must let the editors build");
  let steps = 0;
  await inIdleTime(() => ++steps < 3, { sliceMs: 15 });
  assert.equal(steps, 3);
});

test("the far work waits for the reader's first move, and stops listening then", async () => {
  const listeners = new Map(); // type -> listener, as the page's window would hold them
  globalThis.addEventListener = (type, fn, options) => {
    assert.equal(options.capture, true);
    assert.equal(options.passive, true); // never delays a scroll
    listeners.set(type, fn);
  };
  globalThis.removeEventListener = (type, fn) => { if (listeners.get(type) === fn) listeners.delete(type); };
  try {
    let moved = false;
    const waiting = readerMoved().then(() => { moved = true; });
    assert.equal(readerMoved(), readerMoved(), "one promise for the page");
    assert.deepEqual([...listeners.keys()].sort(), ["keydown", "pointerdown", "scroll", "touchstart", "wheel"]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(moved, false, "nothing moved yet");
    listeners.get("wheel")();
    await waiting;
    assert.equal(moved, true);
    assert.equal(listeners.size, 0);
  } finally {
    delete globalThis.addEventListener;
    delete globalThis.removeEventListener;
  }
});
