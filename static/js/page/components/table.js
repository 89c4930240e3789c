// Text alternatives for the pictures: an accessible <table> per matrix (or per list of records, such
// as each head's strongest keys) and a live summary of the selected row. These build DOM only inside
// the container they are given, and a table inside a closed <details> (a widget's "Show the numbers as
// tables") only once it is opened: Lesson 4's widgets held about 4,200 table elements at load that no
// reader had asked for (whenShown).

import { checkArray } from "./validate.js";
import { fmt, isolate } from "./canvas.js";
import { withScrollCue } from "./scrollcue.js";

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
  const { wrap, cue } = tableRegion(container, opts.caption);
  let state = null;
  let selected = null;
  const render = whenShown(wrap, build);

  function build() {
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
      markRow(wrap, selected); // full table: move the highlight without rebuilding
    },
    destroy() { cue.release(); wrap.remove(); },
  };
}

/** The scrollable region a table sits in, named by its caption (a scrollable region must be reachable by keyboard). */
function tableRegion(container, caption) {
  const wrap = document.createElement("div");
  wrap.className = "attn-table-wrap";
  wrap.tabIndex = 0;
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", caption);
  container.appendChild(wrap);
  const cue = withScrollCue(wrap); // a phone scrolls a wide table: its edges say so
  return { wrap, cue };
}

/**
 * `build` wrapped to run now if `wrap` can be seen, else once the closed <details> around it opens
 * (only the latest state is built: calls while closed just mark it stale). Nothing is lost by waiting:
 * the region keeps its name, and the table is built from the latest state as the <details> opens.
 */
function whenShown(wrap, build) {
  const render = () => {
    const closed = wrap.closest("details:not([open])");
    if (!closed) { delete wrap.dataset.deferred; build(); return; }
    if (wrap.dataset.deferred) return; // a listener is waiting already
    wrap.dataset.deferred = "true"; // said on the page: a test (or a script) can wait for the build
    closed.addEventListener("toggle", function opened() {
      if (!closed.open) return;
      closed.removeEventListener("toggle", opened);
      delete wrap.dataset.deferred;
      render(); // built now, or when a closed <details> further out opens
    });
  };
  return render;
}

/** Highlight the row whose data-row is `row` (null: none) as the selected one. */
function markRow(wrap, row) {
  wrap.querySelectorAll("tr.attn-selected").forEach((tr) => { tr.classList.remove("attn-selected"); tr.removeAttribute("aria-current"); });
  const tr = row === null ? null : wrap.querySelector(`tr[data-row="${row}"]`);
  if (tr) { tr.classList.add("attn-selected"); tr.setAttribute("aria-current", "true"); }
}

/**
 * createListTable(container, {caption, columns, digits}) -> {update(rows, caption), select(i), destroy, element}
 * A table of records rather than a matrix: one row per item, one column per name in `columns` (the first
 * is the row's header). A cell is text, or a number shown rounded with its exact value in data-value (to `digits`
 * decimals, or digits[c] for column c); null leaves it empty. update(rows, caption) replaces the rows (null: no data yet) and the caption.
 */
export function createListTable(container, options = {}) {
  const opts = { caption: "List", columns: [], digits: 3, ...options };
  const { wrap, cue } = tableRegion(container, opts.caption);
  let rows = null;
  let caption = opts.caption;
  let selected = null;
  const render = whenShown(wrap, build);

  function build() {
    wrap.textContent = "";
    wrap.setAttribute("aria-label", caption);
    const table = document.createElement("table");
    table.className = "attn-table";
    const cap = document.createElement("caption");
    cap.textContent = rows ? caption : `${caption}: no data yet.`;
    table.appendChild(cap);
    wrap.appendChild(table);
    if (!rows) return;
    const head = document.createElement("tr");
    for (const name of opts.columns) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      head.appendChild(th);
    }
    const thead = document.createElement("thead");
    thead.appendChild(head);
    const tbody = document.createElement("tbody");
    rows.forEach((cells, r) => {
      const tr = document.createElement("tr");
      tr.dataset.row = String(r);
      cells.forEach((v, c) => {
        const cell = document.createElement(c === 0 ? "th" : "td");
        if (c === 0) cell.scope = "row";
        if (typeof v === "number") {
          cell.dataset.value = String(v);
          cell.textContent = fmt(v, Array.isArray(opts.digits) ? opts.digits[c] : opts.digits);
        } else {
          cell.dir = "auto"; // a reader's label: its direction stays inside the cell
          cell.textContent = v ?? "";
        }
        tr.appendChild(cell);
      });
      tbody.appendChild(tr);
    });
    table.append(thead, tbody);
    markRow(wrap, selected);
  }

  return {
    element: wrap,
    update(list, newCaption) {
      rows = Array.isArray(list) ? list.map((cells) => (Array.isArray(cells) ? cells : [cells])) : null;
      if (typeof newCaption === "string" && newCaption) caption = newCaption;
      render();
    },
    select(row) {
      selected = Number.isInteger(row) ? row : null;
      markRow(wrap, selected);
    },
    destroy() { cue.release(); wrap.remove(); },
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
