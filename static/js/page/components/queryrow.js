// The query-row view: for the selected query, one bar per key with its attention weight (that
// row of the weights Python computed), a one-sentence summary, and the value rows its output row
// is made of (out[i] = Σ_j w[i, j] · V[j], shown as a 100% bar split by weight; nothing is
// recomputed here: the split is the weights themselves). Keys a mask hid (update's `hidden`, validate.js
// hiddenCells) are drawn as masked, hatched grey, not as a 0% bar: a masked key was never a candidate.

import { lutIndex, sequential, SEQUENTIAL_LUT } from "./colormap.js";
import { canvasLifecycle, canvasWidth, drawStatus, drawTooltip, fmt, prepareCanvas, readTheme, shortLabel, wrap } from "./canvas.js";
import { checkInput, checkTokens, isMaskedCell } from "./validate.js";
import { describeRow, tokenName } from "./table.js";

/** What the query-row view draws, and the rules its input is checked by. */
export const QUERYROW_INPUT = Object.freeze({ key: "weights", name: "the attention weights", square: true });

/**
 * createQueryRow(canvas, {tokens, onSelect, onSummary}) -> {update, select, setReveal, summary, layout, destroy}
 * update(payload | {weights, tokens, hidden} | weightsArray); select(row) shows that query row.
 * onSummary(text) receives the sentence whenever it changes (for an aria-live region).
 */
export function createQueryRow(canvas, options = {}) {
  const opts = { ...options };
  let w = null; // checked weights
  let hidden = null; // Uint8Array(T * T): 1 where a mask hid the key from the query, or null
  let tokens = [];
  let error = "";
  let row = null;
  let focusKey = null;
  let hoverKey = null;
  let reveal = null;
  let geometry = null;
  let lastSummary = null;
  let labelMaxCache = null;

  const schedule = () => life.request();
  const flush = () => life.flush();
  /** Tell listeners (the live region) about the selected row at once, before the next frame. */
  function notify() {
    const text = summary();
    if (text !== lastSummary) { lastSummary = text; opts.onSummary?.(text); }
    canvas.setAttribute("aria-label", error || `Query row view. ${text} Up and down arrows change the query; left and right move between keys.`);
  }

  function summary() {
    if (!w) return error || "";
    if (row === null) return "Select a query row to see where its attention goes.";
    if (reveal !== null && row >= reveal) return `The weights of ${tokenName(tokens, row)} are not computed yet.`;
    const masked = maskedKeys();
    const note = masked ? ` ${masked === 1 ? "1 later key is" : `${masked} later keys are`} masked (grey): it cannot see them.` : "";
    return describeRow(tokens, rowWeights(), row) + note;
  }
  const rowWeights = () => w.data.subarray(row * w.cols, (row + 1) * w.cols);
  /** Whether the mask hid key j from the selected query (and its weight is 0, as a mask makes it). */
  const isHidden = (j) => isMaskedCell(hidden, w.data, row * w.cols + j);
  const maskedKeys = () => { let n = 0; for (let j = 0; j < w.cols; j++) if (isHidden(j)) n++; return n; };

  /** Where things go at `width` (CSS pixels; the summary's lines and the keys' labels set the height), and the
   *  summary's lines: the draw's layout, and the height the lifecycle holds as soon as the weights come. */
  function measure(givenWidth) {
    const theme = readTheme();
    const width = Math.max(160, givenWidth);
    const probe = canvas.getContext("2d");
    probe.font = theme.font(14, "600");
    const sentence = wrap(probe, summary(), width - 8);
    const T = w.cols;
    const left = 40;
    const plotW = width - left - 8;
    const barW = plotW / T;
    probe.font = theme.font(12);
    if (!labelMaxCache || labelMaxCache.font !== probe.font) {
      let mx = 0;
      for (const t of tokens) mx = Math.max(mx, probe.measureText(shortLabel(t)).width);
      labelMaxCache = { font: probe.font, width: mx };
    }
    const labelMax = Math.min(70, labelMaxCache.width);
    const rotate = barW < labelMax + 4;
    const labelH = barW >= 12 ? (rotate ? labelMax + 6 : 18) : 30;
    const top = sentence.length * 19 + 14;
    const plotH = 130;
    const mixY = top + plotH + labelH + 24;
    return { sentence, rotate, geometry: { left, top, plotW, plotH, barW, mixY, width, height: mixY + 66 } };
  }

  function render() {
    notify();
    if (drawStatus(canvas, error, w ? "" : "No attention weights to show yet.")) { geometry = null; return; }
    const theme = readTheme();
    const { sentence, rotate, geometry: laid } = measure(canvasWidth(canvas));
    geometry = laid;
    const { left, top, plotW, plotH, barW, height } = laid;
    const T = w.cols;
    const { ctx } = prepareCanvas(canvas, height);

    ctx.fillStyle = theme.fg;
    ctx.font = theme.font(14, "600");
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    sentence.forEach((line, i) => ctx.fillText(line, 4, 2 + i * 19));

    // Axis and grid: 0..100%.
    ctx.font = theme.font(11);
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (const g of [0, 0.25, 0.5, 0.75, 1]) {
      const y = top + plotH * (1 - g);
      ctx.strokeStyle = theme.grid;
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(left, Math.round(y) + 0.5); ctx.lineTo(left + plotW, Math.round(y) + 0.5); ctx.stroke();
      ctx.fillStyle = theme.muted;
      ctx.fillText(`${g * 100}%`, left - 4, y);
    }
    if (row === null || (reveal !== null && row >= reveal)) {
      ctx.fillStyle = theme.muted;
      ctx.textAlign = "center";
      ctx.font = theme.font(13);
      ctx.fillText(row === null ? "No query row selected" : "Not computed yet", left + plotW / 2, top + plotH / 2);
      finish(ctx, theme);
      return;
    }
    const ws = rowWeights();
    const order = Array.from(ws, (v, j) => [v, j]).sort((a, b) => b[0] - a[0]);
    const top3 = new Set(order.slice(0, 3).map(([, j]) => j));
    for (let j = 0; j < T; j++) {
      const x = left + j * barW;
      if (isHidden(j)) { drawMasked(ctx, theme, x, barW, top, plotH); continue; }
      const h = plotH * Math.min(1, Math.max(0, ws[j]));
      ctx.fillStyle = `rgb(${sequential(ws[j]).join(",")})`;
      ctx.fillRect(x + (barW > 4 ? 1 : 0), top + plotH - h, Math.max(0.6, barW - (barW > 4 ? 2 : 0)), h);
      if (barW > 4) {
        ctx.strokeStyle = theme.fg;
        ctx.globalAlpha = 0.35;
        ctx.strokeRect(x + 1.5, top + plotH - h + 0.5, Math.max(0, barW - 3), Math.max(0, h - 1));
        ctx.globalAlpha = 1;
      }
      if (barW >= 26 || (top3.has(j) && barW >= 3 && T <= 64)) {
        ctx.fillStyle = theme.fg;
        ctx.font = theme.font(11);
        ctx.textAlign = "center";
        ctx.textBaseline = "bottom";
        ctx.fillText(`${Math.round(ws[j] * 100)}%`, x + barW / 2, top + plotH - h - 2);
      }
    }
    // Key labels.
    ctx.font = theme.font(12);
    ctx.fillStyle = theme.fg;
    const stride = barW >= 12 ? 1 : 0;
    let lastEnd = -Infinity; // narrow bars: label only the top keys, never overlapping
    for (let j = 0; j < T; j++) {
      if (!stride && !top3.has(j)) continue;
      const x = left + (j + 0.5) * barW;
      const label = barW >= 12 ? shortLabel(tokens[j]) : `${shortLabel(tokens[j], 6)}(${j})`;
      if (!stride) {
        const half = ctx.measureText(label).width / 2;
        if (x - half < lastEnd + 4) continue;
        lastEnd = x + half;
      }
      ctx.fillStyle = j === row ? theme.accent : theme.fg;
      if (rotate || !stride) {
        ctx.save();
        ctx.translate(x, top + plotH + 4);
        ctx.rotate(stride ? -Math.PI / 2.6 : 0);
        ctx.textAlign = stride ? "right" : "center";
        ctx.textBaseline = stride ? "middle" : "top";
        ctx.fillText(label, 0, 0);
        ctx.restore();
      } else {
        ctx.textAlign = "center";
        ctx.textBaseline = "top";
        ctx.fillText(label, x, top + plotH + 4);
      }
    }
    drawMix(ctx, theme, ws, order);
    finish(ctx, theme);
  }

  /** A key the mask hid: a full-height hatched grey column, the heatmap's grey for masked cells. */
  function drawMasked(ctx, theme, x, barW, top, plotH) {
    const inset = barW > 4 ? 1 : 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(x + inset, top, Math.max(0.6, barW - 2 * inset), plotH);
    ctx.clip();
    ctx.fillStyle = theme.masked;
    ctx.globalAlpha = 0.5;
    ctx.fillRect(x, top, barW, plotH);
    ctx.globalAlpha = 0.6;
    ctx.strokeStyle = theme.muted;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let d = -plotH; d < barW; d += 6) { ctx.moveTo(x + d, top + plotH); ctx.lineTo(x + d + plotH, top); }
    ctx.stroke();
    ctx.restore();
  }

  function drawMix(ctx, theme, ws, order) {
    const g = geometry;
    ctx.fillStyle = theme.fg;
    ctx.font = theme.font(12, "600");
    ctx.textAlign = "left";
    ctx.textBaseline = "bottom";
    ctx.fillText(fitText(ctx, `Output row of ${shortLabel(tokens[row], 14)} = weighted mix of value rows:`, g.width - 8), 4, g.mixY - 4);
    // One segment per value row, width = its weight; in key order, so it lines up with the bars.
    let x = g.left;
    const barH = 22;
    for (let j = 0; j < ws.length; j++) {
      const segW = g.plotW * Math.max(0, ws[j]);
      if (segW <= 0) continue;
      ctx.fillStyle = `rgb(${sequential(ws[j]).join(",")})`;
      ctx.fillRect(x, g.mixY, segW, barH);
      ctx.strokeStyle = theme.bg;
      ctx.lineWidth = 1;
      ctx.strokeRect(x + 0.5, g.mixY + 0.5, Math.max(0, segW - 1), barH - 1);
      ctx.font = theme.font(11);
      const label = `V[${shortLabel(tokens[j], 6)}]`;
      if (segW > ctx.measureText(label).width + 6) {
        const lum = SEQUENTIAL_LUT[lutIndex(ws[j]) + 1];
        ctx.fillStyle = lum > 150 ? "#000" : "#fff";
        ctx.textAlign = "center";
        ctx.textBaseline = "middle";
        ctx.fillText(label, x + segW / 2, g.mixY + barH / 2);
      }
      x += segW;
    }
    const seen = order.filter(([, j]) => !isHidden(j)); // the keys a mask hid add nothing and are not counted
    const shown = seen.slice(0, 3).filter(([v]) => v >= 0.005);
    const restW = seen.slice(shown.length).reduce((s, [v]) => s + v, 0);
    const terms = shown.map(([v, j]) => `${fmt(v, 2)}·V[${shortLabel(tokens[j], 8)}]`);
    if (seen.length > shown.length) terms.push(`${seen.length - shown.length} more (${fmt(restW, 2)} in all)`);
    ctx.fillStyle = theme.muted;
    ctx.font = theme.font(12);
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    const line = `out[${shortLabel(tokens[row], 8)}] = ${terms.join(" + ")}`;
    const lines = wrap(ctx, line, g.width - 8);
    lines.slice(0, 2).forEach((l, i) => ctx.fillText(l, 4, g.mixY + barH + 6 + i * 15));
  }

  function fitText(ctx, text, width) {
    if (ctx.measureText(text).width <= width) return text;
    const short = `out[${shortLabel(tokens[row], 10)}] mixes value rows:`;
    return ctx.measureText(short).width <= width ? short : "Value rows mixed:";
  }

  function finish(ctx, theme) {
    const g = geometry;
    const key = hoverKey ?? (document.activeElement === canvas ? focusKey : null);
    if (key !== null && row !== null && (reveal === null || row < reveal)) {
      const x = g.left + key * g.barW;
      ctx.setLineDash([3, 2]);
      ctx.strokeStyle = theme.accent;
      ctx.lineWidth = 2;
      ctx.strokeRect(x, g.top - 1, Math.max(2, g.barW), g.plotH + 2);
      ctx.setLineDash([]);
      const v = w.data[row * w.cols + key];
      const what = isHidden(key) ? "masked: a later key, weight 0" : `weight ${fmt(v, 3)} (${Math.round(v * 100)}%)`;
      drawTooltip(ctx, theme, `${shortLabel(tokens[row], 14)} → ${shortLabel(tokens[key], 14)} (${key})\n${what}`,
        x + g.barW / 2, g.top + 10, g.width, g.height);
    }
  }

  function keyAt(ev) {
    if (!geometry || row === null) return null;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left - geometry.left;
    const j = Math.floor(x / geometry.barW);
    return j >= 0 && j < w.cols ? j : null;
  }
  const onMove = (ev) => { const k = keyAt(ev); if (k !== hoverKey) { hoverKey = k; schedule(); } };
  const onLeave = () => { hoverKey = null; schedule(); };
  const onClick = (ev) => { const k = keyAt(ev); if (k !== null) { focusKey = k; schedule(); } };
  const onKey = (ev) => {
    if (!w) return;
    const T = w.rows;
    let handled = true;
    if (ev.key === "ArrowUp" || ev.key === "ArrowDown") {
      const next = row === null ? 0 : Math.max(0, Math.min(T - 1, row + (ev.key === "ArrowUp" ? -1 : 1)));
      if (next !== row) { row = next; notify(); schedule(); opts.onSelect?.(row); }
    } else if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
      focusKey = focusKey === null ? 0 : Math.max(0, Math.min(w.cols - 1, focusKey + (ev.key === "ArrowLeft" ? -1 : 1)));
      schedule();
    } else if (ev.key === "Enter" || ev.key === " ") {
      if (row !== null) opts.onSelect?.(row);
    } else handled = false;
    if (handled) ev.preventDefault();
  };
  const onBlur = () => schedule();
  const life = canvasLifecycle(canvas, {
    roleDescription: "bar chart", render,
    height: (width) => (w && !error ? measure(width).geometry.height : null),
    handlers: { pointermove: onMove, pointerleave: onLeave, click: onClick, keydown: onKey, focus: onBlur, blur: onBlur },
  });
  life.now();

  return {
    update(input) {
      try {
        const { checked, tokens: tk } = checkInput(input, QUERYROW_INPUT);
        if (!checked.ok) { w = null; error = checked.message; }
        else {
          w = checked;
          error = "";
          hidden = input?.hidden instanceof Uint8Array && input.hidden.length === checked.rows * checked.cols ? input.hidden : null;
          tokens = checkTokens(tk ?? opts.tokens, checked.rows).tokens;
          if (row !== null && row >= checked.rows) row = null;
          if (focusKey !== null && focusKey >= checked.cols) focusKey = null;
          labelMaxCache = null;
        }
      } catch (err) {
        w = null;
        error = `Cannot draw the query row: ${err?.message ?? err}`;
      }
      if (error || !w) { life.now(); return; }
      notify();
      schedule();
    },
    select(r) { row = w && Number.isInteger(r) && r >= 0 && r < w.rows ? r : null; notify(); schedule(); },
    setReveal(n) { reveal = n === null || n === undefined ? null : n; notify(); schedule(); },
    summary,
    flush,
    layout: () => { flush(); return geometry ? { ...geometry } : null; },
    error: () => error,
    destroy: () => life.destroy(),
  };
}
