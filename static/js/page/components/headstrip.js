// One query, every head: for one query token and one layer, each head's row of attention weights as a
// line of shaded cells (the sequential map the grid and the view use), its strongest key framed and
// named, so heads that disagree about one word show at once. One canvas, drawn from the (L, H, T, T)
// weights the head grid already holds; Up/Down move between heads, Enter or a click opens one
// (onSelect). It computes nothing but which keys are largest.
//
// Its height depends only on the number of heads (stripHeight), so a placeholder of that height keeps
// the page still when the weights arrive and when the query or the layer changes.

import { SEQUENTIAL_LUT, lutIndex } from "./colormap.js";
import { canvasLifecycle, drawnApi, canvasWidth, drawStatus, drawTooltip, fitLabel, fmt, prepareCanvas, readTheme, shortLabel } from "./canvas.js";
import { checkGrid } from "./headgrid.js";
import { stepFocus } from "./listfocus.js";
import { tokenName } from "./table.js";
import { checkTokens } from "./validate.js";

const TITLE_H = 20; // the line naming the query and the layer
const LABELS_H = 50; // the keys' names, turned upright, and the query's marker
const ROW = 22; // one head: a comfortable target for a finger and for the eye
const PAD = 6;
const MIN_LEFT = 54; // the heads' names' column, at least; wider when "head 11" in bold needs it
const KEY_LABEL_PX = 12; // a key's name needs this much room across
const KEY_LABEL_ROOM = LABELS_H - 14; // an upright key name's length, clear of the title and the query's marker

/** A key's name as the strip may draw it: the longest start of shortLabel(s) (a "…" ending what is cut) that
 *  fits `room` pixels in ctx's font (canvas.js fitLabel), else its first character. */
export function keyLabel(ctx, s, room) {
  return fitLabel(ctx, [8, 7, 6, 5, 4, 3, 2].map((n) => shortLabel(s, n)), room) || shortLabel(s, 1);
}

/** The strip's height in CSS pixels for H heads: the same before the data, for every query and layer. */
export function stripHeight(H) {
  return TITLE_H + LABELS_H + H * ROW + PAD;
}

/** Why (layer, query) cannot be shown from a checked grid, or "" (query null: nothing selected yet). */
export function checkSelection(grid, layer, query) {
  if (!Number.isInteger(layer) || layer < 0 || layer >= grid.L) {
    return `Cannot draw the heads of one query: layer ${layer} is not one of the ${grid.L} layers (0 to ${grid.L - 1}).`;
  }
  if (query === null || query === undefined) return "";
  if (!Number.isInteger(query) || query < 0 || query >= grid.T) {
    return `Cannot draw the heads of one query: query ${query} is not one of the ${grid.T} positions (0 to ${grid.T - 1}).`;
  }
  return "";
}

/**
 * One query's row in every head of one layer, out of a checked (L, H, T, T) grid ({H, T, data}, flat,
 * row-major): a Float32Array of H * T, head h's row at h * T. A copy: the H rows are T * T apart.
 */
export function queryRows({ H, T, data }, layer, query) {
  const rows = new Float32Array(H * T);
  for (let h = 0; h < H; h++) {
    const start = ((layer * H + h) * T + query) * T;
    rows.set(data.subarray(start, start + T), h * T);
  }
  return rows;
}

/**
 * The n strongest keys of one row, strongest first, as [{key, weight}]; equal weights (the stored
 * weights are 1/255 steps) go to the earlier key. A causal row has only the keys up to its query: the
 * zeros after it are the mask, never a key.
 */
export function topKeys(row, query, causal, n = 2) {
  const last = causal ? Math.min(query, row.length - 1) : row.length - 1;
  const keys = Array.from({ length: last + 1 }, (_, j) => j);
  keys.sort((a, b) => row[b] - row[a] || a - b);
  return keys.slice(0, n).map((key) => ({ key, weight: row[key] }));
}

const viridis = (w) => {
  const i = lutIndex(w);
  return `rgb(${SEQUENTIAL_LUT[i]}, ${SEQUENTIAL_LUT[i + 1]}, ${SEQUENTIAL_LUT[i + 2]})`;
};

/**
 * createHeadStrip(canvas, {onSelect({layer, head}), onRows(rows | null)})
 *   -> {update({weights, tokens, causal, layer, query, heads}), select(head | null), focused(), layout(), flush(), destroy()}
 * weights: the (L, H, T, T) grid (checked once per new array: the same object again is not checked again);
 * layer and query: what to show (query null: nothing selected yet); heads: H before the weights come
 * (weights null), so the placeholder has the strip's height. causal: keys after the query are drawn as
 * masked, not as weight 0. onRows gets, whenever what is shown changes, {layer, query, tokens, tops}
 * with tops[h] = topKeys of head h (for a table), or null when nothing is shown.
 */
export function createHeadStrip(canvas, options = {}) {
  let grid = null; // checkGrid's result, when it passed
  let given = null; // the weights object last checked, and what checkGrid said of it
  let check = null;
  let reserve = 0; // H before the weights came
  let error = "";
  let tokens = [];
  let causal = false;
  let layer = 0;
  let query = null;
  let rows = null; // queryRows of (layer, query)
  let tops = [];
  let selected = null; // the open head
  let focus = 0;
  let focused = false;
  let hover = null; // {head, key | null}
  let geometry = null;

  const heads = () => grid?.H ?? reserve;
  const showing = () => Boolean(grid && rows);

  function label() {
    if (!showing()) { canvas.setAttribute("aria-label", error || placeholder()); return; }
    const best = tops[focus][0];
    canvas.setAttribute("aria-label", `Where each of the ${grid.H} heads of layer ${layer} looks from ` +
      `${tokenName(tokens, query)}. Focused: head ${focus}, strongest key ` +
      `${tokenName(tokens, best.key)} (${fmt(best.weight, 2)}). Up and down arrows move between heads; Enter opens the head.`);
  }
  const placeholder = () => (grid ? "Select a query row to see it in every head of its layer."
    : "Every head's row for one query appears when Python has loaded the heads.");

  function render() {
    const H = heads();
    const height = H ? stripHeight(H) : undefined;
    if (drawStatus(canvas, error, showing() ? "" : placeholder(), height)) { geometry = null; return; }
    const { T } = grid;
    const { ctx, width } = prepareCanvas(canvas, stripHeight(H));
    const theme = readTheme();
    ctx.font = theme.font(11, "700"); // the open head's name, the widest of the column
    const left = Math.max(MIN_LEFT, Math.ceil(ctx.measureText(`head ${H - 1}`).width) + 10);
    const nameW = Math.round(Math.min(128, Math.max(78, width * 0.28)));
    const cell = Math.max(0.01, (width - left - nameW - 6) / T); // a long live sentence: hairlines, still all there
    const top = TITLE_H + LABELS_H;
    const gap = cell > 5 ? 1 : 0;
    const nameX = left + T * cell + 8;

    ctx.fillStyle = theme.fg;
    ctx.font = theme.font(12, "600");
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(`Query '${shortLabel(tokens[query], 12)}' (position ${query}) · layer ${layer}`, 4, 3, width - 8);

    // The keys' names, upright; as many as fit, and always the query's (in the accent colour, marked).
    ctx.font = theme.font(11);
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    const step = Math.max(1, Math.ceil(KEY_LABEL_PX / cell));
    const drawKey = (j, colour) => {
      ctx.save();
      ctx.fillStyle = colour;
      ctx.translate(left + (j + 0.5) * cell, top - 10);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(keyLabel(ctx, tokens[j], KEY_LABEL_ROOM), 0, 0);
      ctx.restore();
    };
    for (let j = 0; j < T; j += step) if (Math.abs(j - query) >= step) drawKey(j, theme.muted);
    drawKey(query, theme.accent);
    const qx = left + (query + 0.5) * cell;
    ctx.fillStyle = theme.accent;
    ctx.beginPath();
    ctx.moveTo(qx - 4, top - 7); ctx.lineTo(qx + 4, top - 7); ctx.lineTo(qx, top - 2);
    ctx.fill();

    const lines = [];
    for (let h = 0; h < H; h++) {
      const y = top + h * ROW;
      const cy = y + 3;
      const ch = ROW - 6;
      if (h === selected) {
        ctx.fillStyle = theme.empty;
        ctx.fillRect(0, y, width, ROW);
      }
      ctx.fillStyle = h === selected ? theme.fg : theme.muted;
      ctx.font = theme.font(11, h === selected ? "700" : "");
      ctx.textAlign = "right";
      ctx.fillText(`head ${h}`, left - 6, y + ROW / 2);
      for (let j = 0; j < T; j++) {
        const masked = causal && j > query;
        ctx.fillStyle = masked ? theme.masked : viridis(rows[h * T + j]);
        ctx.fillRect(left + j * cell + gap, cy, cell - gap, ch);
      }
      const [best] = tops[h];
      ctx.save();
      ctx.strokeStyle = theme.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(left + best.key * cell, cy - 1, Math.max(cell, 2), ch + 2);
      ctx.restore();
      ctx.fillStyle = theme.fg;
      ctx.font = theme.font(11);
      ctx.textAlign = "left";
      ctx.fillText(`${shortLabel(tokens[best.key], 9)} ${Math.round(best.weight * 100)}%`, nameX, y + ROW / 2, width - nameX - 2);
      lines.push({ head: h, y, top: best.key, weight: best.weight });
    }
    const frame = (h, colour, lw, dash = []) => {
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = lw;
      ctx.setLineDash(dash);
      ctx.strokeRect(1 + lw / 2, top + h * ROW + lw / 2, width - 2 - lw, ROW - lw);
      ctx.restore();
    };
    if (selected !== null && selected < H) frame(selected, theme.select, 2);
    if (focused) frame(focus, theme.fg, 1.5, [3, 2]);
    if (hover) {
      const { head: h, key: j } = hover;
      const text = j === null ? `head ${h}: click to open it` : causal && j > query
        ? `head ${h}: ${tokenName(tokens, j)} comes after the query;\na causal model never looks ahead`
        : `head ${h}: ${tokenName(tokens, query)} → ${tokenName(tokens, j)}\nweight ${fmt(rows[h * T + j])}`;
      drawTooltip(ctx, theme, text, left + (j ?? 0) * cell, top + (h + 1) * ROW, width, stripHeight(H));
    }
    geometry = { top, row: ROW, left, cell, width, height: stripHeight(H), layer, query, lines };
  }

  function at(ev) {
    if (!geometry) return null;
    const box = canvas.getBoundingClientRect();
    const x = ev.clientX - box.left;
    const y = ev.clientY - box.top;
    const h = Math.floor((y - geometry.top) / geometry.row);
    if (y < geometry.top || h >= geometry.lines.length) return null;
    const j = Math.floor((x - geometry.left) / geometry.cell);
    return { head: h, key: x >= geometry.left && j < grid.T ? j : null };
  }

  function choose(h) {
    selected = h;
    focus = h;
    label();
    life.request();
    options.onSelect?.({ layer, head: h });
  }

  const life = canvasLifecycle(canvas, {
    roleDescription: "every head for one query",
    render,
    height: () => (heads() ? stripHeight(heads()) : null),
    handlers: {
      click: (ev) => { const hit = at(ev); if (hit) choose(hit.head); },
      pointermove: (ev) => {
        const hit = at(ev);
        if (hit?.head !== hover?.head || hit?.key !== hover?.key) { hover = hit; life.request(); }
      },
      pointerleave: () => { if (hover) { hover = null; life.request(); } },
      keydown: (ev) => {
        if (!showing()) return;
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choose(focus); return; }
        const next = stepFocus(focus, ev.key, grid.H); // Up, Down, Home, End
        if (next === null) return;
        ev.preventDefault();
        focus = next;
        label();
        life.request();
      },
      focus: () => { focused = true; life.request(); },
      blur: () => { focused = false; life.request(); },
    },
  });

  function show() {
    rows = null;
    tops = [];
    if (grid && !error && query !== null) {
      rows = queryRows(grid, layer, query);
      tops = Array.from({ length: grid.H }, (_, h) => topKeys(rows.subarray(h * grid.T, (h + 1) * grid.T), query, causal));
    }
    canvas.dataset.heads = showing() ? String(grid.H) : "";
    canvas.dataset.layer = showing() ? String(layer) : "";
    canvas.dataset.query = showing() ? String(query) : "";
    label();
    options.onRows?.(showing() ? { layer, query, tokens: [...tokens], tops: tops.map((t) => t.map((k) => ({ ...k }))) } : null);
    if (showing()) life.request();
    else life.now(); // a message must not wait for a frame
  }

  life.now();

  return {
    update({ weights = null, tokens: words, causal: isCausal = false, layer: l = 0, query: q = null, heads: H = 0 } = {}) {
      if (life.destroyed) return;
      hover = null;
      if (!weights) reserve = Number.isInteger(H) && H > 0 ? H : reserve;
      else if (weights !== given) check = checkGrid(weights);
      given = weights;
      if (!weights) check = null;
      grid = check?.ok ? check : null;
      error = check && !check.ok ? check.message : "";
      if (grid) {
        error = checkSelection(grid, l, q);
        tokens = checkTokens(words, grid.T).tokens;
        causal = Boolean(isCausal);
        layer = l;
        query = q;
        if (selected !== null && selected >= grid.H) selected = null;
        if (focus >= grid.H) focus = 0;
      }
      show();
    },
    /** Mark a head as the open one (null: none) without calling onSelect; the focus follows a newly opened one
     *  (not a new query row: the reader's place in the strip stays). */
    select(head) {
      const next = Number.isInteger(head) ? head : null;
      if (next !== null && next !== selected) focus = next;
      selected = next;
      label();
      life.request();
    },
    focused: () => focus,
    /** layout(): geometry in CSS pixels for tests, {top, row, left, cell, layer, query, lines: [{head, y, top, weight}]}. */
    ...drawnApi(life, () => geometry),
  };
}
