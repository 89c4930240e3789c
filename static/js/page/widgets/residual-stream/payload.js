// What the residual-stream widget is given, checked before it draws: the build's first payload, a live run's
// reply, or what a cell's show_residual_stream sent (lessonpy.course.block.show_stream, which told the reader what
// is wrong with their arrays already). This keeps a bad or old payload from breaking the chart: a problem becomes
// one sentence. Pure, no DOM: tests/js/residual-payload.test.mjs runs it under Node.
import { LIMITS } from "../../../shared/limits.js";

const MAX_LAYERS = LIMITS.widgets["residual-stream"].layers[1];

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
/** Whether `rows` is `count` lists of `width` finite numbers. */
const isGrid = (rows, count, width) =>
  Array.isArray(rows) && rows.length === count && rows.every((r) => Array.isArray(r) && r.length === width && r.every(isNumber));

/** One position's lens: `rows` rows of top tokens [token, p], a final token, a rank and a p per row; or a message. */
export function lensProblem(lens, rows) {
  if (!lens || typeof lens !== "object") return "it has no lens there";
  const pair = (x) => Array.isArray(x) && x.length === 2 && typeof x[0] === "string" && isNumber(x[1]) && x[1] >= 0 && x[1] <= 1;
  if (!Array.isArray(lens.top) || lens.top.length !== rows || !lens.top.every((r) => Array.isArray(r) && r.length && r.every(pair))) {
    return `the lens needs ${rows} rows of top tokens with their probabilities`;
  }
  if (typeof lens.final !== "string") return "the lens names no prediction";
  const ranks = lens.rank;
  if (!Array.isArray(ranks) || ranks.length !== rows || !ranks.every((r) => Number.isInteger(r) && r >= 0)) {
    return `the lens needs ${rows} ranks`;
  }
  if (!Array.isArray(lens.p) || lens.p.length !== rows || !lens.p.every((p) => isNumber(p) && p >= 0 && p <= 1)) {
    return `the lens needs ${rows} probabilities`;
  }
  return null;
}

/**
 * checkStreamPayload(payload) -> {ok: true} or {ok: false, message}: tokens (T strings), layers (L, 1 to the spec's
 * limit), norms {attn, mlp: L rows of T, stream: L + 1 rows of T} (lengths: finite, not negative), position (0 to
 * T - 1) and lens {position: {top, final, rank, p}} with a row per depth at every position it holds, the shown one
 * among them. A payload carrying `error` (show_residual_stream's refusal) fails with that message.
 */
export function checkStreamPayload(payload) {
  const fail = (why) => ({ ok: false, message: `Cannot draw the residual stream: ${why}.` });
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return fail("expected a payload object");
  if (typeof payload.error === "string" && payload.error) return { ok: false, message: payload.error };
  const { tokens, layers, norms, lens, position } = payload;
  if (!Array.isArray(tokens) || !tokens.length || !tokens.every((t) => typeof t === "string")) return fail("expected a list of tokens");
  const T = tokens.length;
  if (!Number.isInteger(layers) || layers < 1 || layers > MAX_LAYERS) return fail(`expected 1 to ${MAX_LAYERS} layers, got ${layers}`);
  if (!norms || typeof norms !== "object") return fail("it has no lengths");
  for (const [name, rows] of [["attn", layers], ["mlp", layers], ["stream", layers + 1]]) {
    if (!isGrid(norms[name], rows, T) || norms[name].some((r) => r.some((v) => v < 0))) {
      return fail(`the lengths ${name} need ${rows} rows of ${T} numbers, none negative`);
    }
  }
  if (!Number.isInteger(position) || position < 0 || position >= T) return fail(`position ${position} is not one of the ${T} tokens`);
  if (!lens || typeof lens !== "object" || !lens[String(position)]) return fail(`it has no lens at position ${position}`);
  for (const [at, one] of Object.entries(lens)) {
    const problem = lensProblem(one, layers + 1);
    if (problem) return fail(`at position ${at}, ${problem}`);
  }
  return { ok: true };
}
