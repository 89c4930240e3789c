// Shared matrix renderer: one or more matrices that share their rows (the tokens), drawn on one
// canvas with token labels, a legend, a hover/focus tooltip, keyboard navigation and a selected
// row. It draws numbers it is given and never computes attention.
//
// Cells are painted into a small offscreen image (one pixel per cell or per pooled block) and
// scaled up without smoothing, so T=512 costs one ImageData fill, not 262,144 fillRects.

import { drawLegend, luminance, lutIndex, makeScale } from "./colormap.js";
import { canvasLifecycle, canvasWidth, drawStatus, drawTooltip, fitLabel, fmt, prepareCanvas, readTheme, shortLabel } from "./canvas.js";
import { checkArray, isMaskedCell } from "./validate.js";

// ---- pooling ------------------------------------------------------------------------------

/**
 * Pool a rows×cols matrix into blocks of br×bc. NaN marks a block not revealed yet, -Infinity a
 * fully masked block. mode: "max" keeps peaks visible, "mean" averages, "maxabs" keeps the
 * value of largest magnitude with its sign (for diverging data).
 */
export function poolBlocks(data, rows, cols, br, bc, mode, revealRows = rows) {
  const nR = Math.ceil(rows / br);
  const nC = Math.ceil(cols / bc);
  const out = new Float32Array(nR * nC);
  for (let R = 0; R < nR; R++) {
    const r0 = R * br;
    if (r0 >= revealRows) { out.fill(NaN, R * nC, (R + 1) * nC); continue; }
    const r1 = Math.min(rows, r0 + br, revealRows);
    for (let C = 0; C < nC; C++) {
      const c0 = C * bc;
      const c1 = Math.min(cols, c0 + bc);
      let acc = mode === "max" ? -Infinity : 0;
      let n = 0;
      for (let r = r0; r < r1; r++) {
        let k = r * cols + c0;
        for (let c = c0; c < c1; c++, k++) {
          const v = data[k];
          if (v === -Infinity) continue;
          n++;
          if (mode === "max") { if (v > acc) acc = v; }
          else if (mode === "maxabs") { if (Math.abs(v) > Math.abs(acc)) acc = v; }
          else acc += v;
        }
      }
      out[R * nC + C] = n === 0 ? -Infinity : mode === "mean" ? acc / n : acc;
    }
  }
  return out;
}

/** The column labels' font size: they stand upright, so half of it is how far one reaches sideways. */
const COL_LABEL_PX = 12;

const POOL_WORDS = { max: "the largest value", mean: "the mean", maxabs: "the value of largest magnitude" };

/**
 * A checked matrix's values with the cells *hidden* marks (and whose value is 0) as -Infinity, the renderer's
 * "masked", and how many cells are masked in all: {data, masked}. Without hidden, the checked data as it is.
 */
export function maskHidden(checked, hidden) {
  if (!hidden || hidden.length !== checked.data.length) return { data: checked.data, masked: checked.masked };
  const data = Float32Array.from(checked.data);
  let masked = 0;
  for (let k = 0; k < data.length; k++) {
    if (isMaskedCell(hidden, data, k)) data[k] = -Infinity;
    if (data[k] === -Infinity) masked++;
  }
  return { data, masked };
}

// ---- the renderer -------------------------------------------------------------------------

/**
 * createMatrix(canvas, options) -> {update, select, setReveal, focusCell, layout, describe, destroy}
 *
 * options:
 *   name            what the matrix is ("attention weights"), used in labels and messages
 *   rowAxis/colAxis axis names ("query", "key")
 *   map, range      "sequential" | "diverging"; [min, max] or "auto" (symmetric for diverging)
 *   pool            "max" | "mean" | "maxabs" when T is too large for one cell per value
 *   maxBlocks       most cells drawn along an axis before pooling (default 64)
 *   onSelect(row)   the reader chose a row (click, arrow keys, Enter/Space)
 *   onDescribe(s)   called with a caption note whenever pooling changes
 *   maskedText      written in a masked cell (default "−∞", a masked score); maskedNote: the caption's words
 *
 * update({matrix, rowLabels, colLabels}) or update({rowLabels, panels: [{matrix, colLabels,
 *   title, map, range, pool, gutter, revealable, cellLabel, hidden}]}) where matrix is {shape, data}; hidden
 *   (Uint8Array, one per cell, validate.js hiddenCells) greys the cells a mask hid whose value is 0 (a masked
 *   key's weight), as a masked -inf score is: a value that is not 0 stays in colour, so a mismatch shows.
 */
export function createMatrix(canvas, options = {}) {
  const opts = {
    name: "matrix", rowAxis: "row", colAxis: "column", map: "sequential", range: "auto",
    pool: "max", maxBlocks: 64, digits: 3, ...options,
  };
  let rows = 0;
  let rowLabels = [];
  let panels = [];
  let error = "";
  let selected = null;
  let focus = { row: 0, col: 0 };
  let hover = null;
  let reveal = null;
  let geometry = null;
  let lastNote = null;
  let imagesDirty = true;
  let paintedTheme = null;
  let measured = null; // label widths, measured once per update: {font, rowW, colW}

  // Many changes can arrive in one task (update, then select, then reveal): draw once per frame.
  const schedule = () => life.request();
  const flush = () => life.flush();


  const totalCols = () => panels.reduce((s, p) => s + p.cols, 0);

  function buildPanels(spec) {
    const list = spec.panels ?? [{ matrix: spec.matrix, colLabels: spec.colLabels }];
    const built = [];
    let expectRows;
    for (const p of list) {
      const map = p.map ?? opts.map;
      const checked = checkArray(p.matrix, {
        name: p.name ?? opts.name, rows: expectRows, square: p.square ?? opts.square ?? false,
        allowNegInf: p.allowNegInf ?? opts.allowNegInf ?? false,
      });
      if (!checked.ok) throw new UserError(checked.message);
      expectRows = checked.rows;
      const range = p.range ?? opts.range;
      const { data, masked } = maskHidden(checked, p.hidden);
      const lo = checked.min;
      const hi = checked.max;
      const [min, max] = Array.isArray(range) ? range : map === "sequential" ? [Math.min(0, lo), Math.max(hi, 1e-9)] : [lo, hi];
      built.push({
        ...p, map, data, cols: checked.cols, masked,
        scale: makeScale(map, min, max), pool: p.pool ?? opts.pool,
        colLabels: p.colLabels ?? Array.from({ length: checked.cols }, (_, i) => String(i)),
      });
    }
    return { built, rows: expectRows };
  }

  function update(spec) {
    if (life.destroyed) return;
    try {
      if (!spec || typeof spec !== "object") throw new UserError(`Cannot draw ${opts.name}: nothing was given.`);
      const { built, rows: r } = buildPanels(spec);
      panels = built;
      rows = r;
      rowLabels = Array.isArray(spec.rowLabels) && spec.rowLabels.length === r ? spec.rowLabels.map(String)
        : Array.from({ length: r }, (_, i) => String(i));
      error = "";
      if (selected !== null && selected >= rows) selected = null;
      focus = { row: Math.min(focus.row, rows - 1), col: Math.min(focus.col, totalCols() - 1) };
      hover = null;
      imagesDirty = true;
      measured = null;
    } catch (err) {
      panels = [];
      rows = 0;
      error = err instanceof UserError ? err.message : `Cannot draw ${opts.name}: ${err?.message ?? err}`;
      life.now(); // a message is cheap and should be there at once
      return;
    }
    schedule();
  }

  // ---- layout ----
  function computeGeometry(ctx, width, theme) {
    const pad = 4;
    const nCols = totalCols();
    ctx.font = theme.font(12);
    if (!measured || measured.font !== ctx.font) {
      let rowW = 0;
      for (const l of rowLabels) rowW = Math.max(rowW, ctx.measureText(shortLabel(l)).width);
      if (rows > opts.maxBlocks) rowW = Math.max(rowW, ctx.measureText(`${rows - 1}–${rows - 1}`).width); // pooled range labels
      measured = { font: ctx.font, rowW, col: new Map() };
    }
    const colWidth = (p, bc) => {
      const key = `${panels.indexOf(p)}:${bc}`;
      if (!measured.col.has(key)) measured.col.set(key, Math.max(0, ...colLabelList(p, bc).map((l) => ctx.measureText(l).width)));
      return measured.col.get(key);
    };
    const labelW = Math.min(86, Math.max(24, measured.rowW)) + 10;
    const gutterW = (p) => (p.gutter ? 40 : 0);
    const gaps = (panels.length - 1) * 14 + panels.reduce((s, p) => s + gutterW(p), 0);
    const left = labelW + 18;
    const avail = Math.max(40, width - left - pad - gaps);
    // Pool when one value per cell would be too many cells or cells thinner than 3 px.
    const maxAlong = Math.max(4, Math.min(opts.maxBlocks, Math.floor(avail / 3)));
    const br = rows > maxAlong ? Math.ceil(rows / maxAlong) : 1;
    const nR = Math.ceil(rows / br);
    const blockCols = panels.map((p) => (p.cols > maxAlong ? Math.ceil(p.cols / maxAlong) : 1));
    const nC = panels.reduce((s, p, i) => s + Math.ceil(p.cols / blockCols[i]), 0);
    const cell = Math.max(2, Math.min(opts.maxCell ?? 44, avail / nC, (opts.maxHeight ?? Math.min(560, Math.max(240, width * 0.9))) / nR));
    const colLabelW = Math.min(66, Math.max(16, ...panels.map((p, i) => colWidth(p, blockCols[i])))) + 6;
    const titleH = panels.some((p) => p.title) ? 18 : 0;
    const top = titleH + colLabelW + 4;
    let x = left;
    const rects = panels.map((p, i) => {
      x += gutterW(p);
      const w = Math.ceil(p.cols / blockCols[i]) * cell;
      const r = { x, y: top, w, h: nR * cell, bc: blockCols[i], nC: Math.ceil(p.cols / blockCols[i]), gutterX: x - gutterW(p) };
      x += w + 14;
      return r;
    });
    const legendY = top + nR * cell + 14;
    const height = legendY + 34;
    return { left, top, cell, br, nR, rects, legendY, height, width, labelW, titleH, colLabelW, nCols };
  }

  function colLabelList(p, bc) {
    if (bc === 1) return p.colLabels.map((l) => shortLabel(l));
    const out = [];
    for (let c = 0; c < p.cols; c += bc) out.push(`${c}–${Math.min(p.cols, c + bc) - 1}`);
    return out;
  }

  function rowLabelText(R, br) {
    if (br === 1) return shortLabel(rowLabels[R]);
    return `${R * br}–${Math.min(rows, (R + 1) * br) - 1}`;
  }

  function poolNote(g) {
    const bits = [];
    if (g.br > 1 || g.rects.some((r) => r.bc > 1)) {
      const p = panels[0];
      bits.push(`${rows} rows are too many to draw one cell each: each coloured block pools ${g.br}×${g.rects[0].bc} cells and shows ${POOL_WORDS[p.pool] ?? p.pool}; labels give index ranges. Hover or use the arrow keys for exact values.`);
    }
    if (panels.some((p) => p.masked)) bits.push(opts.maskedNote ?? "Grey cells are masked (−∞ before the softmax).");
    return bits.join(" ");
  }

  // ---- painting ----
  function paintImages(g, theme) {
    const empty = theme.rgb("empty");
    const masked = theme.rgb("masked");
    panels.forEach((p, i) => {
      const r = g.rects[i];
      const limit = reveal !== null && p.revealable !== false ? reveal : rows;
      const pooled = poolBlocks(p.data, rows, p.cols, g.br, r.bc, g.br > 1 || r.bc > 1 ? p.pool : "max", limit);
      const img = new ImageData(r.nC, g.nR);
      const px = img.data;
      const { lut, min, max } = p.scale;
      const span = max - min || 1;
      for (let k = 0; k < pooled.length; k++) {
        const v = pooled[k];
        let rgb;
        if (Number.isNaN(v)) rgb = empty;
        else if (v === -Infinity) rgb = masked;
        else {
          const j = lutIndex((v - min) / span);
          rgb = [lut[j], lut[j + 1], lut[j + 2]];
        }
        px[k * 4] = rgb[0]; px[k * 4 + 1] = rgb[1]; px[k * 4 + 2] = rgb[2]; px[k * 4 + 3] = 255;
      }
      const off = p.image && p.image.width === r.nC && p.image.height === g.nR ? p.image : document.createElement("canvas");
      off.width = r.nC;
      off.height = g.nR;
      off.getContext("2d").putImageData(img, 0, 0);
      p.image = off;
      p.pooled = pooled;
    });
  }

  function render() {
    if (drawStatus(canvas, error, panels.length ? "" : `No ${opts.name} to show yet.`)) {
      geometry = null;
      if (error) report("");
      return;
    }
    const theme = readTheme();
    const probe = canvas.getContext("2d");
    const width = canvasWidth(canvas);
    const g = computeGeometry(probe, width, theme);
    const changed = !geometry || geometry.br !== g.br || geometry.nR !== g.nR ||
      g.rects.some((r, i) => geometry.rects[i]?.bc !== r.bc);
    geometry = g;
    // a new theme object means new colours: empty and masked cells are in the pixels
    if (changed || imagesDirty || paintedTheme !== theme) { paintImages(g, theme); imagesDirty = false; paintedTheme = theme; }
    const { ctx } = prepareCanvas(canvas, g.height);

    // Cells.
    ctx.imageSmoothingEnabled = false;
    panels.forEach((p, i) => {
      const r = g.rects[i];
      ctx.drawImage(p.image, r.x, r.y, r.w, r.h);
      if (g.cell >= 12) { // thin separators help count cells
        ctx.strokeStyle = theme.bg;
        ctx.globalAlpha = 0.6;
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let k = 1; k < r.nC; k++) { const x = Math.round(r.x + k * g.cell) + 0.5; ctx.moveTo(x, r.y); ctx.lineTo(x, r.y + r.h); }
        for (let k = 1; k < g.nR; k++) { const y = Math.round(r.y + k * g.cell) + 0.5; ctx.moveTo(r.x, y); ctx.lineTo(r.x + r.w, y); }
        ctx.stroke();
        ctx.globalAlpha = 1;
      }
      if (g.cell >= 30 && g.br === 1 && r.bc === 1) drawCellValues(ctx, p, r, g, theme);
      if (p.title) {
        ctx.fillStyle = theme.fg;
        ctx.font = theme.font(12, "600");
        ctx.textAlign = "left";
        ctx.textBaseline = "top";
        ctx.fillText(p.title, p.gutter ? r.gutterX : r.x, 0);
      }
      if (p.gutter) drawGutter(ctx, p, r, g, theme);
    });

    drawLabels(ctx, g, theme);
    drawSelection(ctx, g, theme);
    const p0 = panels[0];
    // The bar gives way to its label: in a narrow thumbnail the label must still fit the canvas.
    ctx.font = theme.font(11);
    const labelRoom = opts.legendLabel ? ctx.measureText(opts.legendLabel).width + 12 : 0;
    drawLegend(ctx, {
      x: g.left, y: g.legendY, width: Math.max(48, Math.min(220, g.width - g.left - labelRoom)), height: 10,
      scale: p0.scale, color: theme.fg, border: theme.grid, font: theme.font(11),
      label: opts.legendLabel ?? "",
    });
    drawTip(ctx, g, theme);
    canvas.setAttribute("aria-label", ariaLabel());
    report(poolNote(g));
  }

  function drawCellValues(ctx, p, r, g, theme) {
    ctx.font = theme.font(Math.min(11, Math.floor(g.cell / 3.2)));
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    const limit = reveal !== null && p.revealable !== false ? reveal : rows;
    // One precision for the whole matrix (2 decimals, else 1, else none): never a mix of
    // numbered and blank cells.
    let digits = -1;
    for (const d of [2, 1]) {
      let widest = 0;
      for (let k = 0; k < p.data.length; k++) {
        const v = p.data[k];
        if (v !== -Infinity) widest = Math.max(widest, ctx.measureText(fmt(v, d)).width);
      }
      if (widest <= g.cell - 4) { digits = d; break; }
    }
    if (digits < 0) return;
    for (let row = 0; row < Math.min(rows, limit); row++) {
      for (let c = 0; c < p.cols; c++) {
        const v = p.data[row * p.cols + c];
        const text = v === -Infinity ? opts.maskedText ?? "−∞" : fmt(v, digits);
        ctx.fillStyle = v === -Infinity ? "#000" : luminance(p.scale.color(v)) > 0.36 ? "#000" : "#fff";
        ctx.fillText(text, r.x + (c + 0.5) * g.cell, r.y + (row + 0.5) * g.cell);
      }
    }
  }

  function drawGutter(ctx, p, r, g, theme) {
    // Bars left of a panel: one value per row in 0..1 (the output view uses the selected row's weights).
    const x0 = r.gutterX;
    const w = 34;
    ctx.fillStyle = theme.muted;
    ctx.font = theme.font(10);
    ctx.textAlign = "left";
    ctx.textBaseline = "bottom";
    // The title shares its line with the column labels, which stand upright from g.top: it ends before
    // the panel's first one, so the longest of its forms that fits in this font and cell size is drawn.
    const room = r.x + g.cell / 2 - COL_LABEL_PX / 2 - 3 - x0;
    const title = fitLabel(ctx, p.gutterTitle ?? [], room);
    if (title) ctx.fillText(title, x0, g.top - 2);
    if (!p.gutter) return;
    for (let R = 0; R < g.nR; R++) {
      let v = 0;
      for (let row = R * g.br; row < Math.min(rows, (R + 1) * g.br); row++) v += p.gutter[row] ?? 0; // share of the block
      const y = g.top + R * g.cell;
      ctx.fillStyle = theme.grid;
      ctx.fillRect(x0, y + 1, w - 4, Math.max(1, g.cell - 2));
      ctx.fillStyle = theme.accent;
      ctx.fillRect(x0, y + 1, (w - 4) * Math.min(1, Math.max(0, v)), Math.max(1, g.cell - 2));
    }
  }

  function drawLabels(ctx, g, theme) {
    const stride = Math.max(1, Math.ceil(14 / g.cell));
    ctx.font = theme.font(12);
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    const selBlock = selected === null ? -1 : Math.floor(selected / g.br);
    for (let R = 0; R < g.nR; R++) {
      const isSel = R === selBlock;
      if (R % stride && !isSel) continue;
      ctx.fillStyle = isSel ? theme.accent : theme.fg;
      ctx.font = theme.font(12, isSel ? "700" : "");
      ctx.fillText(rowLabelText(R, g.br), g.left - 6, g.top + (R + 0.5) * g.cell);
    }
    // Column labels, written upwards above each panel.
    ctx.font = theme.font(COL_LABEL_PX);
    ctx.textAlign = "left";
    panels.forEach((p, i) => {
      const r = g.rects[i];
      const labels = colLabelList(p, r.bc);
      const cstride = Math.max(1, Math.ceil(14 / g.cell));
      ctx.fillStyle = theme.fg;
      for (let C = 0; C < labels.length; C += cstride) {
        ctx.save();
        ctx.translate(r.x + (C + 0.5) * g.cell, g.top - 5);
        ctx.rotate(-Math.PI / 2);
        ctx.fillText(labels[C], 0, 0);
        ctx.restore();
      }
    });
    // Axis names in the empty top-left corner.
    ctx.fillStyle = theme.muted;
    ctx.font = theme.font(11, "italic");
    ctx.textAlign = "right";
    ctx.textBaseline = "bottom";
    ctx.fillText(`${opts.colAxis} →`, g.left - 6, g.top - 4);
    ctx.textBaseline = "top";
    ctx.fillText(`${opts.rowAxis} ↓`, g.left - 6, g.titleH);
  }

  function drawSelection(ctx, g, theme) {
    const focused = document.activeElement === canvas;
    if (selected !== null) {
      const R = Math.floor(selected / g.br);
      const y = g.top + R * g.cell;
      const x0 = g.rects[0].gutterX;
      const last = g.rects[g.rects.length - 1];
      ctx.lineWidth = 3;
      ctx.strokeStyle = theme.bg;
      ctx.strokeRect(x0 - 2, y - 1.5, last.x + last.w - x0 + 4, g.cell + 3);
      ctx.lineWidth = 2;
      ctx.strokeStyle = theme.select;
      ctx.strokeRect(x0 - 2, y - 1.5, last.x + last.w - x0 + 4, g.cell + 3);
      ctx.fillStyle = theme.accent;
      ctx.beginPath(); // a small pointer beside the label
      ctx.moveTo(g.left - 2, y + g.cell / 2 - 4);
      ctx.lineTo(g.left + 2, y + g.cell / 2);
      ctx.lineTo(g.left - 2, y + g.cell / 2 + 4);
      ctx.fill();
    }
    if (focused && rows) {
      const { panel, col } = splitCol(focus.col);
      const r = g.rects[panel];
      const x = r.x + Math.floor(col / r.bc) * g.cell;
      const y = g.top + Math.floor(focus.row / g.br) * g.cell;
      ctx.setLineDash([3, 2]);
      ctx.lineWidth = 2;
      ctx.strokeStyle = theme.accent;
      ctx.strokeRect(x - 1, y - 1, g.cell + 2, g.cell + 2);
      ctx.setLineDash([]);
    }
  }

  function splitCol(globalCol) {
    let c = globalCol;
    for (let i = 0; i < panels.length; i++) {
      if (c < panels[i].cols) return { panel: i, col: c };
      c -= panels[i].cols;
    }
    return { panel: panels.length - 1, col: panels[panels.length - 1].cols - 1 };
  }

  function cellText(row, panel, col, pooledBlock) {
    const p = panels[panel];
    const g = geometry;
    const limit = reveal !== null && p.revealable !== false ? reveal : rows;
    if (row >= limit) return `${shortLabel(rowLabels[row], 16)}: not computed yet`;
    if (pooledBlock && (g.br > 1 || g.rects[panel].bc > 1)) {
      const R = Math.floor(row / g.br);
      const C = Math.floor(col / g.rects[panel].bc);
      const v = p.pooled[R * g.rects[panel].nC + C];
      const r0 = R * g.br; const c0 = C * g.rects[panel].bc;
      return `${opts.rowAxis}s ${r0}–${Math.min(rows, r0 + g.br) - 1} × ${opts.colAxis}s ${c0}–${Math.min(p.cols, c0 + g.rects[panel].bc) - 1}\n${p.pool} ${fmt(v, opts.digits)}`;
    }
    const v = p.data[row * p.cols + col];
    if (p.cellLabel) return p.cellLabel(row, col, v, rowLabels);
    return `${opts.rowAxis} ${shortLabel(rowLabels[row], 16)} (${row}) · ${opts.colAxis} ${shortLabel(p.colLabels[col], 16)} (${col})\n${p.title ? `${p.title} = ` : ""}${fmt(v, opts.digits)}`;
  }

  function drawTip(ctx, g, theme) {
    if (hover && hover.col !== null) {
      drawTooltip(ctx, theme, cellText(hover.row, hover.panel, hover.col, true), hover.x, hover.y, g.width, g.height);
    } else if (document.activeElement === canvas && rows && canvas.dataset.keyboard === "1") {
      const { panel, col } = splitCol(focus.col);
      const r = g.rects[panel];
      const x = r.x + (Math.floor(col / r.bc) + 1) * g.cell;
      const y = g.top + (Math.floor(focus.row / g.br) + 1) * g.cell;
      drawTooltip(ctx, theme, cellText(focus.row, panel, col, false), x, y, g.width, g.height);
    }
  }

  function ariaLabel() {
    const shape = panels.map((p) => `${p.title ?? opts.name} ${rows}×${p.cols}`).join(", ");
    const sel = selected === null ? "No row selected." : `Selected ${opts.rowAxis}: ${rowLabels[selected]} (row ${selected}).`;
    return `${opts.name}: ${shape}. ${sel} Arrow keys move between cells and rows; the table of numbers lists every value.`;
  }

  function report(note) {
    if (note !== lastNote) { lastNote = note; opts.onDescribe?.(note); }
  }

  // ---- interaction ----
  function hit(ev) {
    const g = geometry;
    if (!g) return null;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top;
    if (y < g.top || y >= g.top + g.nR * g.cell) return null;
    const block = Math.floor((y - g.top) / g.cell); // pooled row block under the pointer
    const within = (y - g.top - block * g.cell) / g.cell; // 0..1 inside the block
    const row = Math.min(rows - 1, block * g.br + Math.floor(within * g.br));
    for (let i = 0; i < g.rects.length; i++) {
      const r = g.rects[i];
      if (x >= r.x && x < r.x + r.w) {
        const col = Math.min(panels[i].cols - 1, Math.floor((x - r.x) / g.cell) * r.bc);
        return { row, panel: i, col, x, y };
      }
    }
    return { row, panel: 0, col: null, x, y }; // on a row label or gutter: the row only
  }

  const onMove = (ev) => {
    const h = hit(ev);
    hover = h;
    canvas.style.cursor = h ? "pointer" : "";
    schedule();
  };
  const onLeave = () => { hover = null; schedule(); };
  const onClick = (ev) => {
    const h = hit(ev);
    if (!h) return;
    canvas.dataset.keyboard = "0";
    focus = { row: h.row, col: h.col === null ? focus.col : globalCol(h.panel, h.col) };
    choose(h.row);
  };
  function globalCol(panel, col) {
    let c = col;
    for (let i = 0; i < panel; i++) c += panels[i].cols;
    return c;
  }
  function choose(row) {
    selected = row;
    schedule();
    opts.onSelect?.(row);
  }
  const onKey = (ev) => {
    if (!rows) return;
    const n = totalCols();
    const step = ev.key.startsWith("Page") ? 8 : 1;
    let { row, col } = focus;
    switch (ev.key) {
      case "ArrowUp": case "PageUp": row = Math.max(0, row - step); break;
      case "ArrowDown": case "PageDown": row = Math.min(rows - 1, row + step); break;
      case "ArrowLeft": col = Math.max(0, col - 1); break;
      case "ArrowRight": col = Math.min(n - 1, col + 1); break;
      case "Home": col = 0; if (ev.ctrlKey) row = 0; break;
      case "End": col = n - 1; if (ev.ctrlKey) row = rows - 1; break;
      case "Enter": case " ": ev.preventDefault(); canvas.dataset.keyboard = "1"; choose(focus.row); return;
      case "Escape": hover = null; canvas.dataset.keyboard = "0"; schedule(); return;
      default: return;
    }
    ev.preventDefault();
    canvas.dataset.keyboard = "1";
    hover = null;
    const rowChanged = row !== focus.row;
    focus = { row, col };
    // Selection follows the focused row, so arrow keys alone walk through the queries.
    if (rowChanged && opts.selectFollowsFocus !== false) choose(row);
    else schedule();
  };
  const onFocus = () => {
    if (selected !== null) focus = { ...focus, row: selected };
    schedule();
  };
  const onBlur = () => { canvas.dataset.keyboard = "0"; schedule(); };

  // A canvas that takes arrow keys is a small application; its label says what it shows and how.
  const life = canvasLifecycle(canvas, {
    roleDescription: "matrix", render,
    // the height render draws at, from the rows, the columns and the label sizes, held as soon as the data comes
    height: (width) => (panels.length ? computeGeometry(canvas.getContext("2d"), width, readTheme()).height : null),
    handlers: { pointermove: onMove, pointerleave: onLeave, click: onClick, keydown: onKey, focus: onFocus, blur: onBlur },
  });
  life.now();

  return {
    update,
    /** Highlight a row (null clears) without calling onSelect. */
    select(row) {
      selected = Number.isInteger(row) && row >= 0 && row < rows ? row : null;
      if (selected !== null) focus = { ...focus, row: selected };
      schedule();
    },
    /** Replace the bars beside one panel (values per row in 0..1) without re-checking the data.
     * title: its forms, longest first (or one string); the longest that fits above the bars is drawn. */
    setGutter(index, values, title = []) {
      const p = panels[index];
      if (!p) return;
      p.gutter = values;
      p.gutterTitle = title;
      schedule();
    },
    /** Draw only the first n rows (null: all); the rest show as empty cells. */
    setReveal(n) {
      const next = n === null || n === undefined ? null : Math.max(0, Math.min(rows, Math.floor(n)));
      if (next === reveal) return;
      reveal = next;
      imagesDirty = true;
      schedule();
    },
    /** Geometry in CSS pixels for tests and overlays: {top, left, cell, br, rects[]}. */
    layout: () => { flush(); return geometry ? JSON.parse(JSON.stringify(geometry)) : null; },
    /** Draw now instead of at the next animation frame. */
    flush,
    selected: () => selected,
    describe: () => lastNote ?? "",
    error: () => error,
    destroy() {
      life.destroy();
      panels = [];
    },
  };
}

/** An error meant for the reader (its message is shown as is). */
export class UserError extends Error {}
