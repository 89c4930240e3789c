// Runnable code cells: editor, Run / Stop / Reset, streamed output, saved edits.
// Cells share one Python namespace, like a notebook; running a cell first runs the
// earlier cells it builds on that have not run yet, so no reader meets a bare NameError.
import { LazyEditor } from "./lazy-editor.js";
import { lineAround } from "./line.js";
import { downloadLine } from "./download-line.js";
import { Event, cutNote } from "../shared/protocol.js";
import * as storage from "./storage.js";
import { TabSync } from "./tabsync.js";
import { cellName } from "./dom.js";

/** A PNG's size in pixels, from its header (null: not a PNG). */
function pngSize(bytes) {
  const data = ArrayBuffer.isView(bytes) ? new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new DataView(bytes);
  if (data.byteLength < 24 || data.getUint32(0) !== 0x89504e47 || data.getUint32(12) !== 0x49484452) return null; // "\x89PNG", "IHDR"
  return { width: data.getUint32(16), height: data.getUint32(20) };
}

class Output {
  /**
   * The output area of one cell: text only (textContent), never HTML from Python. Made, at the end of the cell
   * `host`, the first time there is something to show: most cells of a page are never run, and an empty region
   * in each of Lesson 4's 30 cells was 30 of its elements and 2.6 KB of its HTML.
   */
  constructor(host, label) {
    this.host = host;
    this.label = label;
    this.region = null;
    this.figures = 0;
    this.clear();
  }

  /** The region, made (shown) when first needed: a log, named after its cell. */
  get el() {
    if (!this.region) {
      this.region = document.createElement("div");
      this.region.className = "cell-output";
      this.region.setAttribute("role", "log");
      this.region.setAttribute("aria-label", `Output of ${this.label}`);
      this.host.append(this.region);
    }
    return this.region;
  }

  clear() {
    if (this.region) {
      // Figures are blob: URLs; a cell run a hundred times must not keep a hundred PNGs alive.
      for (const img of this.region.querySelectorAll("img.out-figure")) URL.revokeObjectURL(img.src);
      this.region.replaceChildren();
      this.region.hidden = true;
    }
    this.cut = 0; // characters of this run's output the worker cut
    this.cutNote = null;
    this.figures = 0;
    this.last = null;
  }

  /** Say how much output the worker cut (it keeps each run within LIMITS.OUTPUT_CHARS); one note per run. */
  addCut(chars) {
    if (!chars) return;
    this.cut += chars;
    if (!this.cutNote) {
      this.cutNote = this.note("cut", "");
    }
    this.cutNote.textContent = cutNote("output", this.cut);
  }

  /** A block of its own (a hint, a note), returned so it can be updated. */
  note(kind, text) {
    this.el.hidden = false;
    const block = document.createElement("pre");
    block.className = `out out-${kind}`;
    block.dataset.kind = kind;
    block.textContent = text;
    this.el.append(block);
    this.last = null;
    return block;
  }

  append(kind, text) {
    if (!text) return;
    this.el.hidden = false;
    // Consecutive chunks of one stream go into one block, so lines are not split up.
    if (!this.last || this.last.dataset.kind !== kind) {
      this.last = document.createElement("pre");
      this.last.className = `out out-${kind}`;
      this.last.dataset.kind = kind;
      this.last.append(document.createTextNode(""));
      this.el.append(this.last);
    }
    this.last.firstChild.appendData(text);
  }

  figure(bytes) {
    this.el.hidden = false;
    this.figures += 1;
    const img = document.createElement("img");
    img.className = "out-figure";
    img.alt = `Figure ${this.figures} drawn by ${this.label}`;
    // Its box is laid out at once, at its size (site.css scales it down to fit): what follows moves once, as the
    // figure comes, and not again a frame later, when its pixels are decoded.
    const size = pngSize(bytes);
    if (size) Object.assign(img, size);
    img.src = URL.createObjectURL(new Blob([bytes], { type: "image/png" }));
    this.el.append(img);
    this.last = null;
  }
}

/** A button of a cell's toolbar, hidden until its cell shows it. */
function toolbarButton(className, text, title = null) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.textContent = text;
  if (title) button.title = title;
  button.hidden = true;
  return button;
}

/** The live models' files a cell's run needs first (the build's data-files: sitebuild/pages/cell_files.py),
 *  their folders made absolute for the worker; undefined when it needs none. */
function runFiles(el) {
  if (!el.dataset.files) return undefined;
  try {
    return JSON.parse(el.dataset.files).map((model) => ({ ...model, url: new URL(model.url, document.baseURI).href }));
  } catch {
    return undefined; // the cell runs, and its Python says the files are missing
  }
}

export class Cell {
  constructor(el, index, page) {
    this.el = el;
    this.index = index;
    this.page = page;
    this.id = el.dataset.cell;
    // The lesson's code is the stand-in's text as the build wrote it (markup.code_standin), read before the
    // editor shows a saved edit there: the page carries it once.
    this.original = el.querySelector(".cell-editor > pre.code-standin > code").textContent;
    this.label = cellName(el); // what the reader sees at the cell, so that every message names it the same way
    this.runButton = el.querySelector(".cell-run");
    // Stop and Reset are made the first time they are shown (#stopButtonMade, #resetButtonMade): most
    // cells never need them, and two hidden buttons in each of Lesson 4's 30 cells were 60 of its elements.
    this.stopButton = null;
    this.resetButton = null;
    this.stateEl = el.querySelector(".cell-state");
    this.output = new Output(el, this.label);
    this.files = runFiles(el);
    this.download = null; // {name, step} of the download the state line last reported

    const saved = storage.load(page.lesson, "cell", this.id);
    const code = saved && typeof saved.code === "string" ? saved.code : this.original;
    // Plain text until the reader comes near (lazy-editor.js); this.editor works the same either way.
    this.editor = new LazyEditor(el.querySelector(".cell-editor"), {
      doc: code,
      label: `Code of ${this.label}`,
      near: el,
      onRun: () => this.page.runCell(this),
      onChange: (text) => {
        this.#updateReset(text);
        this.sync.edited(text);
      },
    });
    // Saved edits, kept in step with the lesson's other tabs (tabsync.js).
    this.sync = new TabSync({
      lesson: page.lesson, kind: "cell", id: this.id, original: this.original, stored: code, editor: this.editor,
      anchor: el.querySelector(".cell-toolbar"), onKeep: () => this.runButton.focus(),
      write: (text, from) => (text === this.original
        ? storage.remove(page.lesson, "cell", this.id)
        : storage.save(page.lesson, "cell", this.id, { code: text, base: storage.fingerprint(this.original), from })),
    });
    if (saved && saved.base !== storage.fingerprint(this.original) && code !== this.original) {
      this.setState("The lesson's version of this cell changed since you edited it; Reset shows the new one.");
    }
    this.#updateReset(code);
    this.runButton.disabled = false;
    this.runButton.addEventListener("click", () => this.page.runCell(this));
  }

  /** The cell's Stop button, made (hidden, after Run) the first time it is asked for. */
  #stopButtonMade() {
    if (!this.stopButton) {
      this.stopButton = toolbarButton("cell-stop", "Stop");
      this.stopButton.addEventListener("click", () => this.page.stop(this));
      this.runButton.after(this.stopButton);
    }
    return this.stopButton;
  }

  /** The cell's Reset button, made (hidden, after Run and Stop) the first time it is asked for. */
  #resetButtonMade() {
    if (!this.resetButton) {
      this.resetButton = toolbarButton("cell-reset", "Reset", "Put back the lesson's original code");
      this.resetButton.addEventListener("click", () => this.reset());
      (this.stopButton ?? this.runButton).after(this.resetButton);
    }
    return this.resetButton;
  }

  get code() {
    return this.editor.getCode();
  }

  #updateReset(text) {
    if (text !== this.original) this.#resetButtonMade().hidden = false;
    else if (this.resetButton) this.resetButton.hidden = true;
  }

  reset() {
    this.editor.setCode(this.original); // saved through onChange, like any edit
    if (this.resetButton) this.resetButton.hidden = true;
    this.setState("Back to the lesson's original code.");
    this.editor.focus();
  }

  setState(text) {
    this.stateEl.textContent = text;
  }

  setRunning(running) {
    // The control under the reader's focus is about to be disabled or hidden: hand focus to
    // the one taking its place, so a keyboard reader is not thrown back to the top of the page.
    const focused = document.activeElement;
    this.el.classList.toggle("is-running", running);
    this.el.setAttribute("aria-busy", running ? "true" : "false");
    if (running) this.#stopButtonMade().hidden = false;
    else if (this.stopButton) this.stopButton.hidden = true;
    this.runButton.disabled = running;
    if (running && focused === this.runButton) this.stopButton.focus();
    if (!running && focused === this.stopButton) this.runButton.focus();
  }

  /** Handle an event streamed by the worker while this cell runs. */
  onEvent(event) {
    switch (event.type) {
      case Event.STDOUT: return this.output.append("stdout", event.text);
      case Event.STDERR: return this.output.append("stderr", event.text);
      case Event.OUTPUT_CUT: return this.output.addCut(event.chars);
      case Event.NOTICE: return this.setState(event.text);
      case Event.FIGURE: return this.output.figure(event.data);
      case Event.DOWNLOAD: return this.#downloading(event);
      default: return undefined; // arrays and the like are for the page's components
    }
  }

  /** A file this run needs coming (data-files): said in the state line at its start and every 5 %, not at
   *  every event (it is a polite live region: a screen reader would read a stream of numbers). */
  #downloading({ name, loaded, total }) {
    if (!name) return;
    const step = total ? Math.floor((20 * loaded) / total) : Math.floor(loaded / 5e6);
    if (this.download?.name === name && this.download.step === step) return;
    this.download = { name, step };
    this.setState(downloadLine(name, loaded, total));
  }

  /** Show a finished run's result. */
  showResult(result, seconds) {
    if (result.value !== null && result.value !== undefined) this.output.append("value", result.value + "\n");
    if (result.ok) {
      this.setState(`Ran in ${seconds.toFixed(2)} s.`);
      this.el.dataset.status = "ok";
      return;
    }
    this.el.dataset.status = result.errorName === "KeyboardInterrupt" ? "stopped" : "error";
    this.output.append("error", result.error);
    if (result.hint) this.output.append("hint", result.hint + "\n");
    this.setState(result.errorName === "KeyboardInterrupt" ? "Stopped." : lineAround("", result.errorName, ": see the output below."));
  }
}

export class CellPage {
  /** All cells of one lesson page, sharing one runtime and running one at a time. */
  constructor(root, runtime, lesson) {
    this.runtime = runtime;
    this.lesson = lesson;
    this.chain = Promise.resolve();
    this.queued = new Set();
    this.attempted = new Set(); // cells the reader ran, even if they failed or were stopped
    this.running = null; // the cell whose code Python runs (a prerequisite or the target)
    this.job = null; // {cell, controller}: the press of Run being served; Stop aborts it
    runtime.addEventListener("restarted", ({ detail }) => {
      // A clean interpreter: running a later cell runs the ones it builds on again.
      if (detail.cleared) this.attempted.clear();
    });
    // Every cell runs at once (Run, Shift+Enter): its editor is built later (lazy-editor.js).
    this.cells = [...root.querySelectorAll("[data-cell]")].map((el, i) => new Cell(el, i + 1, this));
  }

  /** Run `cell`, after the earlier cells it depends on that have not run in this interpreter. */
  runCell(cell) {
    if (this.queued.has(cell) || this.job?.cell === cell) return this.chain;
    this.queued.add(cell);
    cell.el.dataset.status = "queued";
    cell.setState("Waiting…");
    cell.setRunning(true);
    this.chain = this.chain.then(() => this.#runWithPrerequisites(cell)).catch(() => {});
    return this.chain;
  }

  async #runWithPrerequisites(cell) {
    if (!this.queued.delete(cell)) return; // cancelled while waiting
    this.job = { cell, controller: new AbortController() };
    try {
      await this.#runAfter(cell, this.job.controller.signal);
    } finally {
      this.job = null;
    }
  }

  async #runAfter(cell, signal) {
    // Only cells nobody has tried yet: re-running one the reader stopped (an endless loop,
    // say) or saw fail would repeat the problem instead of preparing the namespace.
    const earlier = this.cells.slice(0, this.cells.indexOf(cell))
      .filter((c) => !this.runtime.ranCells.has(c.id) && !this.attempted.has(c));
    for (const before of earlier) {
      before.setRunning(true);
      const ok = await this.#execute(before, [], signal);
      if (!ok || signal.aborted) {
        // A Stop while the earlier cell only waited (behind an install, a widget) cancelled it, as it
        // cancels any waiting run: nothing of it ran, and this cell says so in the same words.
        const waited = before.el.dataset.status === "cancelled";
        cell.setRunning(false);
        cell.output.clear();
        if (waited || signal.aborted) {
          const [status, word, doing] = waited ? ["cancelled", "Cancelled", "waiting to run"] : ["stopped", "Stopped", "running"];
          cell.el.dataset.status = status;
          cell.output.append("hint", `${word} while ${before.label}, which this cell builds on, was ${doing}.\n`);
          cell.setState(`${word}.`);
        } else {
          cell.el.dataset.status = "error";
          cell.output.append("hint", `This cell builds on ${before.label}, which did not finish: fix or run it first.\n`);
          cell.setState("Not run.");
        }
        return;
      }
    }
    await this.#execute(cell, earlier, signal);
  }

  async #execute(cell, prerequisites, signal) {
    this.running = cell;
    this.attempted.add(cell);
    cell.output.clear();
    cell.download = null;
    cell.el.dataset.status = "queued";
    if (prerequisites.length) {
      const names = prerequisites.map((c) => c.label).join(", ");
      cell.output.append("hint", `Ran ${names} first: this cell builds on ${prerequisites.length > 1 ? "them" : "it"}.\n`);
    }
    // Python may be busy with something else (an exercise being checked, a widget): the cell
    // says "Waiting…" until the worker really takes its code.
    cell.setState("Waiting…");
    let started = 0;
    const onStart = () => {
      started = performance.now();
      cell.el.dataset.status = "running";
      cell.setState("Running…");
    };
    const others = Object.fromEntries(this.cells.map((c) => [c.id, c.code]));
    try {
      const result = await this.runtime.run(cell.code, cell.id, {
        onEvent: (e) => cell.onEvent(e), cells: others, order: cell.index, signal, onStart, files: cell.files,
      });
      cell.showResult(result, (performance.now() - started) / 1000);
      return result.ok;
    } catch (err) {
      this.#showFailure(cell, err);
      return false;
    } finally {
      cell.setRunning(false);
      this.running = null;
    }
  }

  #showFailure(cell, err) {
    if (err.cancelled) {
      cell.el.dataset.status = "cancelled";
      cell.setState("Cancelled.");
      return;
    }
    cell.el.dataset.status = err.stopped ? "stopped" : "error";
    cell.setState(err.stopped ? "Stopped." : "Failed.");
    if (!err.stopped && !err.fatal) {
      cell.output.append("error", `Python could not run this cell: ${err.message}\n`);
      return;
    }
    const head = err.cleared ? "Stopped: you restarted Python."
      : err.stopped
      ? "Stopped: Python could not be interrupted in place, so it is restarting. Your code is as you left it."
      : `Python crashed while running this cell (${err.message}). It is restarting; your code is as you left it.`;
    const note = cell.output.note(err.stopped ? "hint" : "error", `${head}\n`);
    this.runtime.restarting?.then((report) => {
      note.textContent = `${head}\n${this.describeRestart(report)}\n`;
    }, () => {});
  }

  /** What a restart did, in the reader's terms ("Cell 2", as the cell shows). */
  describeRestart(report) {
    const label = (id) => this.cells.find((c) => c.id === id)?.label ?? id;
    const list = (ids) => ids.map(label).join(", ");
    if (report.cleared) return "Python restarted with no variables.";
    const parts = [report.replayed.length
      ? `Python restarted and re-ran ${list(report.replayed)} to bring your variables back.`
      : "Python restarted; no earlier cell needed re-running."];
    for (const { cellId, seconds } of report.skipped) {
      parts.push(`Not re-run: ${label(cellId)} (it took ${seconds.toFixed(1)} s); run it again if you need its variables.`);
    }
    if (report.failed.length) parts.push(`${list(report.failed)} failed when re-run.`);
    return parts.join(" ");
  }

  /** Stop `cell`: cancel it if it is only waiting, else stop what its Run started. */
  stop(cell) {
    if (this.queued.delete(cell)) {
      cell.setRunning(false);
      cell.el.dataset.status = "cancelled";
      cell.setState("Cancelled.");
      return;
    }
    // The job this cell belongs to: its own, or the one it is a prerequisite of.
    if (this.job && (this.job.cell === cell || this.running === cell)) {
      if (this.running) this.running.setState("Stopping…");
      this.job.controller.abort();
    }
  }
}
