// Build matplotlib's font cache with Pyodide itself under Node, so readers' browsers do not; and the
// property lists matplotlib writes into its docstrings as pyplot is imported (in_pyodide/kwdoc.py).
// usage: node fontcache.mjs <pyodide dist dir> <output file> <kwdoc output file>
// Prints where the cache belongs inside Pyodide's file system on stdout. (Pyodide's
// matplotlib keeps it as fontlist.json beside font_manager.py; font paths inside are
// /lib/python3.12/site-packages/..., the same in the page.)
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PYTHON_ENV } from "../../static/js/shared/python-env.mjs"; // the page's Python's environment

const [distDir, output, kwdocOutput] = process.argv.slice(2);
if (!distDir || !output || !kwdocOutput) {
  console.error("usage: node fontcache.mjs <pyodide dist dir> <output file> <kwdoc output file>");
  process.exit(2);
}
const indexURL = path.resolve(distDir) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL, env: { ...PYTHON_ENV }, stdout: (s) => console.error(s), stderr: (s) => console.error(s),
});
await pyodide.loadPackage("matplotlib", { messageCallback: () => {} });
const target = pyodide.runPython(readFileSync(new URL("./in_pyodide/fontcache.py", import.meta.url), "utf-8"));
writeFileSync(output, pyodide.FS.readFile(target));
writeFileSync(kwdocOutput, pyodide.runPython(readFileSync(new URL("./in_pyodide/kwdoc.py", import.meta.url), "utf-8")));
console.log(target);
