// The step-through's "now" panel: the numbers of the one step on screen, under its controls, so the reader
// sees what the step computes without looking for it in the matrices below. A score step writes the score
// of the current query with one key as q·k: the query's row of Q, the key's row of K, their products and
// the score in the cell. A softmax step shows the row's scores and weights, an output step the weights and
// the output row. Python computed every array; this only lays out numbers it was given (and adds up the
// products it shows, the dot product Python took, to write it out).

import { fmt, isolate, shortLabel } from "./canvas.js";
import { el } from "../dom.js";

/** At most this many numbers in a row of the panel: a phone's width; the rest is "…". */
const MAX_COLUMNS = 8;
const num = (v) => fmt(v, 2);

/** The key a score step shows first: the one with the row's largest score (the one that matters most). */
export function strongestKey(scores, row) {
  let best = 0;
  for (let j = 0; j < scores.cols; j++) {
    if (scores.data[row * scores.cols + j] > scores.data[row * scores.cols + best]) best = j;
  }
  return best;
}

/** The column indices a row of n numbers shows: all of them, or the first MAX_COLUMNS - 1 and a gap (null). */
export function shownColumns(n) {
  const all = Array.from({ length: n }, (_, i) => i);
  return n <= MAX_COLUMNS ? all : [...all.slice(0, MAX_COLUMNS - 1), null];
}

/** How Python's divisor of Q·Kᵀ reads: "√8" for √d_k, nothing for 1, else the number. */
function divisorText(divisor, dk) {
  if (Math.abs(divisor - Math.sqrt(dk)) < 1e-6 * divisor) return `√${dk}`;
  return divisor === 1 ? "" : num(divisor);
}

/**
 * createStepNow(container) -> {element, show(now), destroy()}
 * now: {kind: "empty" | "start" | "score" | "softmax" | "output", row, tokens, arrays (checked), divisor}
 */
export function createStepNow(container) {
  const root = el("div", "attn-now"); // not read out at each step: the step's caption above it is
  const head = el("p", "attn-now-head");
  const body = el("div", "attn-now-body");
  const foot = el("p", "attn-now-foot");
  root.append(head, body, foot);
  container.appendChild(root);

  // The key of a score step: the reader's choice, else the row's strongest (null).
  const keyPick = el("select", "attn-now-key");
  keyPick.setAttribute("aria-label", "Key");
  let key = null;
  let last = null;
  keyPick.addEventListener("change", () => { key = Number(keyPick.value); if (last) show(last); });

  /** A small table: a header row of labels, then rows of numbers, the columns cut to shownColumns. */
  function table(columns, rows) {
    const t = el("table", "attn-now-table");
    const shown = shownColumns(columns.length);
    const hr = el("tr");
    hr.append(el("th", ""));
    for (const c of shown) hr.append(el("th", "", c === null ? "…" : columns[c]));
    t.append(hr);
    for (const { label, values } of rows) {
      const tr = el("tr");
      const th = el("th", "", label);
      th.scope = "row";
      tr.append(th);
      for (const c of shown) tr.append(el("td", "", c === null ? "…" : num(values(c))));
      t.append(tr);
    }
    const wrap = el("div", "attn-now-scroll");
    wrap.append(t);
    return wrap;
  }

  const row = (a, i) => (c) => a.data[i * a.cols + c];

  function scoreStep({ row: i, tokens, arrays, divisor }) {
    const { Q, K, scores } = arrays;
    const q = isolate(tokens[i]);
    if (!scores) { // only the weights came (or the scores could not be drawn)
      head.textContent = `Scores of query ${q}: none came with these weights, so there is no q·k to show.`;
      return;
    }
    if (!Q || !K) {
      head.textContent = `Scores of query ${q}: its row of the scores, one per key.`;
      body.append(table(tokens.map((t) => shortLabel(t, 6)), [{ label: "score", values: row(scores, i) }]));
      foot.textContent = "Pass Q= and K= to show_attention to see each score as the dot product q·k.";
      return;
    }
    if (keyPick.options.length !== tokens.length) {
      keyPick.textContent = "";
      tokens.forEach((t, j) => keyPick.append(new Option(`${j}: ${t}`, String(j))));
    }
    const j = key !== null && key < tokens.length ? key : strongestKey(scores, i);
    keyPick.value = String(j);
    const k = isolate(tokens[j]);
    head.textContent = `q·k of query ${q} (its row of Q) and key `;
    head.append(keyPick, " (its row of K):");
    const dk = Q.cols;
    const qv = row(Q, i), kv = row(K, j);
    let dot = 0;
    for (let c = 0; c < dk; c++) dot += qv(c) * kv(c);
    body.append(table(Array.from({ length: dk }, (_, c) => String(c)), [
      { label: `q ${q}`, values: qv },
      { label: `k ${k}`, values: kv },
      { label: "q × k", values: (c) => qv(c) * kv(c) },
    ]));
    const score = scores.data[i * scores.cols + j];
    const terms = `the sum of the ${dk > MAX_COLUMNS ? `${dk} ` : ""}products`;
    const by = divisor === null ? null : divisorText(divisor, dk);
    const cell = `the score in the cell (${q}, ${k})`;
    let said = `q·k = ${num(dot)} (${terms})`;
    if (score === -Infinity) said += `; the mask makes ${cell} −∞, whatever q·k is.`;
    else if (by === null) said += `; ${cell} is ${num(score)}: your scores are not q·k divided by one number.`;
    else said += `${by ? ` ÷ ${by} = ${num(dot / divisor)}` : ""}: ${cell}.`;
    foot.textContent = said;
    Object.assign(root.dataset, { query: String(i), key: String(j), qk: String(dot), score: String(score) });
  }

  function softmaxStep({ row: i, tokens, arrays }) {
    const q = isolate(tokens[i]);
    head.textContent = `Query ${q}'s row: each weight is exp(score) divided by the row's sum of exp(score).`;
    const rows = [{ label: "weight", values: row(arrays.weights, i) }];
    if (arrays.scores) rows.unshift({ label: "score", values: row(arrays.scores, i) });
    body.append(table(tokens.map((t) => shortLabel(t, 6)), rows));
    foot.textContent = "The weights are positive and sum to 1; the largest score gets the largest weight.";
  }

  function outputStep({ row: i, tokens, arrays }) {
    const q = isolate(tokens[i]);
    const { weights, out } = arrays;
    head.textContent = `Output row ${q} = its weights times the value rows V, added up.`;
    body.append(table(tokens.map((t) => shortLabel(t, 6)), [{ label: "weight", values: row(weights, i) }]));
    if (out) body.append(table(Array.from({ length: out.cols }, (_, c) => String(c)), [{ label: `out ${q}`, values: row(out, i) }]));
    foot.textContent = out ? `out ${q} = Σ weight × V row: the mix of the value rows its weights say.` : "Pass V= to show_attention to see the output rows.";
  }

  function show(now) {
    last = now;
    head.textContent = "";
    body.textContent = "";
    foot.textContent = "";
    for (const k of ["query", "key", "qk", "score"]) delete root.dataset[k];
    root.dataset.kind = now.kind;
    if (now.kind === "empty") return;
    if (now.kind === "start") {
      const { Q, K } = now.arrays;
      head.textContent = Q && K
        ? `Nothing computed yet. Your code made Q (${Q.rows} × ${Q.cols}) and K (${K.rows} × ${K.cols}); Next computes the first query's scores, one q·k per key.`
        : "Nothing computed yet. Next computes the first query's scores.";
      return;
    }
    if (now.kind === "score") scoreStep(now);
    else if (now.kind === "softmax") softmaxStep(now);
    else outputStep(now);
  }

  return {
    element: root,
    show,
    /** New data: the key follows the strongest score again, and the menu is made again from the new tokens. */
    forgetKey() { key = null; keyPick.textContent = ""; },
    destroy() { root.remove(); },
  };
}
