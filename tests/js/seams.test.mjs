// static/js/shared/pyodide-seams.mjs: the one version check. Live seams hook Pyodide's internals and undo
// what they did; on any other Pyodide every seam leaves the globals and the interpreter as they are.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";

import { PYODIDE_VERSION, seamsFor } from "../../static/js/shared/pyodide-seams.mjs";

const pinned = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url))).dependencies.pyodide;

test("the seams are written for the Pyodide package.json pins", () => {
  assert.equal(PYODIDE_VERSION, pinned);
  assert.equal(seamsFor(pinned).live, true);
});

/** A stand-in for the globals and internals the seams touch. */
function world() {
  const module = { API: { finalizeBootstrap: (x) => `finalized ${x}` } };
  const loader = { unpack_buffer: { callKwargs: () => "python" }, should_load_dynlib: () => true };
  const pyodide = { _api: { package_loader: loader, importlib: "pyodide's" } };
  return { module, loader, pyodide };
}

for (const version of ["0.28.0", "0.27.6", "314.0.0", undefined]) {
  test(`Pyodide ${version}: inert seams hook nothing and say why`, () => {
    const seams = seamsFor(version);
    assert.equal(seams.live, false);
    assert.match(seams.why, new RegExp(`${PYODIDE_VERSION}`));
    const before = { create: globalThis._createPyodideModule, fetch: globalThis.fetch, instantiate: WebAssembly.instantiate, jspi: "Suspending" in WebAssembly };
    const { module, loader, pyodide } = world();
    seams.hookCreateModule(() => () => "wrapped")();
    seams.hideJSPI()();
    seams.swapFetch(() => () => "swapped");
    seams.swapInstantiate(() => () => "swapped");
    seams.afterFinalizeBootstrap(module, () => "replaced");
    assert.equal(seams.hookUnpackBuffer(pyodide, () => "javascript"), false);
    assert.equal(seams.setInvalidateCaches(pyodide, () => {}), false);
    assert.equal(globalThis._createPyodideModule, before.create);
    assert.equal(globalThis.fetch, before.fetch);
    assert.equal(WebAssembly.instantiate, before.instantiate);
    assert.equal("Suspending" in WebAssembly, before.jspi);
    assert.equal(module.API.finalizeBootstrap("x"), "finalized x");
    assert.equal(pyodide._api.package_loader, loader);
    assert.equal(pyodide._api.importlib, "pyodide's");
  });
}

test("live seams hook, and undo what they swapped", () => {
  const seams = seamsFor(PYODIDE_VERSION);
  const { module, pyodide } = world();
  const ownFetch = globalThis.fetch;
  const undoFetch = seams.swapFetch((network) => (url) => `kept ${url} (else ${network === ownFetch})`);
  assert.equal(fetch("a"), "kept a (else true)");
  undoFetch();
  assert.equal(globalThis.fetch, ownFetch);

  const ownInstantiate = WebAssembly.instantiate;
  const undoInstantiate = seams.swapInstantiate(() => () => "compiled ahead");
  assert.equal(WebAssembly.instantiate(), "compiled ahead");
  undoInstantiate();
  assert.equal(WebAssembly.instantiate, ownInstantiate);

  globalThis._createPyodideModule = (settings) => `module ${settings}`;
  const unhook = seams.hookCreateModule((create) => (settings) => `wrapped ${create(settings)}`);
  assert.equal(globalThis._createPyodideModule("s"), "wrapped module s");
  unhook();
  assert.equal(globalThis._createPyodideModule("s"), "module s");
  delete globalThis._createPyodideModule;

  seams.afterFinalizeBootstrap(module, (finalize, [x]) => `${finalize(`${x}!`)} once`);
  assert.equal(module.API.finalizeBootstrap("x"), "finalized x! once");
  assert.equal(module.API.finalizeBootstrap("x"), "finalized x"); // the module's own again

  const calls = [];
  seams.hookUnpackBuffer(pyodide, (kwargs, { python, shouldLoadDynlib }) => {
    calls.push(shouldLoadDynlib("a.so"));
    return kwargs.js ? "javascript" : python(kwargs);
  });
  assert.equal(pyodide._api.package_loader.unpack_buffer.callKwargs({ js: true }), "javascript");
  assert.equal(pyodide._api.package_loader.unpack_buffer.callKwargs({}), "python");
  assert.equal(pyodide._api.package_loader.should_load_dynlib(), true); // everything else as it was
  assert.deepEqual(calls, [true, true]);
  seams.setInvalidateCaches(pyodide, () => "narrow");
  assert.equal(pyodide._api.importlib.invalidate_caches(), "narrow");
});

test("a wasm that fails to instantiate fails the boot instead of leaving it waiting", async () => {
  const live = seamsFor(PYODIDE_VERSION);
  const settings = { instantiateWasm: () => { throw new Error("Pyodide's own: never called"); } };
  const failed = live.replaceInstantiateWasm(settings, async () => { throw new Error("no wasm"); });
  assert.deepEqual(settings.instantiateWasm({}, () => assert.fail("no success")), {}); // under way, as Emscripten expects
  await assert.rejects(failed, /no wasm/);
  // a success reaches Emscripten's callback with the instance and the module; the failure promise stays pending
  const ok = { instantiateWasm: () => {} };
  const pending = live.replaceInstantiateWasm(ok, async () => ({ instance: "i", module: "m" }));
  const got = await new Promise((resolve) => ok.instantiateWasm({}, (instance, module) => resolve([instance, module])));
  assert.deepEqual(got, ["i", "m"]);
  assert.equal(await Promise.race([pending.then(() => "settled", () => "settled"), Promise.resolve("pending")]), "pending");
  // settings without one (Node reads the file itself) stay as they are; inert seams touch nothing
  const none = {};
  live.replaceInstantiateWasm(none, async () => ({}));
  assert.deepEqual(none, {});
  const theirs = { instantiateWasm: () => "theirs" };
  seamsFor("0.0.1").replaceInstantiateWasm(theirs, async () => ({}));
  assert.equal(theirs.instantiateWasm(), "theirs");
});

test("an iPad (a Mac platform with touch points, as the page tells the worker) is iOS to Pyodide until undone", () => {
  const seams = seamsFor(PYODIDE_VERSION);
  const own = !("navigator" in globalThis); // Node 20 has no navigator; a worker's says "MacIntel" on an iPad
  if (own) globalThis.navigator = { platform: "MacIntel" };
  const before = navigator.platform;
  const undo = seams.showIPad(true);
  assert.equal(navigator.platform, "iPad");
  assert.match(navigator.platform, /iPad|iPhone|iPod/); // what pyodide.asm.js's getPyEMCountArgsPtr tests
  undo();
  assert.equal(navigator.platform, before);
  seams.showIPad(false)();
  assert.equal(navigator.platform, before, "not an iPad: nothing changes");
  seamsFor("0.28.0").showIPad(true)();
  assert.equal(navigator.platform, before, "inert seams change nothing");
  if (own) delete globalThis.navigator;
});

// A module of two functions in its table: `f` at 0, exported, and one at 1 that is not.
const TWO_FUNCTIONS = new Uint8Array([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 3, 2, 0, 0, 4, 4, 1, 0x70, 0, 2,
  7, 9, 2, 1, 0x66, 0, 0, 1, 0x74, 1, 0, 9, 8, 1, 0, 0x41, 0, 0x0b, 2, 0, 1,
  0x0a, 0x0b, 2, 4, 0, 0x41, 42, 0x0b, 4, 0, 0x41, 7, 0x0b,
]);

/** The module, instantiated, with the imports a main module's instantiateWasm sees (its table in env). */
function mainModule() {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(TWO_FUNCTIONS));
  return { instance, table: instance.exports.t, imports: { env: { __indirect_function_table: instance.exports.t } } };
}

/** JavaScriptCore's table.get while it runs: another object (one per function) than the export, same name and length. */
function asInJavaScriptCore(run) {
  const get = WebAssembly.Table.prototype.get;
  const others = new WeakMap();
  WebAssembly.Table.prototype.get = function (index) {
    const fn = get.call(this, index);
    if (!fn) return fn;
    if (!others.has(fn)) others.set(fn, Object.defineProperties((...args) => fn(...args), { name: { value: fn.name }, length: { value: fn.length } }));
    return others.get(fn);
  };
  try {
    return run();
  } finally {
    WebAssembly.Table.prototype.get = get;
  }
}

test("table slots: where the engine keeps a function's identity (V8 here) nothing is hooked", () => {
  const { instance, table, imports } = mainModule();
  const undo = seamsFor(PYODIDE_VERSION).sameTableFunctions(imports, instance);
  assert.equal(Object.hasOwn(table, "get"), false);
  assert.equal(table.get(0), instance.exports.f);
  undo();
});

test("table slots: where table.get gives another object (Safari), the main module's slots give its exports until undone", () => {
  asInJavaScriptCore(() => {
    const { instance, table, imports } = mainModule();
    assert.notEqual(table.get(0), instance.exports.f); // what made Emscripten's addFunction add 1,155 slots
    const undo = seamsFor(PYODIDE_VERSION).sameTableFunctions(imports, instance);
    assert.equal(table.get(0), instance.exports.f);
    assert.equal(table.get(1)(), 7); // not exported: the engine's own object
    table.grow(1);
    table.set(2, instance.exports.f);
    assert.notEqual(table.get(2), instance.exports.f); // a slot added later is not the module's: left as it is
    undo();
    assert.equal(Object.hasOwn(table, "get"), false);
    assert.notEqual(table.get(0), instance.exports.f);
  });
});

test("table slots: inert seams hook nothing", () => {
  asInJavaScriptCore(() => {
    const { instance, table, imports } = mainModule();
    seamsFor("0.28.0").sameTableFunctions(imports, instance)();
    assert.equal(Object.hasOwn(table, "get"), false);
  });
});
