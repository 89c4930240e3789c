// SmolLM2's live forward pass in Pyodide under Node (bench/live_smollm2.py runs it): the same wasm NumPy the page
// runs, without a browser. usage: node live_smollm2.mjs <pyodide dist dir> <py/ dir> <live files dir> <timing .py>
// Prints one JSON line: what the timing script returned, and the wasm memory before the model and at the end
// (wasm memory only grows, so the end is the peak).
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON_ENV } from "../static/js/shared/python-env.mjs";

const [distDir, pyDir, liveDir, script] = process.argv.slice(2);
const indexURL = path.resolve(distDir) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL, env: { ...PYTHON_ENV }, stdout: (s) => console.error(s), stderr: (s) => console.error(s) });
await pyodide.loadPackage("numpy", { messageCallback: () => {} });
// the process's CPU seconds (user + system) for the timing script: on a shared machine wall time measures the load
pyodide.registerJsModule("node_cpu", { seconds: () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; } });

function copyTree(from, to) { // lessonpy's sources into Python's file system, as the wheel would put them
  pyodide.FS.mkdirTree(to);
  for (const name of readdirSync(from)) {
    const source = path.join(from, name);
    if (statSync(source).isDirectory()) copyTree(source, `${to}/${name}`);
    else if (name.endsWith(".py")) pyodide.FS.writeFile(`${to}/${name}`, readFileSync(source));
  }
}
copyTree(path.join(pyDir, "lessonpy"), "/home/pyodide/lessonpy");
const before = pyodide._module.HEAPU8.length;
pyodide.FS.mkdirTree("/home/pyodide/smollm2-live");
for (const name of readdirSync(liveDir).filter((n) => !n.endsWith(".br"))) {
  pyodide.FS.writeFile(`/home/pyodide/smollm2-live/${name}`, readFileSync(path.join(liveDir, name)));
}
const result = JSON.parse(pyodide.runPython(readFileSync(script, "utf-8")));
console.log(JSON.stringify({ ...result, wasm_bytes_before: before, wasm_bytes_peak: pyodide._module.HEAPU8.length }));
