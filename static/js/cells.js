// Runnable code cells: editor, Run / Stop / Reset, streamed output, saved edits.
// Cells share one Python namespace, like a notebook; running a cell first runs the
// earlier cells it builds on that have not run yet, so no reader meets a bare NameError.
import { createEditor } from "./editor.js";
import { Event } from "./protocol.js";
import * as storage from "./storage.js";

const MAX_OUTPUT_CHARS = 400_000; // per cell on screen; the worker already caps what it sends

class Output {
  /** The output area of one cell: text only (textContent), never HTML from Python. */
  constructor(el, label) {
    this.el = el;
    this.label = label;
    this.chars = 0;
    this.figures = 0;
  }

  clear() {
    // Figures are blob: URLs; a cell run a hundred times must not keep a hundred PNGs alive.
    for (const img of this.el.querySelectorAll("img.out-figure")) URL.revokeObjectURL(img.src);
    this.el.replaceChildren();
    this.el.hidden = true;
    this.chars = 0;
    this.figures = 0;
    this.last = null;
  }

  append(kind, text) {
    if (!text) return;
    this.el.hidden = false;
    if (this.chars > MAX_OUTPUT_CHARS) return;
    this.chars += text.length;
    if (this.chars > MAX_OUTPUT_CHARS) text += "\n[output cut: too long to show]\n";
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
    img.src = URL.createObjectURL(new Blob([bytes], { type: "image/png" }));
    this.el.append(img);
    this.last = null;
  }
}

export class Cell {
  constructor(el, index, page) {
    this.el = el;
    this.index = index;
    this.page = page;
    const source = JSON.parse(el.querySelector("script.cell-source").textContent);
    this.id = source.id;
    this.original = source.code;
    this.label = `code cell ${index}`;
    this.runButton = el.querySelector(".cell-run");
    this.stopButton = el.querySelector(".cell-stop");
    this.resetButton = el.querySelector(".cell-reset");
    this.stateEl = el.querySelector(".cell-state");
    this.output = new Output(el.querySelector(".cell-output"), this.label);

    const saved = storage.load(page.lesson, "cell", this.id);
    const code = saved && typeof saved.code === "string" ? saved.code : this.original;
    const holder = el.querySelector(".cell-editor");
    holder.replaceChildren();
    this.editor = createEditor(holder, {
      doc: code,
      label: `Code of ${this.label}`,
      onRun: () => this.page.runCell(this),
      onChange: (text) => this.#saveEdit(text),
    });
    if (saved && saved.base !== storage.fingerprint(this.original) && code !== this.original) {
      this.setState("The lesson's version of this cell changed since you edited it; Reset shows the new one.");
    }
    this.#updateReset(code);
    this.runButton.disabled = false;
    this.runButton.addEventListener("click", () => this.page.runCell(this));
    this.stopButton.addEventListener("click", () => this.page.stop(this));
    this.resetButton.addEventListener("click", () => this.reset());
  }

  get code() {
    return this.editor.getCode();
  }

  #saveEdit(text) {
    if (text === this.original) storage.remove(this.page.lesson, "cell", this.id);
    else storage.save(this.page.lesson, "cell", this.id, { code: text, base: storage.fingerprint(this.original) });
    this.#updateReset(text);
  }

  #updateReset(text) {
    this.resetButton.hidden = text === this.original;
  }

  reset() {
    this.editor.setCode(this.original);
    storage.remove(this.page.lesson, "cell", this.id);
    this.resetButton.hidden = true;
    this.setState("Back to the lesson's original code.");
    this.editor.focus();
  }

  setState(text) {
    this.stateEl.textContent = text;
  }

  setRunning(running) {
    this.el.classList.toggle("is-running", running);
    this.el.setAttribute("aria-busy", running ? "true" : "false");
    this.stopButton.hidden = !running;
    this.runButton.disabled = running;
  }

  /** Handle an event streamed by the worker while this cell runs. */
  onEvent(event) {
    switch (event.type) {
      case Event.STDOUT: return this.output.append("stdout", event.text);
      case Event.STDERR: return this.output.append("stderr", event.text);
      case Event.NOTICE: return this.setState(event.text);
      case Event.FIGURE: return this.output.figure(event.data);
      default: return undefined; // arrays and the like are for the page's components
    }
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
    this.setState(result.errorName === "KeyboardInterrupt" ? "Stopped." : `${result.errorName}: see the output below.`);
  }
}

export class CellPage {
  /** All cells of one lesson page, sharing one runtime and running one at a time. */
  constructor(root, runtime, lesson) {
    this.runtime = runtime;
    this.lesson = lesson;
    this.cells = [];
    this.ready = this.#createCells([...root.querySelectorAll("[data-cell]")]);
    this.chain = Promise.resolve();
    this.queued = new Set();
    this.attempted = new Set(); // cells the reader ran, even if they failed or were stopped
    this.running = null;
  }

  async #createCells(elements) {
    // One editor per task: building them all at once blocks the main thread for
    // ~100 ms on a slow machine; a page with many cells would freeze for longer.
    for (const [i, el] of elements.entries()) {
      this.cells.push(new Cell(el, i + 1, this));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Run `cell`, after the earlier cells it depends on that have not run in this interpreter. */
  runCell(cell) {
    if (this.queued.has(cell) || this.running === cell) return this.chain;
    this.queued.add(cell);
    cell.el.dataset.status = "queued";
    cell.setState(this.running ? "Waiting for the cell that is running…" : "Waiting for Python…");
    cell.setRunning(true);
    this.chain = this.chain.then(() => this.#runWithPrerequisites(cell)).catch(() => {});
    return this.chain;
  }

  async #runWithPrerequisites(cell) {
    if (!this.queued.has(cell)) return; // cancelled while waiting
    this.queued.delete(cell);
    this.target = cell;
    try {
      await this.#runAfter(cell);
    } finally {
      this.target = null;
    }
  }

  async #runAfter(cell) {
    // Only cells nobody has tried yet: re-running one the reader stopped (an endless loop,
    // say) or saw fail would repeat the problem instead of preparing the namespace.
    const earlier = this.cells.slice(0, this.cells.indexOf(cell))
      .filter((c) => !this.runtime.ranCells.has(c.id) && !this.attempted.has(c));
    for (const before of earlier) {
      before.setRunning(true);
      const ok = await this.#execute(before);
      if (!ok || this.target !== cell) {
        cell.setRunning(false);
        cell.el.dataset.status = "error";
        cell.output.clear();
        cell.output.append("hint", `This cell builds on code cell ${before.index}, which did not finish: fix or run it first.\n`);
        cell.setState("Not run.");
        return;
      }
    }
    await this.#execute(cell, earlier);
  }

  async #execute(cell, prerequisites = []) {
    this.running = cell;
    this.attempted.add(cell);
    cell.output.clear();
    cell.el.dataset.status = "running";
    if (prerequisites.length) {
      const names = prerequisites.map((c) => c.index).join(", ");
      cell.output.append("hint", `Ran code cell${prerequisites.length > 1 ? "s" : ""} ${names} first: this cell builds on ${prerequisites.length > 1 ? "them" : "it"}.\n`);
    }
    cell.setState("Running…");
    const started = performance.now();
    const others = Object.fromEntries(this.cells.map((c) => [c.id, c.code]));
    try {
      const result = await this.runtime.run(cell.code, cell.id, { onEvent: (e) => cell.onEvent(e), cells: others });
      cell.showResult(result, (performance.now() - started) / 1000);
      return result.ok;
    } catch (err) {
      cell.el.dataset.status = err.stopped ? "stopped" : "error";
      if (err.stopped) cell.output.append("hint", "Stopped. Python restarted; the cells you had run were run again, and your code is as you left it.\n");
      else if (err.fatal) cell.output.append("error", `Python crashed while running this cell (${err.message}). It is restarting and will re-run the cells you had run before; your code is as you left it.\n`);
      else cell.output.append("error", `Python could not run this cell: ${err.message}\n`);
      cell.setState(err.stopped ? "Stopped." : "Failed.");
      return false;
    } finally {
      cell.setRunning(false);
      this.running = null;
    }
  }

  /** Stop `cell`: cancel it if it is only waiting, else stop the running Python code. */
  async stop(cell) {
    if (this.queued.delete(cell)) {
      cell.setRunning(false);
      cell.el.dataset.status = "cancelled";
      cell.setState("Cancelled.");
      return;
    }
    if (this.running === cell || this.target === cell) {
      if (this.target === cell) this.target = null; // do not go on to the cell after its prerequisites
      cell.setState("Stopping…");
      await this.runtime.stop();
    }
  }
}
