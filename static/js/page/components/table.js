// Text alternatives for the pictures: an accessible <table> per matrix and a live summary of the
// selected row. These build DOM only inside the container they are given.

import { checkArray } from "./validate.js";
import { fmt, isolate } from "./canvas.js";

const MAX_FULL_ROWS = 64; // above this a full table would be a wall of numbers: show the selected row

/** Quote a token for a sentence, telling repeated tokens apart by position. */
export function tokenName(tokens, i) {
  const t = String(tokens[i] ?? i);
  const shown = t.trim() === "" ? "␣" : t.trim();
  const repeated = tokens.filter((x) => String(x) === t).length > 1;
  return repeated ? `'${isolate(shown)}' (position ${i})` : `'${isolate(shown)}'`;
}

/**
 * One sentence about where a query row's attention goes, from that row of the weights:
 * "'cat' sends 62% of its attention to 'sat'", plus the runners-up when they matter.
 */
export function describeRow(tokens, rowWeights, i) {
  const order = Array.from(rowWeights, (w, j) => [w, j]).sort((a, b) => b[0] - a[0]);
  const pct = (w) => `${Math.round(w * 100)}%`;
  const [w0, j0] = order[0];
  let s = `${tokenName(tokens, i)} sends ${pct(w0)} of its attention to ${j0 === i ? "itself" : tokenName(tokens, j0)}`;
  const rest = order.slice(1, 3).filter(([w]) => w >= 0.1);
  if (rest.length) s += `, then ${rest.map(([w, j]) => `${pct(w)} to ${j === i ? "itself" : tokenName(tokens, j)}`).join(" and ")}`;
  return `${s}.`;
}

/**
 * createTable(container, {caption, rowHeader, colHeader, digits}) -> {update, select, destroy, element}
 * update({matrix, rowLabels, colLabels}) with matrix = {shape, data}. The caption names the
 * matrix; each cell keeps the exact value in data-value and shows it rounded.
 */
export function createTable(container, options = {}) {
  const opts = { caption: "Matrix", rowHeader: "row", colHeader: "column", digits: 3, ...options };
  const wrap = document.createElement("div");
  wrap.className = "attn-table-wrap";
  wrap.tabIndex = 0; // a scrollable region must be reachable by keyboard
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", opts.caption);
  container.appendChild(wrap);
  let state = null;
  let selected = null;

  function render() {
    wrap.textContent = "";
    const table = document.createElement("table");
    table.className = "attn-table";
    const cap = document.createElement("caption");
    table.appendChild(cap);
    wrap.appendChild(table);
    if (!state || !state.ok) {
      cap.textContent = `${opts.caption}: ${state ? state.message : "no data yet."}`;
      return;
    }
    const { rows, cols, data, rowLabels, colLabels } = state;
    const partial = rows > MAX_FULL_ROWS;
    const shownRows = partial ? (selected === null ? [] : [selected]) : Array.from({ length: rows }, (_, i) => i);
    cap.textContent = `${opts.caption} (${rows}×${cols}; rows: ${opts.rowHeader}, columns: ${opts.colHeader})` +
      (partial ? `. Only the selected row is listed; select a row to see its ${cols} values.` : "");
    if (partial && selected === null) return; // nothing to list yet: skip the header row too
    const thead = document.createElement("thead");
    const hr = document.createElement("tr");
    const corner = document.createElement("th");
    corner.scope = "col";
    corner.textContent = `${opts.rowHeader} \\ ${opts.colHeader}`;
    hr.appendChild(corner);
    for (let c = 0; c < cols; c++) {
      const th = document.createElement("th");
      th.scope = "col";
      th.dir = "auto"; // a reader's label: its direction stays inside the cell
      th.textContent = colLabels[c];
      hr.appendChild(th);
    }
    thead.appendChild(hr);
    table.appendChild(thead);
    const tbody = document.createElement("tbody");
    for (const r of shownRows) {
      const tr = document.createElement("tr");
      tr.dataset.row = String(r);
      if (r === selected) { tr.setAttribute("aria-current", "true"); tr.className = "attn-selected"; }
      const th = document.createElement("th");
      th.scope = "row";
      th.dir = "auto";
      th.textContent = rowLabels[r];
      tr.appendChild(th);
      for (let c = 0; c < cols; c++) {
        const td = document.createElement("td");
        const v = data[r * cols + c];
        td.dataset.value = String(v);
        td.textContent = fmt(v, opts.digits);
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
    table.appendChild(tbody);
  }

  return {
    element: wrap,
    update(spec) {
      try {
        const checked = checkArray(spec?.matrix, { name: opts.caption.toLowerCase(), allowNegInf: true });
        if (!checked.ok) { state = checked; render(); return; }
        const labels = (given, n) => (Array.isArray(given) && given.length === n ? given.map(String) : Array.from({ length: n }, (_, i) => String(i)));
        state = { ...checked, rowLabels: labels(spec.rowLabels, checked.rows), colLabels: labels(spec.colLabels, checked.cols) };
        if (selected !== null && selected >= checked.rows) selected = null;
      } catch (err) {
        state = { ok: false, message: String(err?.message ?? err) };
      }
      render();
    },
    select(row) {
      selected = Number.isInteger(row) ? row : null;
      if (!state?.ok) return;
      if (state.rows > MAX_FULL_ROWS) { render(); return; }
      // Full table: move the highlight without rebuilding.
      wrap.querySelectorAll("tr.attn-selected").forEach((tr) => { tr.classList.remove("attn-selected"); tr.removeAttribute("aria-current"); });
      const tr = wrap.querySelector(`tr[data-row="${selected}"]`);
      if (tr) { tr.classList.add("attn-selected"); tr.setAttribute("aria-current", "true"); }
    },
    destroy() { wrap.remove(); },
  };
}

/** A polite live region: createSummary(container) -> {set(text), element, destroy()}. */
export function createSummary(container, options = {}) {
  const p = document.createElement("p");
  p.className = "attn-summary";
  p.setAttribute("role", "status");
  p.setAttribute("aria-live", "polite");
  container.appendChild(p);
  return {
    element: p,
    set(text) { if (p.textContent !== text) p.textContent = text; },
    destroy() { p.remove(); },
  };
}
