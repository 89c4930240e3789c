// The soft dictionary lookup in the plane: each key a point labelled with its index and value, the
// query an arrow from the origin, each key's weight at one temperature as the area of its dot (the
// dashed ring is a whole weight of 1) and as a number, and the answer, weights @ values, above.
// It draws the numbers lessonpy.maths.lookup computed for every temperature of its grid; setStep picks
// one, so a slider moves it without asking Python. Arrow keys move a focus between the keys.

import { canvasLifecycle, drawnApi, drawStatus, drawTooltip, fmt, holdHeight, prepareCanvas, readTheme } from "./canvas.js";
import { checkLookup, describeKey, describeLookup, dotRadius, niceStep, planeFrame, stepDecimals, valueText, weightAt } from "./lookupdata.js";
import { stepFocus } from "./listfocus.js";

// the keys lie along the plane's points: every arrow steps (Right and Down forward, Left and Up back)
const ALONG_KEYS = { forward: ["ArrowRight", "ArrowDown"], back: ["ArrowLeft", "ArrowUp"] };

/** The canvas's height in CSS pixels, whatever its width, data or temperature: nothing below it moves. */
export const LOOKUP_HEIGHT = 320;
const HEADER = 24; // the answer's line
const LABEL_FONT = 12;

/**
 * createLookup(canvas, {onFocus(key)}) -> {update(payload | checked), setStep(i), select(key), focused(),
 *   layout(), flush(), destroy()}
 * update takes a show_lookup payload or checkLookup's result; a bad one draws its message, never throws.
 */
export function createLookup(canvas, options = {}) {
  let data = null; // checkLookup's result
  let error = "";
  let step = 0;
  let focus = 0;
  let focused = false;
  let hover = null;
  let geometry = null;
  holdHeight(canvas, LOOKUP_HEIGHT); // reserved before the first draw, before its width is known

  function render() {
    // a message keeps the picture's height too: the page below stays where it is
    if (drawStatus(canvas, error, data ? "" : "No lookup to show yet.", LOOKUP_HEIGHT)) { geometry = null; return; }
    const { ctx, width } = prepareCanvas(canvas, LOOKUP_HEIGHT);
    const theme = readTheme();
    const { N, keys, query, values } = data;
    const rMax = Math.max(10, Math.min(28, Math.min(width, LOOKUP_HEIGHT - HEADER) / 10));
    const pad = rMax + 8;
    const box = { left: pad, top: HEADER + pad, width: width - 2 * pad, height: LOOKUP_HEIGHT - HEADER - 2 * pad };
    const points = Array.from({ length: N }, (_, j) => [keys[2 * j], keys[2 * j + 1]]);
    const frame = planeFrame([...points, [query[0], query[1]]], box);

    const dots = points.map(([x, y], j) => ({ x: frame.toX(x), y: frame.toY(y), r: dotRadius(weightAt(data, step, j), rMax) }));
    const rings = dots.map((d) => ({ x: d.x, y: d.y, r: rMax }));
    drawAxes(ctx, theme, frame, { left: 0, top: HEADER, width, height: LOOKUP_HEIGHT - HEADER }, rings);
    for (const d of dots) { // the ring of a whole weight, then the weight itself
      ctx.setLineDash([3, 3]);
      ctx.strokeStyle = theme.muted;
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.arc(d.x, d.y, rMax, 0, 2 * Math.PI); ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = theme.accent;
      ctx.beginPath(); ctx.arc(d.x, d.y, d.r, 0, 2 * Math.PI); ctx.fill();
    }
    const tip = { x: frame.toX(query[0]), y: frame.toY(query[1]) };
    drawArrow(ctx, theme, frame.toX(0), frame.toY(0), tip.x, tip.y);
    ctx.font = theme.font(LABEL_FONT);
    for (const [j, d] of dots.entries()) { // the key's position, then its labels beside its ring
      ctx.fillStyle = theme.fg;
      ctx.fillRect(d.x - 1.5, d.y - 1.5, 3, 3);
      const lines = [`k${j} → ${valueText(values[j])}`, fmt(weightAt(data, step, j), 3)];
      const textW = Math.max(...lines.map((l) => ctx.measureText(l).width));
      const right = d.x + rMax + 4 + textW <= width - 2;
      ctx.textAlign = right ? "left" : "right";
      ctx.textBaseline = "middle";
      const lx = right ? d.x + rMax + 4 : d.x - rMax - 4;
      ctx.font = theme.font(LABEL_FONT);
      ctx.fillText(lines[0], lx, d.y - 8);
      ctx.font = theme.font(LABEL_FONT, "700");
      ctx.fillText(lines[1], lx, d.y + 8);
      ctx.font = theme.font(LABEL_FONT);
    }
    ctx.fillStyle = theme.fg;
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText("q", tip.x + 6, tip.y - 10);

    ctx.font = theme.font(13, "700"); // the temperature is the slider's, written beside it
    ctx.fillText(`answer = weights @ values = ${fmt(data.answers[step], 2)}`, 2, HEADER / 2);

    if (focused) {
      const d = dots[focus];
      ctx.strokeStyle = theme.fg;
      ctx.lineWidth = 2;
      ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.arc(d.x, d.y, rMax + 4, 0, 2 * Math.PI); ctx.stroke();
      ctx.setLineDash([]);
    }
    const tipKey = hover ?? (focused ? focus : null);
    if (tipKey !== null) {
      const d = dots[tipKey];
      drawTooltip(ctx, theme, describeKey(data, step, tipKey).replace(": ", ":\n"), d.x, d.y, width, LOOKUP_HEIGHT);
    }
    geometry = { rMax, dots, query: tip, origin: { x: frame.toX(0), y: frame.toY(0) }, scale: frame.scale, step };
  }

  function keyAt(ev) {
    if (!geometry) return null;
    const box = canvas.getBoundingClientRect();
    const x = ev.clientX - box.left;
    const y = ev.clientY - box.top;
    let best = null;
    let bestD = Math.max(geometry.rMax, 12); // a small dot is still easy to point at
    geometry.dots.forEach((d, j) => {
      const dist = Math.hypot(d.x - x, d.y - y);
      if (dist <= bestD) { best = j; bestD = dist; }
    });
    return best;
  }

  function label() {
    if (!data) return;
    canvas.dataset.step = String(step);
    canvas.dataset.focus = String(focus);
    canvas.setAttribute("aria-label", `Soft dictionary lookup of ${data.N} key${data.N > 1 ? "s" : ""}. ${describeLookup(data, step)} ` +
      `Focused: ${describeKey(data, step, focus)}. Arrow keys move between the keys.`);
  }

  function moveTo(j) {
    focus = j;
    label();
    life.request();
    options.onFocus?.(j);
  }

  const life = canvasLifecycle(canvas, {
    roleDescription: "soft dictionary lookup",
    render,
    height: () => LOOKUP_HEIGHT,
    handlers: {
      click: (ev) => { const j = keyAt(ev); if (j !== null) moveTo(j); },
      pointermove: (ev) => { const j = keyAt(ev); if (j !== hover) { hover = j; life.request(); } },
      pointerleave: () => { if (hover !== null) { hover = null; life.request(); } },
      keydown: (ev) => {
        if (!data) return;
        const next = stepFocus(focus, ev.key, data.N, ALONG_KEYS);
        if (next === null) return;
        ev.preventDefault();
        moveTo(next);
      },
      focus: () => { focused = true; life.request(); },
      blur: () => { focused = false; life.request(); },
    },
  });
  life.now();

  return {
    update(input) {
      if (life.destroyed) return;
      const checked = typeof input?.ok === "boolean" ? input : checkLookup(input); // checked already, or a payload
      hover = null;
      if (!checked.ok) { data = null; error = checked.message; life.now(); return; }
      data = checked;
      error = "";
      step = Math.min(step, data.n - 1);
      focus = Math.min(focus, data.N - 1);
      label();
      life.request();
    },
    /** Show the weights of grid step i (a temperature of the payload's grid). */
    setStep(i) {
      if (!data || !Number.isInteger(i)) return;
      step = Math.max(0, Math.min(data.n - 1, i));
      label();
      life.request();
    },
    /** Move the focus to key j without calling onFocus. */
    select(j) {
      if (!data || !Number.isInteger(j)) return;
      focus = Math.max(0, Math.min(data.N - 1, j));
      label();
      life.request();
    },
    focused: () => focus,
    /** layout(): geometry in CSS pixels for tests, {rMax, dots: [{x, y, r}], query, origin, scale, step}. */
    ...drawnApi(life, () => geometry),
  };
}

/** Whether a box {x, y, w, h} reaches into a circle {x, y, r}. */
export function boxMeetsCircle(box, c) {
  const nx = Math.max(box.x, Math.min(c.x, box.x + box.w));
  const ny = Math.max(box.y, Math.min(c.y, box.y + box.h));
  return Math.hypot(nx - c.x, ny - c.y) < c.r;
}

/** The two axes through the origin, with ticks and numbers at a readable step; a number that would sit inside
 *  a key's ring (`rings`, {x, y, r}) is left out, so it never reads as that key's label. */
function drawAxes(ctx, theme, frame, area, rings = []) {
  const ox = frame.toX(0);
  const oy = frame.toY(0);
  ctx.strokeStyle = theme.grid;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(area.left, Math.round(oy) + 0.5); ctx.lineTo(area.left + area.width, Math.round(oy) + 0.5);
  ctx.moveTo(Math.round(ox) + 0.5, area.top); ctx.lineTo(Math.round(ox) + 0.5, area.top + area.height);
  ctx.stroke();
  const unit = niceStep(frame.scale, 48);
  const digits = stepDecimals(unit);
  ctx.fillStyle = theme.muted;
  ctx.font = theme.font(10);
  const ticks = (lo, hi) => {
    const out = [];
    for (let k = Math.ceil(lo / unit); k <= Math.floor(hi / unit) && out.length < 40; k++) if (k !== 0) out.push(k * unit);
    return out;
  };
  const left = (area.left - ox) / frame.scale;
  const right = (area.left + area.width - ox) / frame.scale;
  const top = (oy - area.top) / frame.scale;
  const bottom = (oy - area.top - area.height) / frame.scale;
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const edge = 2 * area.left + area.width; // the canvas's width: the plot's padding is the same on both sides
  for (const v of ticks(left, right)) {
    const x = frame.toX(v);
    ctx.fillRect(Math.round(x), oy - 3, 1, 6);
    const text = fmt(v, digits);
    const half = ctx.measureText(text).width / 2;
    const box = { x: x - half, y: oy + 4, w: 2 * half, h: 10 };
    // a number cut at the edge misleads
    if (x - half >= 0 && x + half <= edge && !rings.some((c) => boxMeetsCircle(box, c))) ctx.fillText(text, x, oy + 4);
  }
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const v of ticks(bottom, top)) {
    const y = frame.toY(v);
    ctx.fillRect(ox - 3, Math.round(y), 6, 1);
    const text = fmt(v, digits);
    const w = ctx.measureText(text).width;
    if (!rings.some((c) => boxMeetsCircle({ x: ox - 5 - w, y: y - 5, w, h: 10 }, c))) ctx.fillText(text, ox - 5, y);
  }
}

/** The query: an arrow from the origin to (x1, y1). */
function drawArrow(ctx, theme, x0, y0, x1, y1) {
  const angle = Math.atan2(y1 - y0, x1 - x0);
  const head = Math.min(10, Math.hypot(x1 - x0, y1 - y0) / 2);
  ctx.strokeStyle = theme.fg;
  ctx.fillStyle = theme.fg;
  ctx.lineWidth = 2;
  ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1 - Math.cos(angle) * head * 0.8, y1 - Math.sin(angle) * head * 0.8); ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - head * Math.cos(angle - 0.45), y1 - head * Math.sin(angle - 0.45));
  ctx.lineTo(x1 - head * Math.cos(angle + 0.45), y1 - head * Math.sin(angle + 0.45));
  ctx.closePath();
  ctx.fill();
}
