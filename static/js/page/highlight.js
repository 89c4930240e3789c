// Colours for the static code blocks and the exercises' solutions. The build sends each one's code as plain
// text and its Pygments tokens as runs in data-tokens ("k:3 w:1 nf:16 :4 …": the stylesheet's class and a
// length in UTF-16 units; no class: uncoloured), sitebuild/pages/markup.py, highlighted_pre. A span per token
// made ~1,150 of Lesson 4's elements, most never seen (far down the page, or a solution not shown); here a
// block gets its spans when it comes near the screen (a hidden solution: when it is shown). Without this
// script, or with runs that do not fit the text, the code stays plain: all of it is there either way.

/** How far ahead of the reader blocks are coloured: a screen above and below. */
const NEAR = "100% 0px";

/** The runs of `tokens` as [[class, length], …], or null when they are malformed or do not add up to `length`. */
export function parseRuns(tokens, length) {
  const runs = [];
  let total = 0;
  for (const run of tokens.trim().split(/\s+/)) {
    const colon = run.lastIndexOf(":");
    const n = Number(run.slice(colon + 1));
    if (colon < 0 || !Number.isInteger(n) || n <= 0) return null;
    runs.push([run.slice(0, colon), n]);
    total += n;
  }
  return total === length ? runs : null;
}

/** Put the spans of its runs into `pre`'s <code>; false (and nothing changed) when they do not fit its text. */
export function colour(pre, doc = document) {
  const code = pre.querySelector("code");
  const text = code?.textContent ?? "";
  const runs = code && parseRuns(pre.dataset.tokens ?? "", text.length);
  delete pre.dataset.tokens;
  if (!runs) return false;
  const pieces = [];
  let at = 0;
  for (const [name, n] of runs) {
    const piece = text.slice(at, at + n);
    at += n;
    if (!name) {
      pieces.push(piece);
      continue;
    }
    const span = doc.createElement("span");
    span.className = name;
    span.textContent = piece;
    pieces.push(span);
  }
  code.replaceChildren(...pieces);
  return true;
}

export function init({ root }) {
  const blocks = root.querySelectorAll("pre[data-tokens]");
  if (typeof IntersectionObserver === "undefined") {
    blocks.forEach((pre) => colour(pre));
    return;
  }
  const observer = new IntersectionObserver((items) => {
    for (const item of items) {
      if (!item.isIntersecting) continue;
      observer.unobserve(item.target);
      colour(item.target);
    }
  }, { rootMargin: NEAR });
  blocks.forEach((pre) => observer.observe(pre));
}
