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
