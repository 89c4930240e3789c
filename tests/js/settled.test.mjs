// settled.js: the gate waits for Python and for every run pressed, including those pressed or
// restarts begun while it waited.
import { test } from "node:test";
import assert from "node:assert/strict";
import { settled } from "../../static/js/runtime/settled.js";

function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A page: a runtime whose `ready` a test replaces, and a chain of runs it extends. */
function page() {
  const boot = deferred();
  const state = { runtime: { ready: boot.promise }, chain: Promise.resolve(), boot };
  state.press = () => {
    const run = deferred();
    state.chain = state.chain.then(() => run.promise);
    return run;
  };
  return state;
}

async function isSettled(promise) {
  let done = false;
  promise.then(() => { done = true; });
  await tick();
  return done;
}

test("waits for Python to be ready", async () => {
  const p = page();
  const gate = settled(p.runtime, () => p.chain);
  assert.equal(await isSettled(gate), false);
  p.boot.resolve();
  assert.equal(await isSettled(gate), true);
});

test("waits for the runs pressed by then, and for those pressed while it waits", async () => {
  const p = page();
  p.boot.resolve();
  const first = p.press();
  const gate = settled(p.runtime, () => p.chain);
  assert.equal(await isSettled(gate), false);
  const second = p.press(); // pressed while the first runs
  first.resolve();
  assert.equal(await isSettled(gate), false);
  second.resolve();
  assert.equal(await isSettled(gate), true);
});

test("waits for a restart that began while it waited (its boot and replay)", async () => {
  const p = page();
  p.boot.resolve();
  const run = p.press();
  const gate = settled(p.runtime, () => p.chain);
  const restart = deferred();
  p.runtime.ready = restart.promise; // the run's Stop restarted Python
  run.resolve();
  assert.equal(await isSettled(gate), false);
  restart.resolve();
  assert.equal(await isSettled(gate), true);
});

test("a start that failed is settled: nothing computes", async () => {
  const p = page();
  const gate = settled(p.runtime, () => p.chain);
  p.boot.reject(new Error("Python could not start"));
  assert.equal(await isSettled(gate), true);
  p.runtime.ready = null; // runtime.js: a failed boot clears it, for a retry
  assert.equal(await isSettled(settled(p.runtime, () => p.chain)), true);
});

test("a page without cells waits for Python only", async () => {
  const p = page();
  const gate = settled(p.runtime, () => undefined);
  assert.equal(await isSettled(gate), false);
  p.boot.resolve();
  assert.equal(await isSettled(gate), true);
});
