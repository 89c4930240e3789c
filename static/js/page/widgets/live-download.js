// A live model's files into Python's file system, fetched only when the reader asks: the worker downloads each
// with progress, checks its size and sha256 (the build's), keeps it in Cache Storage and says where it came from
// (worker/live-files.js). What the reader should know of the files comes back as sentences. The two live panels
// (real-heads' MiniLM, next-token's SmolLM2) show the download the same way: downloadBar and downloadProgress.
import { el, num } from "./common.js";

/** The progress bar of a live model's download (hidden until bytes come): `model` names it for a screen reader. */
export function downloadBar(className, model) {
  const bar = el("progress", className);
  bar.max = 1;
  bar.value = 0;
  bar.hidden = true;
  bar.setAttribute("aria-label", `Downloading ${model}'s weights`);
  return bar;
}

/**
 * fetchLiveFiles' onProgress for a panel: each file's start and its bytes in words through `say(text, state)`
 * (state "downloading"), the fraction in `bar` and in `section.dataset.progress` (a test reads it).
 */
export function downloadProgress({ bar, say, section }) {
  return (name, loaded, total) => {
    if (!loaded && !total) {
      say(`Getting ${name}…`, "downloading");
      return;
    }
    bar.hidden = false;
    bar.value = total ? loaded / total : 0;
    section.dataset.progress = String(bar.value);
    say(`Downloading ${name}: ${num(loaded / 1e6, 1)}${total ? ` of ${num(total / 1e6, 1)}` : ""} MB`, "downloading");
  };
}

/**
 * fetchLiveFiles({runtime, filesCall, folder, sizes, signal, onProgress(name, loaded, total)})
 *   -> {sources: Set("python" | "cache" | "network"), notes: [sentence]}
 * filesCall: the [module, function] that lists [{name, path, loaded}]; folder: the URL the names are under; sizes: the
 * build's {name: {size, sha256}}.
 */
export async function fetchLiveFiles({ runtime, filesCall, folder, sizes, signal, onProgress }) {
  const files = await runtime.call(...filesCall, {}, { signal });
  const sources = new Set();
  const notes = [];
  for (const { name, path, loaded } of files) {
    // Python has read it already and dropped the file system's copy (lessonpy.models.page_files): nothing to put
    if (loaded) {
      sources.add("python");
      continue;
    }
    onProgress(name, 0, 0);
    const onEvent = ({ loaded, total }) => onProgress(name, loaded, total);
    const reply = await runtime.fetchFile(new URL(name, folder).href, path, { onEvent, signal, ...sizes[name] });
    sources.add(reply.source);
    if (reply.damaged) notes.push(`Your browser's copy of ${name} was damaged (${reply.damaged}), so it was downloaded again.`);
    if (reply.source === "network" && !reply.kept) {
      notes.push(`Your browser did not keep ${name} (its storage is full or too small), so a new visit downloads it again.`);
    }
  }
  return { sources, notes };
}

/** Whether a live run's failure *err* is the reader's Stop (or a cancel before it ran), not an error. */
export const wasStopped = (err) => Boolean(err.stopped || err.cancelled || /KeyboardInterrupt/.test(err.message));
/** What a live panel says when its run was stopped. */
export const STOPPED = "Stopped. Nothing is lost: run it again when you like (a finished download is not repeated).";
