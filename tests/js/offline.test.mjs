// offline.js: the service worker is used once it is active, and a registration without a worker that will
// become active is said as such at once (navigator.serviceWorker.ready would wait for good).
import { test } from "node:test";
import assert from "node:assert/strict";
import { activeWorker } from "../../static/js/runtime/offline.js";

class FakeWorker extends EventTarget {
  constructor(state) { super(); this.state = state; }
  become(state) { this.state = state; this.dispatchEvent(new Event("statechange")); }
}

test("an active worker is used at once", async () => {
  const active = new FakeWorker("activated");
  assert.equal(await activeWorker({ active, installing: null, waiting: null }), active);
});

test("an installing worker is used once it has activated", async () => {
  const worker = new FakeWorker("installing");
  const registration = { active: null, installing: worker, waiting: null };
  const got = activeWorker(registration);
  worker.become("installed");
  worker.become("activating");
  registration.active = worker;
  worker.become("activated");
  assert.equal(await got, worker);
});

test("a worker that fails to install or activate, or none at all, is null rather than a wait for good", async () => {
  const worker = new FakeWorker("installing");
  const got = activeWorker({ active: null, installing: worker, waiting: null });
  worker.become("redundant");
  assert.equal(await got, null);
  assert.equal(await activeWorker({ active: null, installing: null, waiting: null }), null);
  assert.equal(await activeWorker(undefined), null);
});
