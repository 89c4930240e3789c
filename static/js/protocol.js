// The message protocol between the page (runtime.js) and the Python worker (worker.js).
// Requests:  {id, type, ...}            page -> worker
// Replies:   {id, ok: true, result} | {id, ok: false, error}   worker -> page, one per request
// Events:    {type, runId, ...}         worker -> page, streamed while a request runs
// Arrays always travel as {shape, dtype, data: TypedArray} with data's buffer transferred.

/** Request types (page -> worker). */
export const Request = Object.freeze({
  INIT: "init", // {indexURL, wheelURL, bootPackages}: boot Python, load numpy and lessonpy (sent as the worker's name)
  SET_INTERRUPT: "set-interrupt", // {buffer: SharedArrayBuffer}: where Stop writes SIGINT; no reply
  RUN: "run", // {code, cellId, cells}: run one cell in the page's shared namespace
  CALL: "call", // {module, func, kwargs}: call a lessonpy function (widgets, graders); result is plain data
});

/** Event types (worker -> page). */
export const Event = Object.freeze({
  PROGRESS: "progress", // {stage, fraction}: boot progress, 0..1
  STDOUT: "stdout", // {text}: a chunk of the running cell's standard output
  STDERR: "stderr", // {text}: a chunk of its standard error
  FIGURE: "figure", // {format: "png", data: Uint8Array}: a matplotlib figure the cell drew
  ARRAYS: "arrays", // {view, arrays: {name: {shape, dtype, data}}, ...}: arrays for the components
  SHOW_ERROR: "show-error", // {message, target}: arrays handed to a view were rejected
  NOTICE: "notice", // {text}: something the reader should know (e.g. "Loading matplotlib…")
});

/** Interrupt-buffer values (Pyodide reads them between bytecodes). */
export const SIGINT = 2;
