// Step-through of attention on already-computed arrays: the score rows of Q·Kᵀ appear one query
// at a time, then each row's softmax (the weights), then each output row (weights @ V). Nothing is
// computed here; the stepper tells the linked view how many rows of each matrix to reveal, and its
// "now" panel (stepnow.js), under the controls, the numbers of the step on screen. It opens at step 0,
// before anything is computed. Its container (controls, caption, panel) sticks under the page's header
// while the view scrolls by (components.css), so the controls and what they change stay on screen.
// With prefers-reduced-motion there is no timed playback: Play jumps to the end of a phase.

import { isolate } from "./canvas.js";
import { createStepNow } from "./stepnow.js";

const PHASES = [
  { key: "scores", verb: (t) => `Scores of query ${t}: q·k with every key (÷ √d_k when scaled).` },
  { key: "weights", verb: (t) => `Softmax of row ${t}: its scores become weights that sum to 1.` },
  { key: "out", verb: (t) => `Output row ${t} = its weights times the value rows V.` },
];
const MAX_STEPS_PER_PHASE = 32; // long sequences advance several rows per step

/** The phase (an index of PHASES: scores, softmax, output) of step `step`, 1 … 3 × `perPhase` (0 is before any). */
export function phaseOf(step, perPhase) {
  return Math.floor((step - 1) / perPhase);
}

/**
 * createStepper(view, {container, interval}) -> {play, pause, stepForward, stepBack, goTo, reset, state, destroy}
 * view needs size(), tokens(), arrays() (checked), qkDivisor(), store, setReveal({scores, weights, out} | null)
 * and select(row).
 */
export function createStepper(view, options = {}) {
  const interval = options.interval ?? 700;
  const reduced = window.matchMedia?.("(prefers-reduced-motion: reduce)");
  let step = 0;
  let timer = null;

  const bar = document.createElement("div");
  bar.className = "attn-stepper";
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", "Step through the computation");
  const button = (text, label, onClick) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "attn-button";
    b.textContent = text;
    b.setAttribute("aria-label", label);
    b.title = label;
    b.addEventListener("click", onClick);
    bar.appendChild(b);
    return b;
  };
  // Accessible names start with the visible words (speech users say what they see).
  const startBtn = button("⇤ Start", "Start: back to the beginning", () => { pause(); goTo(0); });
  const backBtn = button("◀ Back", "Back: one step back", () => { pause(); goTo(step - 1); });
  const playBtn = button("Play ▶", "Play", () => (timer ? pause() : play()));
  const fwdBtn = button("Next ▶", "Next: one step forward", () => { pause(); goTo(step + 1); });
  const allBtn = button("Show all", "Show all: the finished result", () => { pause(); goTo(total()); });
  const slider = document.createElement("input");
  slider.type = "range";
  slider.min = "0";
  slider.className = "attn-slider";
  slider.setAttribute("aria-label", "Step");
  slider.addEventListener("input", () => { pause(); goTo(Number(slider.value)); });
  bar.appendChild(slider);
  const status = document.createElement("p");
  status.className = "attn-step-status";
  status.setAttribute("aria-live", "polite");
  options.container?.classList.add("attn-step-dock");
  options.container?.appendChild(bar);
  options.container?.appendChild(status);
  const now = createStepNow(options.container ?? document.createElement("div"));

  const T = () => Math.max(0, view.size());
  const rowsPerStep = () => Math.max(1, Math.ceil(T() / MAX_STEPS_PER_PHASE));
  const perPhase = () => Math.ceil(T() / rowsPerStep());
  const total = () => 3 * perPhase();

  function describe() {
    const n = total();
    if (!T()) return "No data to step through yet.";
    if (step >= n) return `Step ${n} of ${n}: all done. Every output row is a weighted mix of value rows.`;
    if (step === 0) return `Step 0 of ${n}: nothing computed yet. Press Play or Next.`;
    const phase = phaseOf(step, perPhase());
    const rows = Math.min(T(), ((step - 1) % perPhase() + 1) * rowsPerStep());
    const tokens = view.tokens();
    const first = rows - rowsPerStep();
    const who = rowsPerStep() === 1 ? `'${isolate(tokens[rows - 1])}'` : `rows ${Math.max(0, first)}–${rows - 1}`;
    return `Step ${step} of ${n} (${phase + 1}/3): ${PHASES[phase].verb(who)}`;
  }

  /** What the "now" panel shows at this step: its kind and the query row it is about. */
  function nowState(reveal) {
    const base = { tokens: view.tokens(), arrays: view.arrays(), divisor: view.qkDivisor() };
    if (!T()) return { ...base, kind: "empty" };
    if (step === 0) return { ...base, kind: "start" };
    // done: the selected row's q·k, for any row the reader picks
    if (step >= total()) return { ...base, kind: "score", row: view.store.get() ?? T() - 1 };
    const kind = ["score", "softmax", "output"][phaseOf(step, perPhase())];
    return { ...base, kind, row: Math.max(0, reveal[PHASES[phaseOf(step, perPhase())].key] - 1) };
  }

  function apply() {
    const n = total();
    const per = perPhase();
    const rps = rowsPerStep();
    let reveal = null;
    if (step >= n) view.setReveal(null);
    else {
      reveal = {};
      PHASES.forEach((p, i) => {
        const k = Math.min(per, Math.max(0, step - i * per));
        reveal[p.key] = Math.min(T(), k * rps);
      });
      view.setReveal(reveal);
      if (step > 0) {
        view.select(Math.max(0, reveal[PHASES[phaseOf(step, per)].key] - 1));
      }
    }
    slider.max = String(n);
    slider.value = String(step);
    slider.setAttribute("aria-valuetext", describe());
    status.textContent = describe();
    backBtn.disabled = step <= 0;
    startBtn.disabled = step <= 0;
    fwdBtn.disabled = step >= n;
    allBtn.disabled = step >= n;
    now.show(nowState(reveal));
  }
  // Once all is done the panel follows the row the reader picks in the pictures.
  const unsubscribe = view.store.subscribe(() => { if (step >= total() && T()) now.show(nowState(null)); });

  function goTo(s) {
    step = Math.max(0, Math.min(total(), Math.round(s)));
    apply();
  }

  function setPlaying(on) {
    playBtn.textContent = on ? "Pause" : reduced?.matches ? "Next phase" : "Play ▶";
    playBtn.setAttribute("aria-label", on ? "Pause" : reduced?.matches ? "Next phase" : "Play");
    playBtn.title = playBtn.getAttribute("aria-label");
    status.setAttribute("aria-live", on ? "off" : "polite"); // don't read out every frame
  }

  function play() {
    if (!T()) return;
    if (step >= total()) step = 0;
    if (reduced?.matches) {
      // No animation: reveal the rest of the current phase in one go.
      const per = perPhase();
      goTo((Math.floor(step / per) + 1) * per);
      return;
    }
    setPlaying(true);
    const tick = () => {
      goTo(step + 1);
      if (step >= total()) pause();
    };
    tick();
    timer = setInterval(tick, interval);
  }

  function pause() {
    if (timer) clearInterval(timer);
    timer = null;
    setPlaying(false);
  }

  setPlaying(false);

  return {
    element: bar,
    play,
    pause,
    stepForward: () => { pause(); goTo(step + 1); },
    stepBack: () => { pause(); goTo(step - 1); },
    goTo: (s) => { pause(); goTo(s); },
    /** New data arrived: stop, and start again before anything is computed. */
    reset() { pause(); now.forgetKey(); step = 0; apply(); },
    state: () => ({ step, total: total(), playing: Boolean(timer), reducedMotion: Boolean(reduced?.matches), text: status.textContent }),
    destroy() { pause(); unsubscribe(); bar.remove(); status.remove(); now.destroy(); },
  };
}
