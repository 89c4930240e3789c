// The residual stream of SmolLM2-135M, layer by layer, at one position the reader picks: what each layer's
// attention and MLP add to the stream (the lengths of their writes), the stream's own length, and the logit lens
// (the final RMSNorm and the tied embedding applied to the stream after each layer), its top tokens.
// First the lesson's sentence, every position computed by the build (lessonpy.course.block.residual_stream, from a
// committed file: no weights needed); then the reader's own text, once the live SmolLM2 is here: "Run SmolLM2"
// fetches its files and runs as the next-token panel does (live-download.js liveRunner), and Python computes the
// same numbers (residual_stream.stream), a position's lens when it is picked. Or the reader's own arrays: a cell's
// show_residual_stream (lessonpy.course.block.show_stream) sends the same numbers of the stream and writes it
// computed (receive), and a position picked then has its lens read from that stream, kept in Python (calls.lens).
// This file draws: the chart (layers.js), a sentence of the picked layer's numbers, and every layer's numbers in a
// table behind a disclosure; what it is given is checked first (payload.js).
import { createListTable } from "../../components/table.js";
import { lineAround } from "../../line.js";
import { createCaller, el, labelled, num, pythonMessage, pythonNote, watchPython } from "../common.js";
import { downloadBar, liveRunner } from "../live-download.js";
import { createLayerChart, describeRow, probability, rowName, tokenText } from "./layers.js";
import { checkStreamPayload, lensProblem } from "./payload.js";

// The most characters the text box holds: Python bounds the tokens (next_token.MAX_TOKENS) and says so.
const TEXT_CHARS = 600;
const COLUMNS = ["Depth", "Attention wrote", "MLP wrote", "Stream's length", "Lens: top tokens (p)", "p of the prediction"];

export function createResidualStream({ section, spec, runtime, calls, initial }) {
  const first = checkStreamPayload(initial);
  if (!first.ok) throw new Error(first.message); // the loader says it in the widget's place
  const o = spec.options;
  const available = Boolean(o.live_files);
  const controls = el("div", "widget-controls");
  const input = el("textarea", "residual-text");
  input.rows = 2;
  input.maxLength = TEXT_CHARS;
  input.value = initial.text;
  labelled(controls, input, "Your text");
  const runButton = Object.assign(el("button", "residual-run", "Run SmolLM2"), { type: "button" });
  const stopButton = Object.assign(el("button", "residual-stop", "Stop"), { type: "button", hidden: true });
  const buttons = el("div", "widget-controls");
  buttons.append(runButton, stopButton);
  const bar = downloadBar("residual-progress", "SmolLM2");
  const status = el("p", "widget-status residual-status");
  status.setAttribute("role", "status");

  const posHeading = el("h5", "residual-heading", "Pick a position (Left and Right move along the text)");
  const tokenRow = el("div", "residual-tokens");
  tokenRow.setAttribute("role", "listbox");
  tokenRow.setAttribute("aria-label", "The text's tokens: the position whose stream is shown");
  const figure = el("figure", "residual-chart");
  const canvas = el("canvas");
  const caption = el("figcaption");
  figure.append(canvas, caption);
  const picked = el("p", "residual-picked");
  picked.setAttribute("aria-live", "polite");
  const details = el("details", "residual-table");
  details.append(el("summary", "", "Show every layer's numbers as a table"));
  section.append(controls, buttons, bar, status, posHeading, tokenRow, figure, picked, details);
  // lengths to 0.1 (the file keeps 4 significant digits: 3 decimals would show digits it does not hold)
  const table = createListTable(details, { caption: "The residual stream, layer by layer", columns: COLUMNS,
    digits: [0, 1, 1, 1, 0, 3] });

  let data = initial; // the numbers shown: the build's, the last live run's, or a cell's arrays (data.reader)
  let sender = null; // the cell that sent the arrays shown, as the reader sees its name
  let position = initial.position;
  const chart = createLayerChart(canvas, { onSelect: () => showRow() });

  /** The chart's rows at the shown position: the embedding's, then each layer's. */
  function rowsAt(at) {
    const { norms, lens } = data;
    const here = lens[String(at)];
    return norms.stream.map((s, r) => ({
      attn: r ? norms.attn[r - 1][at] : null, mlp: r ? norms.mlp[r - 1][at] : null, stream: s[at], top: here.top[r],
      rank: here.rank[r], p: here.p[r],
    }));
  }

  function showRow() {
    const rows = rowsAt(position);
    const r = chart.selected();
    picked.textContent = `${describeRow(rows, r)}; the prediction ${tokenText(data.lens[String(position)].final)} ` +
      (rows[r].rank === 0 ? "leads here" : `ranks ${rows[r].rank + 1} here, p ${probability(rows[r].p)}`) + ".";
    section.dataset.row = String(r);
  }

  function showTokens() {
    tokenRow.textContent = "";
    data.tokens.forEach((token, t) => {
      const b = Object.assign(el("button", "residual-tok", tokenText(token)), { type: "button" });
      b.setAttribute("role", "option");
      b.addEventListener("click", () => pick(t));
      b.addEventListener("keydown", (ev) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
        if (!step) return;
        ev.preventDefault();
        pick(Math.max(0, Math.min(data.tokens.length - 1, position + step)));
      });
      tokenRow.append(b);
    });
  }

  /** Draw the shown position: the tokens' row, the chart, the sentence, the table, the caption. */
  function show() {
    const inRow = tokenRow.contains(document.activeElement); // a position picked there: the focus follows it
    [...tokenRow.children].forEach((b, t) => {
      b.setAttribute("aria-selected", String(t === position));
      b.tabIndex = t === position ? 0 : -1;
    });
    if (inRow) tokenRow.children[position].focus();
    const rows = rowsAt(position);
    const final = data.lens[String(position)].final;
    chart.update(rows, final);
    const whose = data.reader ? `${data.title ? `${data.title}: y` : "Y"}our arrays${sender ? ` from ${sender}` : ""}`
      : data.live ? "Your text" : "The lesson's sentence";
    caption.textContent = `${whose} at ${tokenText(data.tokens[position])} (position ${position} of ` +
      `${data.tokens.length}${data.reader ? "" : ", after the start token <|endoftext|>"}): for the embedding and ` +
      `each of ${data.layers} layers (counted from 0), the lengths (L2 norms, log scale) of what its attention and its ` +
      "MLP added to the stream and of the stream after it; at the right, the logit lens's top token there (the " +
      "embedding's row is read through the matrix it came from, the output matrix being the embedding itself, so a " +
      "common word often reads as itself). In bold " +
      `colour, ${tokenText(final)}, what the whole model predicts after this token. Only the last layer was trained ` +
      "to be read this way: an early layer's lens says what the final norm and embedding make of its stream, not " +
      "what the model “thinks” there.";
    table.update(rows.map((row, r) => [rowName(r), row.attn, row.mlp, row.stream,
      row.top.map(([t, p]) => `${tokenText(t)} (${num(p, 3)})`).join(", "), row.p]),
    `The residual stream at ${tokenText(data.tokens[position])} (position ${position}), layer by layer`);
    Object.assign(section.dataset, { position: String(position), final, live: String(Boolean(data.live)),
      reader: String(Boolean(data.reader)) });
    showRow();
  }

  const say = (text, state) => { status.textContent = text; section.dataset.state = state; };
  let pythonReady = false;
  watchPython(runtime, (state) => { pythonReady = !pythonNote(state); });
  const busy = liveRunner({
    runtime, filesCall: calls.files, options: o, bar, say, section, buttons: [runButton], stopButton,
    preparing: () => (pythonReady ? "Getting SmolLM2's files…" : "Waiting for Python…"),
  });
  /** Ask Python for *text*'s numbers, the lens at *at* (null: the last), the live files fetched first if needed. */
  const compute = (text, at) => busy(runButton, async (signal, notes) => {
    say("Running SmolLM2 in Python…", "running");
    const reply = await runtime.call(...calls.stream, { text, position: at, target: spec.id }, { signal });
    const checked = checkStreamPayload(reply);
    if (!checked.ok) throw new Error(checked.message);
    const same = data.live && data.tokens.join("\u0000") === reply.tokens.join("\u0000");
    data = same ? { ...reply, lens: { ...data.lens, ...reply.lens } } : reply;
    if (!same) showTokens();
    position = reply.position;
    show();
    section.dataset.seconds = String(reply.seconds);
    const did = reply.pass ? `SmolLM2 read your ${reply.tokens.length - 1} tokens (after <|endoftext|>) and read the ` +
      `lens at position ${position}` : `The lens at position ${position}, on the stream kept from the run,`;
    say(`${did} in ${num(reply.seconds, 1)} s, NumPy in your browser.${notes.map((t) => ` ${t}`).join("")}`, "done");
  }, { failed: "SmolLM2 could not run: " });

  // A cell's arrays: another position's lens, read in Python from the stream the cell sent (kept there, named by
  // its key). A reply for arrays no longer shown (another cell's since) is dropped.
  const lensCaller = createCaller(runtime, calls.lens, {
    delay: 0,
    onBusy: (on) => { if (on) say("Reading the lens there from your stream, in Python…", "running"); },
    onResult(reply) {
      if (!data.reader || reply?.key !== data.key) return;
      const lens = reply.lens?.[String(reply.position)];
      const problem = lensProblem(lens, data.layers + 1);
      if (problem) { say(`The lens could not be drawn: ${problem}.`, "error"); return; }
      data = { ...data, lens: { ...data.lens, [String(reply.position)]: lens } };
      position = reply.position;
      show();
      say(`The lens at position ${position}, read from your stream${sender ? ` (from ${sender})` : ""}.`, "done");
    },
    onError(err) {
      const message = pythonMessage(err).replace(/[.!?]?\s*$/, ".");
      say(lineAround("The lens could not be read: ", message, " What is shown is the position before."), "error");
    },
    onStopped() { say("Stopped: the position before is shown. Pick a position to read its lens.", "stopped"); },
  });
  lensCaller.stopButton.classList.add("residual-lens-stop");
  buttons.append(lensCaller.stopButton);

  /** Show position *t*: at once when its lens is here (the build's sentence has every position), else from Python
   *  (the focus, in the tokens' row, moves when it comes: show). */
  function pick(t) {
    if (data.lens[String(t)]) {
      position = t;
      show();
    } else if (data.reader) lensCaller.request({ key: data.key, position: t, target: spec.id });
    else compute(data.text, t);
  }

  if (available) {
    const bytes = Object.values(o.live_files).reduce((sum, { size }) => sum + size, 0);
    say(`The lesson's sentence, computed when the page was built. Run SmolLM2 on your own text: the first run ` +
      `downloads its weights and tokenizer (${num(bytes / 1e6, 1)} MB) once, as "What comes next?" does.`, "idle");
  } else {
    say("The lesson's sentence, computed when the page was built. This site has no live SmolLM2, so your own text " +
      "cannot run here (built with --no-live-model, or offline).", "absent");
    runButton.disabled = input.disabled = true;
  }
  runButton.addEventListener("click", () => compute(input.value, null));
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); compute(input.value, null); }
  });
  chart.select(initial.layers); // the last layer's stream first: the model's own prediction
  showTokens();
  show();
  return {
    chart, table,
    /** What a cell's show_residual_stream sent (route: widget-loader.js's note and the sending cell's name). */
    receive(payload, { note = "", sender: from = null } = {}) {
      section.dataset.updated = String((Number(section.dataset.updated) || 0) + 1);
      const who = from ?? "a cell";
      const checked = checkStreamPayload(payload);
      if (!checked.ok) {
        say(lineAround(`${who} sent arrays that cannot be drawn: `, checked.message, ` What is shown is from before.${note ? ` ${note}` : ""}`), "error");
        return;
      }
      const sameTokens = data.tokens.join("\u0000") === payload.tokens.join("\u0000");
      sender = from;
      data = { ...payload, reader: true };
      position = payload.position;
      if (!sameTokens) showTokens();
      chart.select(payload.layers); // its last layer first, as at the start: the model's own prediction
      show();
      say(`Showing your arrays, from ${who}: the lengths of your stream and of your writes, and the lens read from ` +
        `your stream with the model's final norm and embedding. Pick a position to read its lens there.${note ? ` ${note}` : ""}`, "arrays");
    },
  };
}
