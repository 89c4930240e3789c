// The files a cell's run needs in Python's file system before its code starts (protocol.js, RunRequest
// `files`; sitebuild/pages/cell_files.py says which cells and why): each live model's files, put there as a
// panel's are (live-files.js: checked by size and SHA-256, kept in Cache Storage, progress), unless Python
// has read them already. No Python runs meanwhile but the listing call, so the worker's Stop (stoppable)
// aborts a download in place.

import { fetchFile } from "./live-files.js";
import { SIGINT } from "../shared/protocol.js";

/**
 * putRunFiles({files, list, fs, progress, signal}): resolves once every file is there.
 * files: the run's CellFiles; list([module, func]): Python's [{name, path, loaded}] for one model;
 * progress(name, loaded, total); signal: aborted by a Stop (rejects with its reason).
 */
export async function putRunFiles({ files, list, fs, progress, signal }) {
  for (const model of files) {
    for (const { name, path, loaded } of list(model.call)) {
      if (loaded) continue; // Python holds them already (lessonpy.models.page_files)
      const url = new URL(name, model.url).href;
      const expected = model.files[name] ?? {};
      progress(name, 0, expected.size ?? 0);
      await fetchFile({ url, path, expected, fs, signal, progress: (got, total) => progress(name, got, total) });
    }
  }
}

/**
 * `task(signal)`, whose signal is aborted when the page's Stop lands in `buffer` (the interrupt buffer,
 * polled every `pollMs` ms; the Stop is then taken out of it, so no Python after it sees it). Without a
 * buffer (no SharedArrayBuffer) a Stop restarts Python instead, and the signal never aborts.
 */
export async function stoppable(buffer, task, pollMs) {
  if (!buffer) return task(undefined);
  const controller = new AbortController();
  const poll = setInterval(() => {
    if (buffer[0] !== SIGINT) return;
    buffer[0] = 0;
    controller.abort();
  }, pollMs);
  try {
    return await task(controller.signal);
  } finally {
    clearInterval(poll);
  }
}
