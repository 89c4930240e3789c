// Pyodide runs without JSPI (WebAssembly stack switching) on both boots.
//
// Pyodide looks for JSPI once, when its module is created, and with it runs each step of a Python task
// through a stack-switching call. Two reasons to go without:
// - The build's memory snapshot is made under Node, which has no JSPI; Pyodide adds a function to the
//   table when it finds JSPI, so a restore must not find it, or the table's layout differs from the image's.
// - A normal boot that did find it would then be a different interpreter from a restored one. The lesson
//   needs nothing JSPI gives (`pyodide.ffi.run_sync`, synchronous waits on JavaScript).
const KEYS = ["Suspending", "Suspender", "promising"];

/** Hide JSPI from WebAssembly; returns the function that puts it back (once the module exists). */
export function hideJSPI() {
  const hidden = Object.fromEntries(KEYS.filter((k) => k in WebAssembly).map((k) => [k, WebAssembly[k]]));
  for (const key of Object.keys(hidden)) delete WebAssembly[key];
  return () => Object.assign(WebAssembly, hidden);
}
