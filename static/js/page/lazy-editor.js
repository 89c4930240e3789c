// Code editors that cost nothing until the reader needs them. The build renders every editor's code
// as a stand-in (`<pre class="code-standin">`: the code, line for line the size CodeMirror draws it,
// selectable and found by the browser's search); a LazyEditor turns it into CodeMirror when it comes
// near the screen, in the page's idle time after Python is ready, or at once when the reader clicks
// it, tabs into it or something calls focus(). Until then the stand-in is the editor: getCode and
// setCode read and write its text, and Shift+Enter / Ctrl+Enter on it run. Everything that reads or
// writes an editor's code goes through getCode/setCode, which work in both states, so Run, Reset,
// the other tabs' edits and replays never depend on whether (or when) CodeMirror was built. An editor
// built off screen keeps its stand-in's height until CodeMirror has measured it in view (#hold).
//
// Building ~40 editors at load cost the main thread most of its blocking time (CodeMirror's first
// measure reads layout, ~15 ms each); CodeMirror itself (editor.js, the page's largest script) is
// imported only here, when the first editor is wanted, after the Run buttons already work. The page
// may hold back even the editors near the screen until Python has started and is not computing
// (deferNearEditors): on a machine with few cores, building them beside Python's start delayed the
// first output; one the reader clicks or tabs into is built at once all the same.
import { codeText } from "./code-text.js";
import { inIdleTime, whenIdle } from "./idle.js";

/** How far ahead of the reader editors are built: one and a half screens above and below. */
const NEAR = "150% 0px";
/** An idle period must have this much time left for an editor to be built in it. */
const IDLE_SLICE_MS = 15;

let editorModule = null;
let loaded = null; // editor.js, once it has loaded
/** editor.js (and CodeMirror with it), imported once, when the first editor is to be built. */
const loadEditorModule = () => (editorModule ??= import("./editor.js").then((module) => (loaded = module)));

const waiting = new Set(); // LazyEditors whose CodeMirror is not built yet
const urgent = new Set(); // of those, the ones near the screen or asked for: built first
let pumping = false;
let idleBuilding = null; // the promise buildAllWhenIdle returned
/** A moment when the page has nothing else to do, or 100 ms at most. */
const breather = () => new Promise((resolve) => whenIdle(resolve, { timeout: 100 }));

let nearGate = Promise.resolve(); // editors near the screen are built once it resolves (deferNearEditors)
let nearBusy = () => false; // ... and not while it says so
let asked = null; // {promise, resolve}: resolved (and replaced) when the reader asks for an editor

/** Resolves when the reader next asks for an editor (clicks or tabs into one, or focus() is called). */
function readerAsks() {
  if (!asked) {
    let resolve;
    const promise = new Promise((r) => (resolve = r));
    asked = { promise, resolve };
  }
  return asked.promise;
}

/** An editor near the screen may be built now: the gate is open and the page is idle, not busy. */
async function nearTurn() {
  await nearGate;
  do await breather(); while (nearBusy());
}

/**
 * Build the editors near the screen only once `until` has resolved (or rejected), and not while `busy()`
 * says so; an editor the reader asks for is built at once, whatever the gate. The lesson page calls it
 * before it makes its cells: with Python's start and the runs pressed meanwhile (settled.js), so that on a
 * machine with few cores the editors do not compete with the first output. Without a call: at once.
 */
export function deferNearEditors(until, busy = () => false) {
  nearGate = Promise.resolve(until).catch(() => {});
  nearBusy = busy;
}

const observer = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver((items) => {
  for (const item of items) {
    if (!item.isIntersecting) continue;
    observer.unobserve(item.target);
    for (const editor of waiting) if (editor.near === item.target) want(editor);
  }
}, { rootMargin: NEAR });

/**
 * Build `editor` soon, ahead of the idle ones: at once if the reader is on it (clicked, tabbed in)
 * and CodeMirror is there; else one editor per task, the ones the reader is on first, the others
 * (only near the screen) each when the page has a moment and their turn has come (nearTurn: the
 * page's gate, deferNearEditors), so input and Python's messages come first. A reader asking for an
 * editor while the pump waits for that turn wakes it (readerAsks).
 */
function want(editor) {
  if (!waiting.has(editor)) return;
  if (editor.wantsFocus && loaded) {
    editor.mount(loaded);
    return;
  }
  urgent.add(editor);
  if (editor.wantsFocus && asked) {
    asked.resolve(); // a pump waiting for the near editors' turn takes this one first
    asked = null;
  }
  if (pumping) return;
  pumping = true;
  const first = () => [...urgent].find((e) => e.wantsFocus) ?? urgent.values().next().value;
  Promise.race([first().wantsFocus ? null : nearGate, readerAsks()]).then(loadEditorModule).then(async (module) => {
    while (urgent.size) {
      if (!first().wantsFocus) await Promise.race([nearTurn(), readerAsks()]);
      const next = first();
      if (urgent.has(next)) next.mount(module); // else built meanwhile (a click)
    }
  }).catch((err) => console.error("the code editor could not load:", err)).finally(() => { pumping = false; });
}

/** The first waiting editor in page order. */
function firstWaiting() {
  let first = null;
  for (const editor of waiting) {
    if (!first || (first.holder.compareDocumentPosition(editor.holder) & Node.DOCUMENT_POSITION_PRECEDING)) first = editor;
  }
  return first;
}

/**
 * Build every editor not built yet, one per idle period, in page order; resolves when all are.
 * The page calls it once Python is ready: nothing of it is needed before the first output.
 * `busy()`: while it says so (Python is computing), wait: on a machine with few cores the
 * reader's result comes first.
 */
export function buildAllWhenIdle(busy = () => false) {
  idleBuilding ??= loadEditorModule().then((module) => inIdleTime(() => {
    firstWaiting()?.mount(module);
    return waiting.size > 0;
  }, { busy: () => urgent.size > 0 || busy(), sliceMs: IDLE_SLICE_MS })); // the urgent ones are being built
  return idleBuilding;
}

/** Write `code` into a stand-in, as the build does (markup.code_standin). */
function showText(standIn, code) {
  standIn.firstElementChild.textContent = code;
  standIn.style.setProperty("--digits", String(String(code.split("\n").length).length));
}

/** The offset in the stand-in's code of the point (x, y), or null when it is not on the code. */
function offsetAt(code, x, y) {
  const caret = document.caretPositionFromPoint?.(x, y);
  const range = caret ? null : document.caretRangeFromPoint?.(x, y);
  const node = caret ? caret.offsetNode : range?.startContainer;
  if (!node || !code.contains(node)) return null;
  const before = document.createRange();
  before.setStart(code, 0);
  before.setEnd(node, caret ? caret.offset : range.startOffset);
  return before.toString().length;
}

/**
 * Have CodeMirror measure every line of `view` now, on screen or not. Off screen it lays its lines out at its
 * default guesses (a 14 px line, wrapped every 30 characters) and corrects them once in view, so its line
 * numbers, each as tall as its guess, jumped as the cell scrolled in (layout shifts of up to 0.04 on a phone).
 * Measuring the whole editor wherever it is is what CodeMirror itself does to print (`viewState.printing`,
 * CodeMirror 6.43): the same for one measure here. A CodeMirror without it keeps its guesses until in view,
 * behind #hold.
 */
function measureEveryLine(view) {
  const state = view.viewState;
  if (typeof state?.printing !== "boolean") return;
  state.printing = true;
  try {
    view.measure();
  } finally {
    state.printing = false;
  }
}

export class LazyEditor {
  /**
   * @param {HTMLElement} holder  the element holding the build's stand-in; the editor replaces it there
   * @param {{doc: string, label: string, onRun: () => void, onChange: (code: string) => void,
   *          near?: HTMLElement}} options  `near`: the element whose coming near the screen builds the
   *          editor (the cell: the lesson's blocks skip layout off screen, their insides are not observed)
   */
  constructor(holder, { doc, label, onRun, onChange, near = holder }) {
    Object.assign(this, { holder, near, options: { label, onRun, onChange } });
    this.standIn = holder.querySelector("pre.code-standin");
    this.code = this.standIn.firstElementChild;
    this.text = codeText(doc); // as CodeMirror would give it back (code-text.js)
    this.editor = null; // the CodeMirror editor (editor.js), once built
    this.focusAt = null; // where the caret goes when it is built with the focus (an offset; null: the start)
    this.wantsFocus = false; // the reader is on it: build it first, and at once when CodeMirror is there
    this.holding = null; // while CodeMirror has not measured in view: what watches the holder (see #hold)
    if (this.code.textContent !== this.text) showText(this.standIn, this.text); // the reader's saved edits
    this.standIn.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        onRun();
      }
    });
    this.standIn.addEventListener("click", (event) => {
      const selection = getSelection();
      if (selection && !selection.isCollapsed && this.standIn.contains(selection.anchorNode)) return; // selecting to copy
      this.focus(offsetAt(this.code, event.clientX, event.clientY));
    });
    // A keyboard reader tabbing in gets the editor; a click focuses first and is handled above.
    this.standIn.addEventListener("focus", () => {
      if (this.standIn.matches(":focus-visible")) this.focus(null);
    });
    waiting.add(this);
    observer?.observe(near);
    // Clicked or tabbed into while the page was still starting: the reader is on it.
    if (document.activeElement === this.standIn) this.focus(null);
  }

  getCode() {
    return this.editor ? this.editor.getCode() : this.text;
  }

  /** Replace the code; onChange hears of it in both states (CodeMirror calls it on every change). */
  setCode(given) {
    const code = codeText(given);
    if (this.editor) {
      this.editor.setCode(code);
      return;
    }
    this.text = code;
    showText(this.standIn, code);
    this.options.onChange(code);
  }

  /** Focus the editor, building it now if it is not built; `at`: where the caret goes (an offset). */
  focus(at = null) {
    if (this.editor) {
      this.editor.focus();
      return;
    }
    this.focusAt = at ?? this.focusAt;
    this.wantsFocus = true;
    this.standIn.focus({ preventScroll: true }); // holds the focus (and Shift+Enter) until then
    want(this);
  }

  /** Build CodeMirror in place of the stand-in (called by the scheduling above). */
  mount({ createEditor }) {
    if (this.editor) return;
    waiting.delete(this);
    urgent.delete(this);
    observer?.unobserve(this.near);
    const { label, onRun, onChange } = this.options;
    const focused = document.activeElement === this.standIn;
    const height = this.holder.getBoundingClientRect().height; // the stand-in's: CodeMirror's real one
    this.editor = createEditor(null, {
      doc: this.text, label, onRun,
      onChange: (code) => {
        this.#letGo(); // new lines: the stand-in's height no longer says anything
        onChange(code);
      },
    });
    this.standIn.replaceWith(this.editor.view.dom);
    this.#measureWhenNear();
    this.#hold(height);
    if (focused) { // the reader is on it (clicked, tabbed in, or focus() was called): hand over the focus
      if (typeof this.focusAt === "number") {
        this.editor.view.dispatch({ selection: { anchor: Math.min(this.focusAt, this.text.length) } });
      }
      this.editor.focus();
    }
    this.standIn = null;
  }

  /**
   * measureEveryLine once the editor comes within NEAR of the screen (at once, in the observer's first
   * callback, if it is there already): an editor built far off in idle time pays for it as the reader
   * approaches, not at load. Measuring all of Lesson 4's editors as they were built doubled the main thread's
   * blocking by the first output (250 against 120 ms, medians of 6 paired runs of bench/mainthread.py, idle).
   */
  #measureWhenNear() {
    const { view } = this.editor;
    if (!observer) { measureEveryLine(view); return; }
    const near = new IntersectionObserver((items) => {
      if (!items.some((item) => item.isIntersecting)) return;
      near.disconnect();
      measureEveryLine(view);
    }, { rootMargin: NEAR });
    near.observe(this.holder);
  }

  /**
   * Keep the holder at `height` until CodeMirror has measured its lines in view. CodeMirror measures only
   * when it is on screen: built off screen (near it, or in idle time) it lays its lines out at its default
   * guesses (a 14 px line, wrapped every 30 characters) and corrects them as it scrolls into view, so the
   * cell would jump under the reader's pointer (36-150 px on the lesson's cells, the Run button with it).
   * The stand-in it replaced had CodeMirror's real height; the holder keeps it, clipping the guesses.
   */
  #hold(height) {
    if (!observer) return; // no IntersectionObserver: nothing would say when to let go
    const { holder } = this;
    holder.style.height = `${height}px`;
    holder.style.overflow = "clip";
    let onScreen = false;
    // Once on screen, ask CodeMirror, after its own measuring in an animation frame, whether it is in view.
    const check = () => this.editor.view.requestMeasure({
      read: (view) => view.inView,
      write: (inView) => {
        if (inView) this.#letGo();
        else if (onScreen && this.holding) requestAnimationFrame(check);
      },
    });
    this.holding = new IntersectionObserver(([entry]) => {
      onScreen = entry.isIntersecting;
      if (onScreen) check();
    });
    this.holding.observe(holder);
  }

  /** The holder takes CodeMirror's own height from now on. */
  #letGo() {
    if (!this.holding) return;
    this.holding.disconnect();
    this.holding = null;
    this.holder.style.height = "";
    this.holder.style.overflow = "";
  }
}
