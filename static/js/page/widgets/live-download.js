// A live model's files into Python's file system, fetched only when the reader asks: the worker downloads each
// with progress, checks its size and sha256 (the build's), keeps it in Cache Storage and says where it came from
// (worker/live-files.js). What the reader should know of the files comes back as sentences. The two live panels
// (real-heads' MiniLM, next-token's SmolLM2) show the download the same way: downloadBar and downloadProgress; the
// panels that run SmolLM2 on the reader's text (next-token, residual-stream) run it the same way: liveRunner.
import { el, pythonMessage } from "./common.js";
import { lineAround } from "../line.js";
import { downloadLine } from "../download-line.js";

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
    if (loaded || total) {
      bar.hidden = false;
      bar.value = total ? loaded / total : 0;
      section.dataset.progress = String(bar.value);
    }
    say(downloadLine(name, loaded, total), "downloading");
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

/**
 * liveRunner({runtime, filesCall, options, bar, say, section, buttons, stopButton, preparing})
 *   -> busy(button, task(signal, notes), {failed, stopped})
 * One panel's runs of a live model: *busy* fetches the files (options.live_files, under options.live_url), then
 * awaits *task*, one at a time, with *buttons* disabled and *stopButton* shown (focus moved to it from *button*
 * and back); a Stop or an error is said through say(text, state): stopped() or STOPPED, or *failed* and Python's
 * message. preparing(): what to say while the files are got. Nothing runs when the site has no live files.
 */
export function liveRunner({ runtime, filesCall, options, bar, say, section, buttons, stopButton, preparing }) {
  let controller = null;
  stopButton.addEventListener("click", () => controller?.abort());
  return async function busy(button, task, { failed, stopped = () => STOPPED }) {
    if (!options.live_files || controller) return;
    const focused = document.activeElement === button;
    for (const b of buttons) b.disabled = true;
    stopButton.hidden = false;
    if (focused) stopButton.focus();
    controller = new AbortController();
    const { signal } = controller;
    try {
      say(preparing(), "busy");
      const { sources, notes } = await fetchLiveFiles({
        runtime, filesCall, folder: new URL(options.live_url, document.baseURI), sizes: options.live_files, signal,
        onProgress: downloadProgress({ bar, say, section }),
      });
      bar.hidden = true;
      section.dataset.liveSource = [...sources].join(" ");
      await task(signal, notes);
    } catch (err) {
      bar.hidden = true;
      if (wasStopped(err)) say(stopped(), "stopped");
      else {
        // Python's one-line messages end without a full stop; the page's sentence after them needs one between
        const message = pythonMessage(err).replace(/[.!?]?\s*$/, ".");
        say(lineAround(failed, message, " What is shown below is from the run before."), "error");
      }
    } finally {
      const focusedStop = document.activeElement === stopButton;
      controller = null;
      for (const b of buttons) b.disabled = false;
      stopButton.hidden = true;
      if (focusedStop) button.focus();
    }
  };
}
