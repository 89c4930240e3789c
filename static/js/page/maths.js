// Big formulas far down the lesson come as their TeX, <code class="math-later" data-math="key">
// (sitebuild/pages/math_later.py says which, and why), and their MathML in the lesson's maths file beside the
// page (build.py, LATER_MATHS: {key: mathml}). Each is typeset a screen before the reader reaches it; all
// the others in idle time once the reader has moved on the page (a scroll, a key: find-in-page's Ctrl+F,
// print's Ctrl+P), as the far editors and widgets are built; and, before the page is printed, all at once.
// The file is fetched when Python has settled or a formula comes near, whichever is first. A download that
// fails leaves the TeX in place; the next formula that comes near asks again, and brings those with it.
// A jump (a link, find-in-page, a Run button scrolled into view) lands beside formulas no observer saw
// coming: an inline one typeset after the new screen was drawn can take its paragraph a line shorter and move
// everything under it, a layout shift the reader sees (CI caught 0.13 on a phone). So once the file is here,
// the formulas near the screen are typeset in the scroll event itself, which the browser sends before it
// draws the scrolled page; the observer (whose report comes after the drawing) is then only the fallback.
import { inIdleTime, readerMoved } from "./idle.js";
import { pageFile } from "./page-file.js";
import { settled } from "../runtime/settled.js";

/** How far ahead of the reader formulas are typeset: a screen above and below. */
const NEAR = "100% 0px";
/** Formulas typeset per idle period: about a hundred elements. */
const PER_IDLE = 8;
/** The rest wait this long at most for an idle period (a page that is never idle still gets them). */
const IDLE_TIMEOUT_MS = 2000;

/** Put the formula `standin` holds the place of, from `maths` ({key: mathml}); false when it has none. */
export function typeset(standin, maths, doc = document) {
  const mathml = maths?.[standin.dataset.math];
  if (typeof mathml !== "string") return false;
  const template = doc.createElement("template");
  template.innerHTML = mathml; // the build's own Temml output: one <math> element
  const formula = template.content.firstElementChild;
  if (!formula || formula.localName !== "math" || template.content.childNodes.length !== 1) return false;
  standin.replaceWith(formula);
  return true;
}

/** The lesson's blocks, each drawn only near the screen (site.css: content-visibility). */
const BLOCK = ".lesson > *";

/**
 * The stand-ins grouped by the lesson block that holds them: a block's box is laid out even while the
 * browser skips its contents, so asking where it is costs no layout of what is inside.
 */
export function byBlock(standins) {
  const blocks = new Map();
  for (const standin of standins) {
    const block = standin.closest(BLOCK) ?? standin;
    if (!blocks.has(block)) blocks.set(block, []);
    blocks.get(block).push(standin);
  }
  return blocks;
}

/** Whether a box is within a screen above or below the window: what NEAR says to the observer. */
export function nearScreen(rect, height = globalThis.innerHeight) {
  return rect.bottom >= -height && rect.top <= 2 * height;
}

export function init({ root, runtime, cells = null, mathsURL = null }) {
  const waiting = new Set(root.querySelectorAll("code.math-later[data-math]")); // in page order
  if (!waiting.size) return;
  const file = pageFile(mathsURL, "maths");
  const put = (standins, maths) => {
    for (const standin of standins) {
      if (!waiting.delete(standin)) continue;
      if (!typeset(standin, maths)) console.warn(`formula ${standin.dataset.math} is not in the page's maths file; rebuild the site`);
    }
  };
  const stranded = new Set(); // asked for while the file would not come: put with the next that does
  const fetchAndPut = async (standins) => {
    try {
      const maths = await file.get();
      put([...stranded, ...standins], maths);
      stranded.clear();
      return true;
    } catch (err) {
      for (const standin of standins) stranded.add(standin);
      console.warn(`far formulas stay as TeX for now: ${err?.message ?? err}`);
      return false;
    }
  };

  const observer = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver((items) => {
    const near = items.filter((item) => item.isIntersecting).map((item) => item.target);
    for (const standin of near) observer.unobserve(standin);
    if (near.length) fetchAndPut(near);
  }, { rootMargin: NEAR });
  for (const standin of waiting) observer?.observe(standin);

  const blocks = byBlock(waiting);
  const beforeDrawing = () => {
    const maths = file.now();
    if (!maths) return; // not here yet: the observer asks for it
    for (const [block, standins] of blocks) { // in page order: none after the first below the near zone is near
      // a block the observer or idle time already typeset is dropped unmeasured: every scroll event measures
      if (standins.every((standin) => !waiting.has(standin))) { blocks.delete(block); continue; }
      const rect = block.getBoundingClientRect();
      if (rect.top > 2 * globalThis.innerHeight) break;
      if (!nearScreen(rect)) continue;
      blocks.delete(block);
      for (const standin of standins) observer?.unobserve(standin);
      put(standins, maths);
    }
    if (!waiting.size) globalThis.removeEventListener("scroll", beforeDrawing);
  };
  globalThis.addEventListener("scroll", beforeDrawing, { passive: true });

  // Printing cannot wait for a download: what has come is typeset at once (the file is fetched early).
  globalThis.addEventListener("beforeprint", () => {
    if (file.now()) put([...waiting], file.now());
  });
  settled(runtime, () => cells?.chain).then(() => fetchAndPut([]));
  const putSome = async () => {
    const next = [...waiting].slice(0, PER_IDLE);
    for (const standin of next) observer?.unobserve(standin);
    return next.length > 0 && (await fetchAndPut(next)) && waiting.size > 0;
  };
  readerMoved().then(() => inIdleTime(putSome, { busy: () => runtime.busy, timeout: IDLE_TIMEOUT_MS }));
}
