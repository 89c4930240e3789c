// The ticks of a colour bar: round values whose labels, measured, fit under the bar without touching.
//
// A bar is 220 px wide beside a big matrix and 48 px in a thumbnail on a phone. Labels at fixed
// places (both ends and the middle) were written over one another in the narrow one ("0.000.501.00").
// Here the finest round step (1, 2 or 5 times a power of ten) whose labels keep a gap between them
// wins, so a narrow bar gets fewer ticks, never overlapping ones. Every label of one bar has the
// decimals of its step ("0.0 0.2 0.4"), so the labels read as one scale. Pure: no DOM.

/** Pixels of empty space between two neighbouring labels. */
export const TICK_GAP = 10;

/** No label is narrower than this (one digit and its gap): bounds how fine a step is worth trying. */
const NARROWEST_LABEL = 8;

const MANTISSAS = [1, 2, 5];

/** The bar's ticks for one step m·10^k: round values in [min, max], their labels and places. */
function ticksAt(min, max, length, measure, m, k) {
  const decimals = Math.max(0, -k);
  const step = m * 10 ** k;
  const first = Math.ceil(min / step - 1e-9);
  const last = Math.floor(max / step + 1e-9);
  const ticks = [];
  for (let i = first; i <= last; i++) {
    const value = Number((i * step).toFixed(decimals)) || 0; // no 0.30000000000000004, no −0
    const text = value.toFixed(decimals).replace("-", "−");
    const width = measure(text);
    const at = ((value - min) / (max - min)) * length;
    // A label centres on its tick, moved inwards where it would stick out past an end of the bar.
    const left = Math.min(Math.max(0, at - width / 2), length - width);
    ticks.push({ value, text, at, left, width });
  }
  return ticks;
}

/** Every label within the bar, each ending `gap` before the next begins. */
function fits(ticks, length, gap) {
  return ticks.every((t, i) => t.left >= 0 && t.left + t.width <= length &&
    (i === 0 || ticks[i - 1].left + ticks[i - 1].width + gap <= t.left));
}

/**
 * chooseTicks(min, max, length, measure, gap) -> [{value, text, at, left, width}], left to right.
 * min < max: the bar's range; length: its width in px; measure(text) -> a label's width in px.
 * at: the tick's offset along the bar; left: where its label starts. At least two ticks when two
 * fit; one when only one does; none when no label fits the bar at all.
 */
export function chooseTicks(min, max, length, measure, gap = TICK_GAP) {
  if (!(Number.isFinite(min) && Number.isFinite(max) && max > min && length > 0)) return [];
  const span = max - min;
  const finest = Math.floor(Math.log10((span * NARROWEST_LABEL) / length));
  const coarsest = Math.ceil(Math.log10(Math.max(Math.abs(min), Math.abs(max)))) + 1;
  let single = null;
  for (let k = finest; k <= coarsest; k++) {
    for (const m of MANTISSAS) {
      const ticks = ticksAt(min, max, length, measure, m, k);
      if (!ticks.length || !fits(ticks, length, gap)) continue;
      if (ticks.length >= 2) return ticks;
      single ??= ticks;
    }
  }
  return single ?? [];
}
