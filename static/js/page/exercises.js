// Exercises: starter code in an editor, hidden checks run in the worker, hints, a solution.
// The build emits each exercise as HTML (its starter code in the editor's stand-in, its solution in the hidden
// panel: each written once, read here) and data (script.exercise-data: id, title, check, timeout); the checks
// are Python in lessonpy.course.attention.exercises and run through lessonpy.maths.grading.grade in a namespace of their own.
import { el as element } from "./dom.js";
import { LazyEditor } from "./lazy-editor.js";
import * as storage from "./storage.js";
import { TabSync } from "./tabsync.js";

const KIND = "exercise";
const GRACE_MS = 3_000; // past timeout + this, the page restarts Python itself (code stuck in C)

class Exercise {
  constructor(el, runtime, lesson) {
    this.el = el;
    this.runtime = runtime;
    this.lesson = lesson;
    this.$ = (selector) => el.querySelector(selector);
    // the starter as the build wrote it, read before the editor (or a saved edit) takes the stand-in's place
    this.data = { ...JSON.parse(el.querySelector("script.exercise-data").textContent),
                  starter: this.$(".exercise-editor pre").textContent, solution: this.$(".exercise-solution pre").textContent };
    this.hints = [...el.querySelectorAll(".exercise-hint")];
    this.base = storage.fingerprint(this.data.starter);

    const saved = storage.load(lesson, KIND, this.data.id);
    const { base, ...state } = storage.validated(saved, {
      code: [storage.isString, this.data.starter],
      attempts: [storage.isCount(0), 0],
      solved: [storage.isBoolean, false],
      hints: [storage.isCount(0, this.hints.length), 0],
      base: [storage.isString, null],
    });
    this.state = state;

    // Plain text until the reader comes near (lazy-editor.js); this.editor works the same either way.
    this.editor = new LazyEditor(this.$(".exercise-editor"), {
      doc: this.state.code,
      near: el,
      label: `Your code for the exercise “${this.data.title}”`,
      onRun: () => this.check(),
      onChange: (code) => {
        this.state.code = code;
        this.sync.edited(code);
        this.#updateButtons();
      },
    });
    // The code is kept in step with the lesson's other tabs (tabsync.js); progress travels with it:
    // another tab's attempts, hints and solved are merged in, so this tab's next save cannot undo them.
    this.sync = new TabSync({
      lesson, kind: KIND, id: this.data.id, original: this.data.starter, stored: this.state.code, editor: this.editor,
      anchor: this.$(".exercise-editor"), onKeep: () => this.editor.focus(), onStored: (value) => this.#mergeProgress(value),
      write: (code, from) => storage.save(lesson, KIND, this.data.id, { ...this.state, code, base: this.base, from }),
    });

    this.checkButton = this.$(".exercise-check");
    this.hintButton = this.$(".exercise-hint-button");
    this.solutionButton = this.$(".exercise-solution-button");
    this.resetButton = this.$(".exercise-reset");
    this.checkButton.addEventListener("click", () => this.check());
    this.hintButton?.addEventListener("click", () => this.showHint());
    this.solutionButton.addEventListener("click", () => this.toggleSolution());
    this.resetButton.addEventListener("click", () => this.reset());
    this.$(".exercise-use-solution").addEventListener("click", () => this.useSolution());

    this.#showProgress();
    this.checkButton.disabled = false;
    if (this.state.solved) this.setState("You solved this one. Your code is as you left it.");
    else if (base && base !== this.base && this.state.code !== this.data.starter) {
      this.setState("This exercise changed since you worked on it; Reset shows its new starter code.");
    }
  }

  setState(text) {
    this.$(".exercise-state").textContent = text;
  }

  #save() {
    this.sync.edited(this.state.code);
  }

  #mergeProgress(value) {
    if (!value) return;
    const { attempts, hints, solved } = this.state;
    this.state.attempts = Math.max(attempts, Number(value.attempts) || 0);
    this.state.hints = Math.min(this.hints.length, Math.max(hints, Number(value.hints) || 0));
    this.state.solved = solved || value.solved === true;
    this.#showProgress();
  }

  #showProgress() {
    for (let i = 0; i < this.state.hints; i++) this.hints[i].hidden = false;
    this.$(".exercise-hints").hidden = this.state.hints === 0;
    this.#updateButtons();
    this.#markSolved();
  }

  #updateButtons() {
    this.resetButton.hidden = this.state.code === this.data.starter;
    const canSee = this.state.attempts > 0;
    this.solutionButton.disabled = !canSee;
    this.solutionButton.title = canSee ? "" : "Available after your first attempt";
    if (this.hintButton) {
      const shown = this.state.hints;
      const total = this.hints.length;
      this.hintButton.disabled = shown >= total;
      this.hintButton.textContent = shown >= total ? "No more hints" : `Hint (${shown + 1} of ${total})`;
    }
  }

  #markSolved() {
    this.el.dataset.solved = String(this.state.solved);
    this.$(".exercise-badge").hidden = !this.state.solved;
  }

  showHint() {
    if (this.state.hints >= this.hints.length) return;
    const hint = this.hints[this.state.hints];
    hint.hidden = false;
    this.$(".exercise-hints").hidden = false;
    this.state.hints += 1;
    this.#save();
    this.#updateButtons();
    this.setState(`Hint ${this.state.hints} of ${this.hints.length} is below the buttons.`);
  }

  toggleSolution() {
    const panel = this.$(".exercise-solution");
    panel.hidden = !panel.hidden;
    this.solutionButton.textContent = panel.hidden ? "Show solution" : "Hide solution";
    this.solutionButton.setAttribute("aria-expanded", String(!panel.hidden));
  }

  useSolution() {
    this.editor.setCode(this.data.solution);
    this.setState("The solution is in the editor (Ctrl+Z brings your code back).");
    this.editor.focus();
  }

  reset() {
    this.editor.setCode(this.data.starter);
    this.setState("Back to the starter code (Ctrl+Z brings your code back).");
    this.editor.focus();
  }

  async check() {
    if (this.busy) return;
    this.busy = true;
    // aria-disabled, not disabled: a disabled button loses the keyboard focus of whoever pressed it.
    this.checkButton.setAttribute("aria-disabled", "true");
    this.el.setAttribute("aria-busy", "true");
    this.el.dataset.status = "checking";
    const code = this.editor.getCode();
    try {
      // Python may be busy with a cell: the check waits its turn, and its deadline starts when it does.
      this.setState("Waiting…");
      this.state.attempts += 1;
      this.#save();
      this.#updateButtons();
      this.#show(await this.#grade(code));
    } catch (err) {
      this.#show({ correct: false, stage: "failed", checks: [], output: "", error: `The checks could not run: ${err.message}` });
    } finally {
      this.busy = false;
      this.checkButton.removeAttribute("aria-disabled");
      this.el.setAttribute("aria-busy", "false");
    }
  }

  /** Grade in the worker; if Python does not answer in time (stuck inside C code), it is restarted. */
  async #grade(code) {
    const seconds = this.data.timeout;
    try {
      return await this.runtime.call("lessonpy.maths.grading", "grade", { code, check: this.data.check, timeout: seconds }, {
        onStart: () => this.setState("Checking…"),
        // Python's own deadline did not fire by then, so the code is stuck where an interrupt would
        // not reach it either (inside one C call): the runtime starts a fresh interpreter.
        deadlineMs: seconds * 1000 + GRACE_MS,
      });
    } catch (err) {
      if (!err.stuck) throw err;
      return { correct: false, stage: "timeout", checks: [], output: "",
               error: `Your code ran longer than ${seconds} s and was stopped — an endless loop?` };
    }
  }

  #show(result) {
    const feedback = this.$(".exercise-feedback");
    const nodes = [];
    const passed = result.checks.filter((c) => c.correct).length;
    let summary;
    if (result.correct) summary = `Solved! All ${result.checks.length} checks pass.`;
    else if (result.stage === "checks") {
      const failed = result.checks.length - passed;
      summary = `Not yet: ${failed} check${failed === 1 ? "" : "s"} fail${failed === 1 ? "s" : ""}${passed ? `, ${passed} pass` : ""}.`;
    }
    else if (result.stage === "blanks") summary = "Not checked yet: there are blanks to fill in.";
    else if (result.stage === "syntax") summary = "Not checked: Python cannot read the code.";
    else if (result.stage === "timeout") summary = "Not checked: your code did not finish in time.";
    else if (result.stage === "failed") summary = "The checks could not run; try again.";
    else summary = "Not checked: your code stopped with an error.";
    nodes.push(element("p", `exercise-summary ${result.correct ? "is-right" : "is-wrong"}`, summary));
    if (result.checks.length) {
      const list = element("ul", "exercise-checks");
      list.setAttribute("aria-label", "Checks");
      for (const check of result.checks) {
        const item = element("li", check.correct ? "check-ok" : "check-fail");
        const mark = element("span", "check-mark", check.correct ? "✓" : "✗");
        mark.setAttribute("aria-hidden", "true");
        item.append(mark, element("span", "visually-hidden", check.correct ? "Passed: " : "Failed: "), check.message);
        list.append(item);
      }
      nodes.push(list);
    }
    if (result.error) nodes.push(element("pre", "exercise-error", result.error));
    if (result.output) {
      nodes.push(element("p", "exercise-output-title", "Your code printed:"));
      nodes.push(element("pre", "exercise-output", result.output));
    }
    feedback.replaceChildren(...nodes);
    feedback.hidden = false;
    this.el.dataset.status = result.correct ? "right" : "wrong";
    this.setState(result.correct ? "Solved." : `Attempt ${this.state.attempts}: see what the checks say below.`);
    if (result.correct && !this.state.solved) {
      this.state.solved = true;
      this.#save();
    }
    this.#markSolved();
  }
}

/** The exercises on the page, by id: what the reader's code is now (answerOnPage), for the notebook. */
const onPage = new Map();

/** The code in exercise `id`'s editor now (saved or not: storage may be full), or undefined. */
export const answerOnPage = (id) => onPage.get(id)?.editor.getCode();

/** Exercise `id`'s starter code as the build wrote it, or undefined (for a notebook's edits, notebook.js). */
export const starterOnPage = (id) => onPage.get(id)?.data.starter;

export async function init({ runtime, lesson, root }) {
  for (const el of root.querySelectorAll("[data-exercise]")) {
    try {
      const exercise = new Exercise(el, runtime, lesson);
      onPage.set(exercise.data.id, exercise);
    } catch (err) {
      console.error(`exercise ${el.dataset.exercise} could not start:`, err);
    }
  }
}
