// Pyodide's file system, as much of it as the worker's file downloads use (live-files.js, run-files.js): a Map
// of path -> bytes, for the node tests.
export function memoryFs() {
  const files = new Map();
  return {
    files,
    analyzePath: (path) => ({ exists: files.has(path) }),
    stat: (path) => ({ size: files.get(path).length }),
    mkdirTree: () => {},
    writeFile: (path, bytes) => files.set(path, bytes),
  };
}
