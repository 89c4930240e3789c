// The linked attention view: scores, weights, the query row and the output side by side, with one
// shared selection (choose a row in any of them and all follow), a live text summary, tables of
// the numbers and the step-through controls. Everything is built inside the given container.

import { createScores } from "./scores.js";
import { createHeatmap } from "./heatmap.js";
import { createQueryRow } from "./queryrow.js";
import { createOutput } from "./output.js";
import { createTable, createSummary } from "./table.js";
import { createStepper } from "./stepper.js";
import { isolate } from "./canvas.js";
import { checkPayload } from "./validate.js";
import { mismatchNote, statDetails, statFacts } from "./statwords.js";
import { viewFrame } from "./viewframe.js";
import { el } from "../dom.js";

/** A tiny store for the selected row: get(), set(row), subscribe(fn) -> unsubscribe. */
export function createSelectionStore(initial = null) {
  let value = initial;
  const subs = new Set();
  return {
    get: () => value,
    set(row) {
      if (row === value) return;
      value = row;
      this.broadcast();
    },
    /** Tell every subscriber the current value again (after new data arrived). */
    broadcast() {
      for (const fn of subs) {
        try { fn(value); } catch (err) { console.error(err); } // one bad subscriber must not stop the rest
      }
    },
    subscribe(fn) { subs.add(fn); return () => subs.delete(fn); },
  };
}

const CAPTIONS = {
  scores: "Each query row's dot product with every key (Q·Kᵀ, scaled as in the code), before the softmax. Blue is negative, orange positive, white 0, on a range symmetric about 0.",
  weights: "The softmax of each row of scores, so every row sums to 1. Dark is near 0, yellow near 1.",
  query: "One bar per key with its weight, and the value rows its output row is mixed from.",
  out: "out = weights @ V: each output row is its query's weighted mix of the value rows V. The bars beside V are the selected row's weights.",
};

let uid = 0;

/**
 * createAttentionView(container, {stepper = true, tables = true, initialRow, interval})
 *   -> {update(payload), select(row), setReveal(r), size(), tokens(), store, components, stepper, destroy()}
 * payload: {view: "attention", title, tokens, arrays: {weights, scores?, Q?, K?, V?, out?, x?}, stats?}
 */
export function createAttentionView(container, options = {}) {
  const { root, title, message } = viewFrame("attn-view", "Attention view");
  const notes = el("p", "attn-notes");
  notes.hidden = true;
  const controls = el("div", "attn-controls");
  const summaryHost = el("div", "attn-summary-host");
  const grid = el("div", "attn-grid");
  root.append(title, message, notes, controls, summaryHost, grid);
  container.appendChild(root);

  const store = createSelectionStore(null);
  const summary = createSummary(summaryHost);
  let checked = null;
  let revealState = null;

  function figure(key, label) {
    const fig = el("figure", `attn-figure attn-figure-${key}`);
    const canvas = el("canvas", "attn-canvas");
    const cap = el("figcaption");
    const capText = el("span", "attn-caption-text", CAPTIONS[key]);
    const capNote = el("span", "attn-caption-note");
    cap.append(el("strong", "", `${label}. `), capText, " ", capNote);
    fig.append(canvas, cap);
    grid.appendChild(fig);
    cap.id = `attn-cap-${++uid}`;
    canvas.setAttribute("aria-describedby", cap.id);
    return { fig, canvas, capNote };
  }
  const figs = {
    scores: figure("scores", "Scores"),
    weights: figure("weights", "Attention weights"),
    query: figure("query", "Query row"),
    out: figure("out", "Output"),
  };
  const onSelect = (row) => store.set(row);
  const note = (key) => (text) => { figs[key].capNote.textContent = text; };
  const components = {
    scores: createScores(figs.scores.canvas, { onSelect, onDescribe: note("scores") }),
    weights: createHeatmap(figs.weights.canvas, { onSelect, onDescribe: note("weights") }),
    query: createQueryRow(figs.query.canvas, { onSelect, onSummary: (t) => summary.set(t) }),
    out: createOutput(figs.out.canvas, { onSelect, onDescribe: note("out") }),
  };

  // Tables: the same numbers as text, one per picture, behind a disclosure.
  let tables = null;
  if (options.tables !== false) {
    const details = el("details", "attn-tables");
    details.append(el("summary", "", "Show all the numbers, and the tables"));
    root.appendChild(details);
    const host = (name) => { const d = el("div", `attn-table-host attn-table-${name}`); details.appendChild(d); return d; };
    tables = {
      scores: createTable(host("scores"), { caption: "Scores (Q·Kᵀ)", rowHeader: "query", colHeader: "key" }),
      weights: createTable(host("weights"), { caption: "Attention weights", rowHeader: "query", colHeader: "key" }),
      query: createTable(host("query"), { caption: "Weights of the selected query row", rowHeader: "key", colHeader: "weight" }),
      V: createTable(host("V"), { caption: "Value rows V", rowHeader: "token", colHeader: "dim" }),
      out: createTable(host("out"), { caption: "Output (weights @ V)", rowHeader: "token", colHeader: "dim" }),
    };
  }

  // Python's numbers (show_attention's stats): a few in words under the pictures, the rest with the tables
  const facts = el("dl", "attn-stats attn-facts");
  facts.hidden = true;
  grid.after(facts);
  const numbers = el("dl", "attn-stats attn-numbers");
  numbers.hidden = true;
  if (tables) tables.scores.element.parentElement.before(numbers);
  else root.appendChild(Object.assign(el("details", "attn-tables"), { hidden: true })).append(el("summary", "", "Show the numbers"), numbers);

  let stepper = null;
  const view = {
    element: root,
    store,
    components,
    tables,
    size: () => (checked?.ok ? checked.T : 0),
    tokens: () => (checked?.ok ? checked.tokens : []),
    /** The checked arrays ({weights, scores?, Q?, K?, V?, out?}) and what Python says Q·Kᵀ was divided by. */
    arrays: () => (checked?.ok ? checked.arrays : {}),
    qkDivisor: () => (checked?.ok ? checked.qkDivisor : null),
    select: (row) => store.set(row),
    /** Reveal only the first rows of each matrix: {scores, weights, out} counts, or null for all. */
    setReveal(r) {
      revealState = r ? { ...r } : null;
      components.scores.setReveal(r ? r.scores : null);
      components.weights.setReveal(r ? r.weights : null);
      components.query.setReveal(r ? r.weights : null);
      components.out.setReveal(r ? r.out : null);
      root.dataset.reveal = r ? `${r.scores},${r.weights},${r.out}` : "all";
    },
    reveal: () => revealState,
    update,
    destroy,
  };
  if (options.stepper !== false) stepper = createStepper(view, { container: controls, interval: options.interval });
  view.stepper = stepper;

  store.subscribe((row) => {
    for (const c of Object.values(components)) c.select(row);
    if (tables) {
      tables.scores.select(row);
      tables.weights.select(row);
      tables.V.select(row);
      tables.out.select(row);
      updateQueryTable(row);
    }
    root.dataset.selected = row === null ? "" : String(row);
  });

  function updateQueryTable(row) {
    if (!tables) return;
    const w = checked?.arrays?.weights;
    if (!w || row === null) { tables.query.update(null); return; }
    tables.query.update({
      matrix: { shape: [w.cols, 1], dtype: "float32", data: w.data.subarray(row * w.cols, (row + 1) * w.cols) },
      rowLabels: checked.tokens, colLabels: [`weight from ${isolate(checked.tokens[row])}`],
    });
  }

  function showStats(s) {
    const fill = (list, rows) => {
      list.textContent = "";
      for (const { label, text } of rows) list.append(el("dt", "", label), el("dd", "", text));
      list.hidden = rows.length === 0;
    };
    fill(facts, statFacts(s));
    fill(numbers, statDetails(s));
    if (!tables) numbers.parentElement.hidden = numbers.hidden; // its own disclosure, when the view has no tables
  }

  function update(payload) {
    try {
      checked = checkPayload(payload);
      title.hidden = !checked.title;
      title.textContent = checked.title;
      if (!checked.ok) {
        message.hidden = false;
        message.textContent = checked.message;
        grid.hidden = true;
        summary.set(checked.message);
        root.dataset.state = "error";
        stepper?.reset();
        return;
      }
      message.hidden = true;
      grid.hidden = false;
      root.dataset.state = "ok";
      const problems = Object.values(checked.problems);
      const mismatch = mismatchNote(checked.stats);
      const said = [...checked.notes, ...problems, ...(mismatch ? [mismatch] : [])];
      notes.hidden = said.length === 0;
      notes.textContent = said.join(" ");
      const tokens = checked.tokens;
      const raw = payload.arrays;
      // Each array was checked once above: the components take the checked ones as they are.
      // An invalid one goes as it came, so its picture shows its own message.
      const arr = (key) => checked.arrays[key] ?? raw[key];
      // Hide a picture whose array was not sent at all.
      figs.scores.fig.hidden = !raw.scores;
      figs.out.fig.hidden = !raw.out;
      components.scores.update({ arrays: { scores: arr("scores") }, tokens });
      components.weights.update({ arrays: { weights: arr("weights") }, tokens, hidden: checked.hidden });
      components.query.update({ arrays: { weights: arr("weights") }, tokens, hidden: checked.hidden });
      components.out.update({ arrays: { out: arr("out"), V: checked.arrays.V, weights: arr("weights") }, tokens });
      if (tables) {
        const put = (t, key, colLabels) => {
          t.element.parentElement.hidden = !raw[key];
          if (raw[key]) t.update({ matrix: arr(key), rowLabels: tokens, colLabels });
        };
        put(tables.scores, "scores", tokens);
        put(tables.weights, "weights", tokens);
        put(tables.V, "V");
        put(tables.out, "out");
      }
      showStats(checked.stats);
      stepper?.reset();
      const prev = store.get();
      const T = checked.T;
      const initial = Number.isInteger(options.initialRow) ? Math.min(T - 1, options.initialRow) : T - 1;
      const row = prev !== null && prev < T ? prev : initial;
      if (store.get() === row) store.broadcast(); // same row, new data: tell everyone again
      else store.set(row);
    } catch (err) {
      // Last line of defence: say what went wrong instead of throwing into the page.
      message.hidden = false;
      message.textContent = `Cannot draw attention: ${err?.message ?? err}`;
      root.dataset.state = "error";
    }
  }

  function destroy() {
    stepper?.destroy();
    for (const c of Object.values(components)) c.destroy();
    if (tables) for (const t of Object.values(tables)) t.destroy();
    root.remove();
  }

  return view;
}
