// Stored state is checked field by field (static/js/page/storage.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { isBoolean, isCount, isString, validated } from "../../static/js/page/storage.js";

const schema = (hints) => ({
  code: [isString, "starter"],
  attempts: [isCount(0), 0],
  solved: [isBoolean, false],
  hints: [isCount(0, hints), 0],
});

test("good fields are kept, bad ones fall back one by one", () => {
  assert.deepEqual(validated({ code: "x", attempts: 3, solved: true, hints: 2 }, schema(2)),
    { code: "x", attempts: 3, solved: true, hints: 2 });
  assert.deepEqual(validated({ code: "x", attempts: -4, solved: "yes", hints: -1 }, schema(2)),
    { code: "x", attempts: 0, solved: false, hints: 0 });
  assert.deepEqual(validated({ code: 7, attempts: 1.5, hints: 3 }, schema(2)),
    { code: "starter", attempts: 0, solved: false, hints: 0 });
});

test("junk that is not an object gives the defaults", () => {
  for (const junk of [null, undefined, 5, "text", [1, 2], true]) {
    assert.deepEqual(validated(junk, schema(2)), { code: "starter", attempts: 0, solved: false, hints: 0 });
  }
});

/** A Storage with the methods storage.js uses, and `setItem` that can be made to refuse. */
function fakeStorage(entries = {}) {
  const map = new Map(Object.entries(entries));
  return {
    refuse: false,
    get length() { return map.size; },
    key: (i) => [...map.keys()][i] ?? null,
    getItem: (name) => map.get(name) ?? null,
    setItem(name, value) {
      if (this.refuse) throw new DOMException("quota", "QuotaExceededError");
      map.set(name, String(value));
    },
    removeItem: (name) => map.delete(name),
  };
}

/** Run `fn` with `localStorage` and `navigator` replaced on globalThis (Node may have its own of either). */
async function withGlobals(globals, fn) {
  const before = Object.fromEntries(Object.keys(globals).map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)]));
  for (const [name, value] of Object.entries(globals)) Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  try {
    await fn();
  } finally {
    for (const [name, descriptor] of Object.entries(before)) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else delete globalThis[name];
    }
  }
}

test("items() lists one lesson's values, by kind and id, and skips junk (no kind, no id) and other lessons", async () => {
  const { items, save } = await import("../../static/js/page/storage.js");
  const local = fakeStorage({
    "attn-lesson:v1:attention:cell:scores": '{"code":"x"}',
    "attn-lesson:v1:attention:quiz:q:1": '{"chosen":[1]}',
    "attn-lesson:v1:attention:exercise:broken": "{not json",
    "attn-lesson:v1:attention:cell:": '{"code":"no id"}',
    "attn-lesson:v1:attention::scores": '{"code":"no kind"}',
    "attn-lesson:v1:attention-two:cell:scores": '{"code":"other lesson"}',
    "attn-lesson:v1:causal-mask:cell:mask": '{"code":"y"}',
    "something else": "1",
  });
  await withGlobals({ localStorage: local, navigator: {} }, () => {
    assert.deepEqual(items("attention"), [
      { kind: "cell", id: "scores", value: { code: "x" } },
      { kind: "quiz", id: "q:1", value: { chosen: [1] } },
    ]);
    assert.ok(save("attention", "cell", "new", { code: "z" }));
    assert.deepEqual(items("attention").map(({ id }) => id), ["scores", "q:1", "new"]);
  });
  await withGlobals({ localStorage: undefined }, () => assert.deepEqual(items("attention"), []));
});

test("an editor's text read from storage has \n line ends (code-text.js), however it was stored", async () => {
  const { items, load } = await import("../../static/js/page/storage.js");
  const local = fakeStorage({
    "attn-lesson:v1:attention:cell:scores": JSON.stringify({ code: "a\r\nb\rc\n", base: "x" }),
    "attn-lesson:v1:attention:quiz:q": JSON.stringify({ chosen: [1] }),
  });
  await withGlobals({ localStorage: local, navigator: {} }, () => {
    assert.deepEqual(load("attention", "cell", "scores"), { code: "a\nb\nc\n", base: "x" });
    assert.deepEqual(load("attention", "quiz", "q"), { chosen: [1] });
    assert.equal(items("attention")[0].value.code, "a\nb\nc\n");
  });
});

test("persistent storage is asked for once, at the first save that works, and a grant is told", async () => {
  // A fresh copy of the module: the question is asked once per page, so once per module instance.
  const storage = await import(`../../static/js/page/storage.js?fresh=${Date.now()}`);
  let asks = 0;
  const navigator = { storage: { persist: async () => { asks += 1; return true; }, persisted: async () => false } };
  const local = fakeStorage();
  await withGlobals({ localStorage: local, navigator }, async () => {
    let told = 0;
    storage.whenKept(() => { told += 1; });
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(asks, 0, "not asked at load");
    local.refuse = true;
    assert.equal(storage.save("attention", "cell", "a", { code: "x" }), false);
    assert.equal(asks, 0, "not asked when the save failed");
    local.refuse = false;
    assert.ok(storage.save("attention", "cell", "a", { code: "x" }));
    assert.ok(storage.save("attention", "cell", "b", { code: "y" }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(asks, 1);
    assert.equal(told, 1);
  });
});

test("a browser without the question, or one that throws, costs nothing", async () => {
  for (const navigator of [{}, { storage: {} }, { storage: { persist: () => { throw new Error("no"); }, persisted: () => Promise.reject(new Error("no")) } }]) {
    const storage = await import(`../../static/js/page/storage.js?fresh=${Math.random()}`);
    await withGlobals({ localStorage: fakeStorage(), navigator }, async () => {
      let told = false;
      storage.whenKept(() => { told = true; });
      assert.ok(storage.save("attention", "cell", "a", { code: "x" }));
      await new Promise((resolve) => setTimeout(resolve, 0));
      assert.equal(told, false);
    });
  }
});
