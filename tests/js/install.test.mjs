// Wheels unpacked without Python (static/js/worker/install.js): what it writes where, what it leaves to Python.
import assert from "node:assert/strict";
import { test } from "node:test";

import { planUnpack, unpackWithoutPython } from "../../static/js/worker/install.js";
import { PYODIDE_VERSION, seamsFor } from "../../static/js/shared/pyodide-seams.mjs";
import { makeZip } from "./zipfixture.mjs";

const text = (s) => new TextEncoder().encode(s);
const stored = (files) => makeZip(Object.fromEntries(Object.entries(files).map(([name, data]) => [name, { data: text(data), method: 0 }])));
const WHEEL = "demo_pkg-1.0-cp312-cp312-pyodide_2024_0_wasm32.whl";
const DEMO = {
  "demo_pkg/__init__.pyc": "init",
  "demo_pkg/_ext.cpython-312-wasm32-emscripten.so": "\0asm ext",
  "demo_pkg/data.so.txt": "not a library",
  "demo_pkg-1.0.dist-info/METADATA": "Name: demo-pkg",
  "demo_pkg-1.0.data/data/share/demo.1": "manual page",
  "demo_pkg-1.0.data/scripts/demo": "#!python",
};

/** A stand-in for the parts of Pyodide install.js touches: an FS of path -> text, and Python's package loader. */
function fakePyodide(seams = seamsFor(PYODIDE_VERSION)) {
  const files = new Map();
  const owned = new Map(); // path -> whether the FS was let keep the array it was given (canOwn)
  const asked = [];
  const python = []; // the arguments Python's own unpack_buffer was called with
  const loader = {
    unpack_buffer: { callKwargs: (kwargs) => { python.push(kwargs); return ["from python"]; } },
    should_load_dynlib: (path) => { asked.push(path); return path.endsWith("-emscripten.so"); },
    get_install_dir: () => "/lib/python3.12/site-packages",
  };
  const pyodide = {
    files, owned, asked, python,
    FS: {
      mkdirTree: () => {},
      writeFile: (path, data, { canOwn = false } = {}) => {
        owned.set(path, canOwn);
        files.set(path, typeof data === "string" ? data : new TextDecoder().decode(data));
      },
      cwd: () => "/home/pyodide",
    },
    PATH: { normalize: (path) => path.replace(/\/+/g, "/").replace(/(.)\/$/, "$1") },
    pyimport: (name) => ({ prefix: "/", destroy: () => {}, name }),
    _api: { package_loader: loader },
  };
  unpackWithoutPython(pyodide, seams);
  return pyodide;
}

test("a stored wheel is written where Python would write it, with its installer, its data files and its libraries", () => {
  const pyodide = fakePyodide();
  const dynlibs = pyodide._api.package_loader.unpack_buffer.callKwargs({
    buffer: stored(DEMO), filename: `stored/${WHEEL}`, extract_dir: "/lib/python3.12/site-packages/",
    installer: "pyodide.loadPackage", source: "pyodide", calculate_dynlibs: true,
  });
  assert.deepEqual(pyodide.python, []); // Python never asked
  const site = "/lib/python3.12/site-packages/";
  for (const [name, data] of Object.entries(DEMO)) assert.equal(pyodide.files.get(site + name), data, name);
  assert.equal(pyodide.files.get(`${site}demo_pkg-1.0.dist-info/INSTALLER`), "pyodide.loadPackage");
  assert.equal(pyodide.files.get(`${site}demo_pkg-1.0.dist-info/PYODIDE_SOURCE`), "pyodide");
  assert.equal(pyodide.files.get("/share/demo.1"), "manual page"); // install_datafiles: the data scheme only
  assert.equal(pyodide.files.has("/demo"), false);
  // Python's rule decides among the names that look like libraries, in the archive's order
  assert.deepEqual(dynlibs, [`${site}demo_pkg/_ext.cpython-312-wasm32-emscripten.so`]);
  assert.deepEqual(pyodide.asked, ["demo_pkg/_ext.cpython-312-wasm32-emscripten.so"]);
  // a package's wheel is the loader's own download: its files are views of it, not copies
  assert.equal(pyodide.owned.get(`${site}demo_pkg/__init__.pyc`), true);
  assert.equal(pyodide.owned.get("/share/demo.1"), true);
  // the rest of the package loader is Python's
  assert.equal(pyodide._api.package_loader.get_install_dir(), "/lib/python3.12/site-packages");
});

test("unpackArchive's wheel (no file name) is unpacked relative to the working folder, nothing recorded", () => {
  const pyodide = fakePyodide();
  const result = pyodide._api.package_loader.unpack_buffer.callKwargs({ buffer: stored(DEMO).buffer, format: "wheel", extract_dir: "out" });
  assert.equal(result, undefined);
  assert.equal(pyodide.files.get("/home/pyodide/out/demo_pkg/__init__.pyc"), "init");
  assert.equal(pyodide.owned.get("/home/pyodide/out/demo_pkg/__init__.pyc"), false); // the caller's buffer: copied
  assert.equal(pyodide.files.has("/home/pyodide/out/demo_pkg-1.0.dist-info/INSTALLER"), false);
  assert.equal(pyodide.files.has("/share/demo.1"), false);
  assert.deepEqual(pyodide.python, []);
});

test("what Python does differently, or would refuse with its own message, goes to Python", () => {
  const deflated = makeZip({ "demo_pkg/__init__.pyc": { data: text("init"), method: 8 }, "demo_pkg-1.0.dist-info/METADATA": { data: text("m"), method: 0 } });
  const cases = {
    deflated: [deflated, WHEEL],
    "no dist-info": [stored({ "demo_pkg/__init__.pyc": "x" }), WHEEL],
    "another package's dist-info": [stored({ "other-1.0.dist-info/METADATA": "m" }), WHEEL],
    "two dist-infos": [stored({ "demo_pkg-1.0.dist-info/METADATA": "m", "demo_pkg-2.0.dist-info/METADATA": "m" }), WHEEL],
    "two data folders": [stored({ ...DEMO, "demo_pkg-2.0.data/data/x": "x" }), WHEEL],
    "a name that is not ASCII": [stored({ ...DEMO, "demo_pkg/caf\u00e9.pyc": "x" }), WHEEL],
    "a name going up": [stored({ ...DEMO, "demo_pkg/../evil.pyc": "x" }), WHEEL],
    "an absolute name": [stored({ ...DEMO, "/etc/evil": "x" }), WHEEL],
    "not a zip": [text("just some text that is not an archive at all"), WHEEL],
    "a tarball": [stored(DEMO), "demo_pkg-1.0.tar.gz"],
  };
  for (const [what, [buffer, filename]] of Object.entries(cases)) {
    const pyodide = fakePyodide();
    const result = pyodide._api.package_loader.unpack_buffer.callKwargs({ buffer, filename, extract_dir: "/site", calculate_dynlibs: true });
    assert.deepEqual(result, ["from python"], what);
    assert.equal(pyodide.python.length, 1, what);
    assert.equal(pyodide.files.size, 0, what);
  }
  assert.equal(planUnpack(stored(DEMO), { format: "zip" }), null); // unpackArchive of a plain zip
});

test("on another Pyodide the seams are inert: every install goes to Python's own unpack", () => {
  const pyodide = fakePyodide(seamsFor("0.28.0"));
  const result = pyodide._api.package_loader.unpack_buffer.callKwargs({ buffer: stored(DEMO), filename: WHEEL, calculate_dynlibs: true });
  assert.deepEqual(result, ["from python"]);
  assert.equal(pyodide.python.length, 1);
  assert.equal(pyodide.files.size, 0);
});

test("the wasm's failures are said in words: a lost connection, an error status, a file cut short", async () => {
  const { instantiateWasm } = await import("../../static/js/worker/install.js");
  await assert.rejects(instantiateWasm(Promise.reject(new TypeError("Failed to fetch")), {}),
    /the download of Python's engine \(pyodide\.asm\.wasm\) failed: the connection was lost or the site did not answer/);
  await assert.rejects(instantiateWasm(Promise.resolve({ ok: false, status: 503 }), {}), /failed: the site answered 503/);
  const cut = async () => { throw new Error("CompileError: section was shorter than expected"); };
  await assert.rejects(instantiateWasm(Promise.resolve({ ok: true, status: 200 }), {}, cut),
    /is not whole or not Pyodide's \(CompileError: section was shorter than expected\): a connection cut short/);
  const fine = async (response, imports) => ({ instance: imports, module: response.status });
  assert.deepEqual(await instantiateWasm(Promise.resolve({ ok: true, status: 200 }), "imports", fine), { instance: "imports", module: 200 });
});
