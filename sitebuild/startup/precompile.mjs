// Precompile the .py files of zip archives (python_stdlib.zip, wheels) to .pyc with Pyodide itself.
//
// Usage: node precompile.mjs <pyodide dir> <src> <dst> <in-page prefix> [<src> <dst> <prefix> ...]
//
// Pyodide's CPython is the one that will run the bytecode in the page, so its compile() and marshal
// give exactly the magic number and code format the page needs (the host Python is another version).
// Each `<name>.py` that compiles becomes `<name>.pyc` holding MAGIC + 12 zero bytes + marshal(code),
// compiled with the file name it will have in the page (<prefix><name>) so tracebacks point there.
// Code objects carry no column positions (PEP 657, PYTHONNODEBUGRANGES): they only serve the ^^^
// markers under a traceback's source line, and the .py is not shipped, so no such line (and no
// marker) is ever shown for these files; without them the standard library is a quarter smaller
// once compressed. Line numbers stay. The build then packs each archive twice (sitebuild/startup/archives.py).
// A wheel's RECORD is rewritten to match.
// Prints one JSON line: per archive, how many files were compiled and which .py were kept as source.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

// The Python it runs in Pyodide (precompile_zip), in a file of its own: part of the cache key (pyodide_assets).
const TRANSFORM = readFileSync(new URL("./in_pyodide/precompile.py", import.meta.url), "utf-8");

async function main() {
  const [indexDir, ...jobArgs] = process.argv.slice(2);
  if (!indexDir || jobArgs.length === 0 || jobArgs.length % 3 !== 0) {
    console.error("usage: node precompile.mjs <pyodide dir> <src> <dst> <prefix> [...]");
    process.exit(2);
  }
  const indexURL = path.resolve(indexDir) + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(indexURL, "pyodide.mjs")).href);
  // Python's own prints go to stderr so stdout carries only the JSON report.
  const pyodide = await loadPyodide({ indexURL, env: { PYTHONNODEBUGRANGES: "1" }, stdout: (s) => console.error(s) });
  pyodide.runPython(TRANSFORM);
  const precompileZip = pyodide.globals.get("precompile_zip");
  const reports = [];
  for (let i = 0; i < jobArgs.length; i += 3) {
    const [src, dst, prefix] = jobArgs.slice(i, i + 3);
    pyodide.FS.writeFile("/tmp/in.zip", readFileSync(src));
    const report = precompileZip("/tmp/in.zip", "/tmp/out.zip", prefix);
    reports.push({ src, ...report.toJs({ dict_converter: Object.fromEntries }) });
    report.destroy();
    writeFileSync(dst, pyodide.FS.readFile("/tmp/out.zip"));
  }
  console.log(JSON.stringify(reports));
}

await main();
