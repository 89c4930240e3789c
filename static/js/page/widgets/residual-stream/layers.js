// The residual stream at one position, one row per depth: the embedding, then the stream after each layer. Each
// row has three bars on one log scale, what the layer's attention wrote, what its MLP wrote (lengths, L2 norms)
// and the stream's own length after it, and the logit lens's top token there with its probability. A log scale
// because the lengths span four orders of magnitude on one sentence (a few units for the embedding, about 20,000
// for the start token's stream). Up/Down (Home, End) or a click pick a row (onSelect); the picked row's numbers
// are the canvas's label. It draws what Python computed (lessonpy.course.block.residual_stream) and computes
// nothing but where things go.
import { SEQUENTIAL_LUT, lutIndex } from "../../components/colormap.js";
import { canvasLifecycle, drawStatus, drawnApi, fmt, prepareCanvas, readTheme, shortLabel } from "../../components/canvas.js";
import { stepFocus } from "../../components/listfocus.js";
import { num } from "../common.js";

const HEAD = 34; // the legend and the scale's powers of ten
const ROW = 17; // one depth: three 4 px bars; 31 rows fit under 600 px
const BAR = 4;
const PAD = 4;

/** The MLP's colour: viridis at 0.55 (a teal), clear of the accent and the grey on light and dark backgrounds. */
const MLP_COLOUR = (() => {
  const i = lutIndex(0.55);
  return `rgb(${SEQUENTIAL_LUT[i]}, ${SEQUENTIAL_LUT[i + 1]}, ${SEQUENTIAL_LUT[i + 2]})`;
})();

/** The name of depth row r: "embedding" for 0, else "layer r - 1" (layers counted from 0, as elsewhere). */
export const rowName = (r) => (r === 0 ? "embedding" : `layer ${r - 1}`);

/** A token as the chart and the sentences show it: spaces as ␣, line ends as ⏎, its direction isolated. */
export const tokenText = (t) => `\u2068${String(t ?? "").replace(/ /g, "␣").replace(/\n/g, "⏎")}\u2069`;

/** The powers of ten from below the smallest positive value to above the largest: the log scale's ends. */
export function decades(values) {
  const positive = values.filter((v) => Number.isFinite(v) && v > 0);
  if (!positive.length) return [0, 1];
  const lo = Math.floor(Math.log10(Math.min(...positive))) || 0; // never -0
  const hi = Math.ceil(Math.log10(Math.max(...positive))) || 0;
  return [lo, Math.max(hi, lo + 1)];
}

/** A probability for reading: 3 decimals, or "< 0.001" (the lens's tail reaches 1e-57, which 0.000 would hide). */
export const probability = (p) => (p < 0.0005 ? "< 0.001" : num(p, 3));

/** One row's numbers in words: what the layer wrote, the stream's length, the lens's top tokens. */
export function describeRow(rows, r) {
  const { attn, mlp, stream, top } = rows[r];
  const wrote = r === 0 ? "the token's embedding" : `attention wrote ${num(attn, 1)}, the MLP ${num(mlp, 1)}`;
  const lens = top.map(([t, p]) => `${tokenText(t)} ${probability(p)}`).join(", ");
  return `${rowName(r)}: ${wrote}; the stream's length ${num(stream, 1)}; the lens reads ${lens}`;
}

/**
 * createLayerChart(canvas, {onSelect(row)}) -> {update(rows, final), select(row), selected(), layout(), flush(), destroy()}
 * rows: [{attn, mlp, stream, top: [[token, p], ...]}] for the embedding (attn and mlp null) and each layer; final: the
 * model's own prediction at the position (the last row's top token), drawn in the accent colour wherever it leads.
 */
export function createLayerChart(canvas, options = {}) {
  let rows = null;
  let final = null;
  let selected = 0;
  let focused = false;
  let geometry = null;

  const height = () => HEAD + (rows?.length ?? 31) * ROW + PAD;

  function label() {
    if (!rows) return;
    canvas.setAttribute("aria-label", `The residual stream after each of ${rows.length - 1} layers. Picked: ` +
      `${describeRow(rows, selected)}. Up and down arrows move between layers.`);
  }

  function render() {
    if (drawStatus(canvas, "", rows ? "" : "No numbers yet.", height())) { geometry = null; return; }
    const { ctx, width } = prepareCanvas(canvas, height());
    const theme = readTheme();
    const left = 62;
    const textW = Math.round(Math.min(190, Math.max(104, width * 0.36)));
    const barsW = Math.max(40, width - left - textW - 10);
    const [lo, hi] = decades(rows.flatMap((r) => [r.attn, r.mlp, r.stream]));
    const x = (v) => (v > 0 ? Math.max(0, (Math.log10(v) - lo) / (hi - lo)) * barsW : 0);
    const colours = { attn: theme.accent, mlp: MLP_COLOUR, stream: theme.muted };

    // legend, then the scale's powers of ten with their grid lines
    ctx.font = theme.font(11);
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    let lx = 4;
    for (const [key, name] of [["attn", "attention wrote"], ["mlp", "MLP wrote"], ["stream", "stream's length"]]) {
      ctx.fillStyle = colours[key];
      ctx.fillRect(lx, 5, 10, 6);
      ctx.fillStyle = theme.fg;
      ctx.fillText(name, lx + 13, 8);
      lx += 13 + ctx.measureText(name).width + 10;
    }
    ctx.fillStyle = theme.fg;
    ctx.fillText("lens: top token, p", left + barsW + 10, HEAD - 8, textW);
    const step = Math.max(1, Math.ceil((hi - lo) / Math.max(1, Math.floor(barsW / 34))));
    ctx.textAlign = "center";
    for (let d = lo; d <= hi; d += step) {
      const gx = left + x(10 ** d);
      ctx.fillStyle = theme.grid;
      ctx.fillRect(gx, HEAD - 2, 1, rows.length * ROW + 2);
      ctx.fillStyle = theme.muted;
      ctx.fillText(d >= 0 && d <= 4 ? String(10 ** d) : `1e${d}`, Math.min(gx, left + barsW - 8), HEAD - 8);
    }

    const lines = [];
    rows.forEach((row, r) => {
      const y = HEAD + r * ROW;
      if (r === selected) {
        ctx.fillStyle = theme.empty;
        ctx.fillRect(0, y, width, ROW);
      }
      ctx.fillStyle = r === selected ? theme.fg : theme.muted;
      ctx.font = theme.font(11, r === selected ? "700" : "");
      ctx.textAlign = "right";
      ctx.fillText(r === 0 ? "embed" : String(r - 1), left - 6, y + ROW / 2);
      ["attn", "mlp", "stream"].forEach((key, k) => {
        if (row[key] == null) return;
        ctx.fillStyle = colours[key];
        ctx.fillRect(left, y + 2 + k * (BAR + 1), Math.max(1, x(row[key])), BAR);
      });
      const [token, p] = row.top[0];
      ctx.font = theme.font(11, token === final ? "700" : "");
      ctx.fillStyle = token === final ? theme.accent : theme.fg;
      ctx.textAlign = "left";
      ctx.fillText(`${shortLabel(token, 12)} ${fmt(p, 2)}`, left + barsW + 10, y + ROW / 2, textW);
      lines.push({ row: r, y, attn: x(row.attn ?? 0), mlp: x(row.mlp ?? 0), stream: x(row.stream) });
    });
    const frame = (r, colour, lw, dash = []) => {
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.lineWidth = lw;
      ctx.setLineDash(dash);
      ctx.strokeRect(1 + lw / 2, HEAD + r * ROW + lw / 2, width - 2 - lw, ROW - lw);
      ctx.restore();
    };
    frame(selected, theme.select, 1.5);
    if (focused) frame(selected, theme.fg, 1, [3, 2]);
    geometry = { head: HEAD, row: ROW, left, barsW, width, height: height(), decades: [lo, hi], lines };
  }

  function choose(r) {
    if (!rows || r === selected) return;
    selected = r;
    canvas.dataset.row = String(r);
    label();
    life.request();
    options.onSelect?.(r);
  }

  const life = canvasLifecycle(canvas, {
    roleDescription: "the residual stream, layer by layer",
    render,
    height,
    handlers: {
      click: (ev) => {
        if (!geometry) return;
        const r = Math.floor((ev.clientY - canvas.getBoundingClientRect().top - geometry.head) / geometry.row);
        if (r >= 0 && r < rows.length) choose(r);
      },
      keydown: (ev) => {
        if (!rows) return;
        const next = stepFocus(selected, ev.key, rows.length); // Up, Down, Home, End
        if (next === null) return;
        ev.preventDefault();
        choose(next);
      },
      focus: () => { focused = true; life.request(); },
      blur: () => { focused = false; life.request(); },
    },
  });
  life.now();

  return {
    update(list, finalToken) {
      rows = list;
      final = finalToken;
      selected = Math.min(selected, rows.length - 1);
      canvas.dataset.row = String(selected);
      label();
      life.request();
    },
    /** Pick row r without calling onSelect (the widget's own choice: a new position keeps the reader's row). */
    select(r) { selected = r; canvas.dataset.row = String(r); label(); life.request(); },
    selected: () => selected,
    ...drawnApi(life, () => geometry),
  };
}
