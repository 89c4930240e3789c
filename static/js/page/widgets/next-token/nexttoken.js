// "What comes next?": SmolLM2-135M on the reader's text, in Python (lessonpy.models.next_token.predict). The
// weights (97.7 MB) are downloaded only when the reader presses Run (live-download.js), with progress and Stop.
// It shows the top next tokens as bars; a row of the text's tokens where each position shows what the model
// predicted there against the token that came next, with that token's loss (the shifted targets); every head's
// pattern for the picked position (the grid of components/headgrid.js, and the position's row in every head of
// a layer, components/headstrip.js); and heads knocked out (clicked in the grid, or the preset's buttons), with
// the prediction before and after. Generate writes after the text (lessonpy.models.generate: greedy, or sampled
// with a temperature and a seed), a call at a time so the tokens show as they come, with the KV cache or without,
// and shows the two ways' seconds per token side by side. The reader's own causal_attention and decode_step (cells
// of Lesson 5) can run instead of the lesson's. Python computes every number; this file draws them.
import { createHeadGrid } from "../../components/headgrid.js";
import { createHeadStrip } from "../../components/headstrip.js";
import { el, labelled, num, pythonNote, watchPython } from "../common.js";
import { STOPPED, downloadBar, liveRunner } from "../live-download.js";

// The memory a run adds per byte downloaded, as the browsers measured it (docs/speed.md, "Now: the blocks as the
// file packs them"): 380 to 421 MB at the peak of a run, a second run and a generation on 32 tokens for the
// 97.7 MB (Python's wasm memory 184 MB of it), and a 64-token text, the most, grows Python's part by about 30 MB
// more, so "up to about 500 MB".
const LIVE_MEMORY_PER_BYTE = 5;
// The most characters the text box holds: Python bounds the tokens (next_token.MAX_TOKENS) and says so.
const TEXT_CHARS = 600;
const KINDS = {
  mean: "mean-ablated: its output replaced by its average over the text, so only what depends on the token is lost",
  off: "switched off: its output replaced by zeros, as if the head were removed",
};

const headName = ({ layer, head }) => `layer ${layer}, head ${head}`;
/** A token as the reader can see it: spaces shown as ␣, line ends as ⏎. */
const shown = (token) => (token ?? "").replace(/ /g, "␣").replace(/\n/g, "⏎");

export function createNextToken({ section, spec, runtime, calls }) {
  const o = spec.options;
  const available = Boolean(o.live_files);
  const row = el("div", "widget-controls");
  const input = el("textarea", "nexttoken-text");
  input.rows = 3;
  input.maxLength = TEXT_CHARS;
  input.value = o.preset ?? "";
  labelled(row, input, "Your text");
  const runButton = el("button", "nexttoken-run", "Run SmolLM2");
  runButton.type = "button";
  const stopButton = el("button", "nexttoken-stop", "Stop");
  stopButton.type = "button";
  stopButton.hidden = true;
  const presetButton = el("button", "nexttoken-preset", "Repeated random tokens (the preset)");
  presetButton.type = "button";
  const buttons = el("div", "widget-controls");
  buttons.append(runButton, stopButton, presetButton);
  const mineRow = el("div", "widget-controls");
  const mineBox = Object.assign(el("input", "nexttoken-mine"), { type: "checkbox" });
  labelled(mineRow, mineBox, "Use my own causal_attention (for every full pass) and decode_step (for each " +
    "step with the cache), from the cells above I ran", { after: true });
  const bar = downloadBar("nexttoken-progress", "SmolLM2");
  const status = el("p", "widget-status nexttoken-status");
  status.setAttribute("role", "status");

  // knock-outs: how, the list, the preset's buttons
  const knockBox = el("div", "nexttoken-knock");
  knockBox.append(el("h5", "", "Knock heads out"));
  const kindRow = el("div", "widget-controls");
  const kindSelect = el("select", "nexttoken-kind");
  for (const [value, label] of Object.entries(KINDS)) {
    const opt = el("option", "", `${value}: ${label}`);
    opt.value = value;
    kindSelect.append(opt);
  }
  labelled(kindRow, kindSelect, "How");
  const inductionButton = el("button", "nexttoken-knock-induction", "Knock out the induction and previous-token heads");
  const sinkButton = el("button", "nexttoken-knock-sink", "Knock out the sink head");
  const clearButton = el("button", "nexttoken-knock-clear", "Knock out none");
  for (const b of [inductionButton, sinkButton, clearButton]) b.type = "button";
  const presetRow = el("div", "widget-controls");
  presetRow.append(inductionButton, sinkButton, clearButton);
  const knockNote = el("p", "nexttoken-knock-note");
  knockNote.setAttribute("aria-live", "polite");
  knockBox.append(el("p", "nexttoken-help", "Click a head in the grid below to add it or take it away; the next run " +
    "knocks out every head listed. Mean-ablation is the fairer test: a head's average output is a constant the " +
    "layers after it may count on, and it is kept; switching it off takes that away too."), kindRow, presetRow, knockNote);

  const topHeading = el("h5", "nexttoken-top-title", "Top next tokens after your text, as trained");
  const topList = el("ol", "nexttoken-top");
  const knockedHeading = el("h5", "nexttoken-knocked-title");
  const knockedList = el("ol", "nexttoken-top nexttoken-top-knocked");
  const posHeading = el("h5", "", "Pick a position: what the model predicted there, and what came next");
  const tokenRow = el("div", "nexttoken-tokens");
  tokenRow.setAttribute("role", "listbox");
  tokenRow.setAttribute("aria-label", "The text's tokens");
  const tokenKey = el("p", "nexttoken-key");
  const posNote = el("p", "nexttoken-position");
  posNote.setAttribute("aria-live", "polite");
  const gridFigure = el("figure", "nexttoken-grid");
  const gridCanvas = el("canvas");
  const gridCaption = el("figcaption");
  gridFigure.append(gridCanvas, gridCaption);
  const stripHeading = el("h5", "nexttoken-strip-title");
  const stripFigure = el("figure", "nexttoken-strip");
  const stripCanvas = el("canvas");
  stripFigure.append(stripCanvas, el("figcaption", "", "The picked position's attention in every head of the layer " +
    "of the head last clicked (dark 0, yellow 1); grey keys come after it, which a causal model never sees."));
  // generation: how tokens are chosen, the cache or not, Generate; the text as it comes; the two ways' timings
  const genBox = el("div", "nexttoken-generate");
  genBox.append(el("h5", "", "Generate after your text"));
  const genRow = el("div", "widget-controls");
  const chooseSelect = el("select", "nexttoken-choose");
  for (const [value, label] of [["greedy", "greedy: the most likely token"], ["sample", "sample with a temperature"]]) {
    const opt = el("option", "", label);
    opt.value = value;
    chooseSelect.append(opt);
  }
  labelled(genRow, chooseSelect, "Choose each token by");
  const temperatureInput = Object.assign(el("input", "nexttoken-temperature"),
    { type: "number", min: "0.1", max: String(o.max_temperature ?? 2), step: "0.1", value: "0.8", disabled: true });
  labelled(genRow, temperatureInput, "Temperature");
  const seedInput = Object.assign(el("input", "nexttoken-seed"),
    { type: "number", min: "0", max: String(o.max_seed ?? 0), step: "1", value: "0", disabled: true });
  labelled(genRow, seedInput, "Seed");
  const waySelect = el("select", "nexttoken-way");
  for (const [value, label] of [["cache", "with the KV cache: each new token alone"],
    ["full", "without: the whole text again for every token"]]) {
    const opt = el("option", "", label);
    opt.value = value;
    waySelect.append(opt);
  }
  labelled(genRow, waySelect, "Run");
  const countInput = Object.assign(el("input", "nexttoken-count"),
    { type: "number", min: "1", max: String(o.max_new_tokens ?? 1), step: "1", value: String(Math.min(10, o.max_new_tokens ?? 1)) });
  labelled(genRow, countInput, "New tokens");
  const generateButton = el("button", "nexttoken-generate-run", "Generate");
  generateButton.type = "button";
  const genButtons = el("div", "widget-controls");
  genButtons.append(generateButton);
  // not a live region: it is rewritten at every chunk, and the status line says how far the run is; the text is
  // read out once, in the status, when the run ends
  const generated = el("p", "nexttoken-generated");
  generated.hidden = true;
  const timings = el("table", "nexttoken-timings");
  timings.hidden = true;
  const timingsNote = el("p", "nexttoken-timings-note");
  timingsNote.setAttribute("aria-live", "polite");
  genBox.append(el("p", "nexttoken-help", `Up to ${o.max_new_tokens ?? ""} new tokens, shown as they come; Stop ends ` +
    "it at any time. Knocked-out heads stay knocked out, switched off (a step with the cache reads one position, " +
    "where mean-ablation would change nothing). Both ways first read your text in one pass; then each new token " +
    "is timed."), genRow, genButtons, generated, timings, timingsNote);
  chooseSelect.addEventListener("change", () => {
    temperatureInput.disabled = seedInput.disabled = chooseSelect.value === "greedy";
  });

  const results = el("div", "nexttoken-results");
  results.hidden = true;
  results.append(topHeading, topList, knockedHeading, knockedList, posHeading, tokenRow, tokenKey, posNote, gridFigure, stripHeading, stripFigure);
  section.append(row, buttons, mineRow, bar, status, knockBox, genBox, results);

  let knocked = []; // [{layer, head}] the next run knocks out
  let reply = null; // the last run's numbers
  let position = 0;
  let layer = 0;
  const isKnocked = (h) => knocked.some((k) => k.layer === h.layer && k.head === h.head);
  const grid = createHeadGrid(gridCanvas, {
    onSelect: (h) => { layer = h.layer; toggle(h); showPosition(); },
    describe: (h) => `${headName(h)}${isKnocked(h) ? " (to be knocked out)" : ""}`,
  });
  const strip = createHeadStrip(stripCanvas, { onSelect: (h) => { toggle(h); } });

  function showKnocked() {
    knockNote.textContent = knocked.length
      ? `The next run knocks out ${knocked.map(headName).join("; ")} (${kindSelect.value}).`
      : "No head is knocked out: the model runs as trained.";
    section.dataset.knocked = String(knocked.length);
    if (reply?.arrays.weights) grid.update({ weights: reply.arrays.weights, causal: true, changed: knocked.map((k) => ({ ...k, change: "off" })) });
  }
  function toggle(h) {
    knocked = isKnocked(h) ? knocked.filter((k) => k.layer !== h.layer || k.head !== h.head) : [...knocked, { layer: h.layer, head: h.head }];
    showKnocked();
  }
  const setHeads = (list) => { knocked = list.map(([l, h]) => ({ layer: l, head: h })); kindSelect.value = "mean"; showKnocked(); };
  inductionButton.addEventListener("click", () => setHeads(o.preset_heads.induction));
  sinkButton.addEventListener("click", () => setHeads(o.preset_heads.sink));
  clearButton.addEventListener("click", () => setHeads([]));
  kindSelect.addEventListener("change", showKnocked);
  presetButton.addEventListener("click", () => { input.value = o.preset ?? ""; input.focus(); });
  presetButton.hidden = !o.preset;
  showKnocked();

  /** One list of bars: the top next tokens of one pass, {token, p}. */
  function bars(list, top) {
    list.textContent = "";
    for (const t of top) {
      const item = el("li", "nexttoken-bar");
      const fill = el("span", "nexttoken-fill");
      fill.style.width = `${(100 * t.p).toFixed(1)}%`;
      const track = el("span", "nexttoken-track");
      track.append(fill);
      item.append(el("span", "nexttoken-token", shown(t.token)), track, el("span", "nexttoken-p", num(t.p, 3)));
      list.append(item);
    }
  }

  function showTop() {
    bars(topList, reply.trained.top);
    knockedHeading.hidden = knockedList.hidden = !reply.knocked;
    if (reply.knocked) {
      bars(knockedList, reply.knocked.top);
      knockedHeading.textContent = `With ${reply.knock.map(([l, h]) => headName({ layer: l, head: h })).join("; ")} ` +
        `knocked out (${reply.knock[0][2]})`;
    }
    const top = (reply.knocked ?? reply.trained).top[0];
    section.dataset.top = top.token;
    section.dataset.topP = String(top.p);
    section.dataset.trainedTopP = String(reply.trained.top[0].p);
  }

  function showTokens() {
    tokenRow.textContent = "";
    reply.tokens.forEach((token, t) => {
      const b = el("button", "nexttoken-tok", shown(token));
      b.type = "button";
      b.setAttribute("role", "option");
      b.classList.toggle("right", reply.trained.predicted[t] === reply.ids[t + 1]);
      // the next token's loss rose by more than a nat with the heads knocked out
      b.classList.toggle("worse", Boolean(reply.knocked) && reply.knocked.loss[t] - reply.trained.loss[t] > 1);
      b.addEventListener("click", () => { position = t; showPosition(); });
      b.addEventListener("keydown", (ev) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
        if (!step) return;
        ev.preventDefault();
        position = Math.max(0, Math.min(reply.tokens.length - 1, position + step));
        showPosition();
        tokenRow.children[position].focus();
      });
      tokenRow.append(b);
    });
    const worse = reply.knocked ? reply.knocked.loss.filter((x, t) => x - reply.trained.loss[t] > 1).length : 0;
    tokenKey.textContent = "Underlined in green: the model, as trained, predicted the token that came next." +
      (reply.knocked ? ` Framed in red: that token's loss rose by more than 1 nat with the heads knocked out (${worse} of ${reply.trained.loss.length}).` : "") +
      " Click a token, or use Left and Right, to see its numbers.";
    section.dataset.worse = String(worse);
  }

  function showPosition() {
    if (!reply) return;
    [...tokenRow.children].forEach((b, t) => {
      b.setAttribute("aria-selected", String(t === position));
      b.tabIndex = t === position ? 0 : -1;
    });
    const { trained } = reply;
    const next = reply.targets[position];
    let text = `At ${shown(reply.tokens[position])} (position ${position}) the model predicts ${shown(trained.predicted_tokens[position])} ` +
      `(p ${num(trained.p_predicted[position], 3)}); `;
    text += next == null ? "nothing came next: the top tokens above are its guesses." : `next came ${shown(next)}: ` +
      `p ${num(trained.p_next[position], 3)}, loss ${num(trained.loss[position], 2)} nats`;
    if (reply.knocked && next != null) {
      const k = reply.knocked;
      text += `; knocked out it predicts ${shown(k.predicted_tokens[position])}, and ${shown(next)} gets p ` +
        `${num(k.p_next[position], 3)}, loss ${num(k.loss[position], 2)} (${k.loss[position] >= trained.loss[position] ? "+" : ""}` +
        `${num(k.loss[position] - trained.loss[position], 2)}).`;
    } else if (next != null) text += ".";
    posNote.textContent = text;
    section.dataset.position = String(position);
    if (!reply.arrays.weights) return; // the reader's causal_attention returns no weights: no patterns to draw
    strip.update({ weights: reply.arrays.weights, tokens: reply.tokens.map(shown), causal: true, layer, query: position, heads: reply.heads });
    stripHeading.textContent = `Position ${position} in every head of layer ${layer}`;
  }

  function show(next) {
    // a new text opens at its last position, the one whose next token is the question; the same text keeps the picked one
    const same = reply && reply.ids.join() === next.ids.join();
    reply = next;
    if (!same) position = reply.tokens.length - 1;
    results.hidden = false;
    showTop();
    showTokens();
    showKnocked();
    gridFigure.hidden = stripHeading.hidden = stripFigure.hidden = !reply.arrays.weights;
    const lossMean = (s) => s.loss.reduce((a, b) => a + b, 0) / s.loss.length;
    gridCaption.textContent = `SmolLM2's ${reply.layers * reply.heads} heads on your text: ${reply.layers} layers (rows) × ` +
      `${reply.heads} heads (columns), counted from 0; grey above the diagonal (a causal model never looks ahead). ` +
      "Crossed heads are knocked out in the next run; click one to add or remove it." +
      (reply.knocked ? " These patterns are the knocked-out model's." : "");
    const yours = reply.attention === "yours" ? " Your causal_attention ran every head (it returns no weights, so " +
      "no patterns are drawn)." : "";
    showPosition();
    return (reply.knocked
      ? ` Mean loss per token ${num(lossMean(reply.trained), 2)} nats as trained, ${num(lossMean(reply.knocked), 2)} knocked out.`
      : ` Mean loss per token ${num(lossMean(reply.trained), 2)} nats.`) + yours;
  }

  const say = (text, state) => { status.textContent = text; section.dataset.state = state; };
  if (available) {
    const bytes = Object.values(o.live_files).reduce((sum, { size }) => sum + size, 0);
    say(`The first run downloads SmolLM2-135M's 4-bit weights and tokenizer (${num(bytes / 1e6, 1)} MB), once: your ` +
      `browser keeps them. Running it takes up to about ${num(Math.ceil((bytes * LIVE_MEMORY_PER_BYTE) / 1e8) * 100, 0)} MB ` +
      "more of this device's memory, and a pass takes seconds. The forward pass is lessonpy/models/smollm2.py, plain NumPy.", "idle");
  } else {
    say("This site was built without SmolLM2's live weights, so the model cannot run here (built with " +
      "--no-live-model, or offline).", "absent");
    runButton.disabled = input.disabled = generateButton.disabled = true;
  }
  let pythonReady = false;
  watchPython(runtime, (state) => { pythonReady = !pythonNote(state); });

  const mine = () => (mineBox.checked ? ["causal_attention", "decode_step"] : []);
  const busy = liveRunner({
    runtime, filesCall: calls.files, options: o, bar, say, section, buttons: [runButton, generateButton], stopButton,
    preparing: () => (pythonReady ? "Getting SmolLM2's files…" : "Waiting for Python…"),
  });

  const run = () => busy(runButton, async (signal, notes) => {
    say(knocked.length ? `Running SmolLM2 in Python with ${knocked.length} head${knocked.length === 1 ? "" : "s"} knocked out…`
      : "Running SmolLM2 in Python…", "running");
    const answer = await runtime.call(...calls.predict, {
      text: input.value, knock: knocked.map((k) => [k.layer, k.head, kindSelect.value]), target: spec.id,
      mine: mine(), cells: o.reader_cells }, { signal });
    const extra = show(answer);
    section.dataset.seconds = String(answer.seconds); // the pass's own time in Python (bench/engines.py reads it)
    say(`SmolLM2 read your ${answer.tokens.length - 1} tokens (after <|endoftext|>, as every document starts) in ` +
      `${num(answer.seconds, 1)} s, NumPy in your browser.${extra}${notes.map((t) => ` ${t}`).join("")}`, "done");
  }, { failed: "SmolLM2 could not run: " });

  // ---- generation
  let made = null; // the last generation's reply: its tokens stay shown after a Stop
  const WAY = { cache: "with the KV cache", full: "without the cache" };
  const perToken = (t) => `${num(t.seconds_per_token, 2)} s per token (${t.steps} step${t.steps === 1 ? "" : "s"})`;

  function showGenerated(g) {
    made = g;
    generated.hidden = false;
    generated.textContent = "";
    const mark = el("mark", "nexttoken-new", g.text);
    generated.append(el("span", "nexttoken-prompt", g.prompt_text), mark);
    section.dataset.generated = g.text;
    section.dataset.made = String(g.made);
    const rows = Object.entries(WAY).filter(([way]) => g.timings[way]);
    timings.hidden = !rows.length;
    timings.textContent = "";
    if (rows.length) {
      const caption = el("caption", "", "Seconds per new token on this text, after the pass over it");
      const head = el("tr");
      const body = el("tr");
      for (const [way, label] of rows) {
        head.append(Object.assign(el("th", "", label), { scope: "col" }));
        body.append(el("td", `nexttoken-timing-${way}`, perToken(g.timings[way])));
      }
      timings.append(caption, head, body);
    }
    section.dataset.timings = rows.map(([way]) => way).join(" ");
    for (const [way] of rows) section.dataset[`perToken${way === "cache" ? "Cache" : "Full"}`] = String(g.timings[way].seconds_per_token);
    timingsNote.textContent = g.speedup == null
      ? (rows.length === 1 ? `Generate ${g.timings.cache ? "without" : "with"} the cache too to compare the two ways.` : "")
      : `Without the cache each new token took ${num(g.speedup, 1)} times as long as with it: it reran the whole ` +
        "text so far through every layer, where the cache let the new token go through alone.";
  }

  function generatingSays(g) {
    const how = g.temperature ? `sampled at temperature ${num(g.temperature, 2)}, seed ${g.seed}` : "greedy";
    const yours = Object.entries(g.functions).filter(([, who]) => who === "yours").map(([name]) => name);
    const theirs = yours.length ? `, your ${yours.join(" and ")}` : "";
    return `${g.made} of ${g.limit} tokens ${WAY[g.way]} (${how}${theirs})`;
  }

  const generateRun = () => busy(generateButton, async (signal, notes) => {
    const sampled = chooseSelect.value === "sample";
    say("Generating: reading your text first…", "generating");
    let g = await runtime.call(...calls.generate, {
      text: input.value, cache: waySelect.value === "cache", temperature: sampled ? Number(temperatureInput.value) : 0,
      seed: sampled ? Number(seedInput.value) : 0, new_tokens: Number(countInput.value),
      knock: knocked.map((k) => [k.layer, k.head, "off"]), mine: mine(), cells: o.reader_cells, target: spec.id }, { signal });
    made = null; // a new run: the last one's text stays until this one has tokens, or a bad option is refused
    generated.hidden = true;
    while (!g.done) {
      g = await runtime.call(...calls.more, { run: g.run, target: spec.id }, { signal });
      showGenerated(g);
      say(`Generating: ${generatingSays(g)}…`, "generating");
    }
    const first = `reading your text took ${num(g.first_seconds, 1)} s`;
    say(`Generated ${generatingSays(g)}: ${first}. The new text: “${g.text}”.${notes.map((t) => ` ${t}`).join("")}`, "generated");
  }, {
    failed: "SmolLM2 could not generate: ",
    stopped: () => {
      if (!made?.made) return STOPPED;
      const kept = made.made === 1 ? "the token made before it stays" : `the ${made.made} tokens made before it stay`;
      return `Stopped: ${kept} shown. Generate starts again from your text.`;
    },
  });

  runButton.addEventListener("click", run);
  generateButton.addEventListener("click", generateRun);
  input.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); } });
  return { grid, strip };
}
