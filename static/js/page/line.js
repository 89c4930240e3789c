// A line the page composes around a message from Python ("ValueError: see the output below.", "MiniLM could
// not run: …"). Python holds such a message to MESSAGE_CHARS (2,000: an exception's class name may be that
// long), which is right for the output, where the whole of it stays, but not for a status line read at a
// glance: there the message is cut, so the line as a whole stays within LINE_CHARS.

/**
 * The most characters of a line composed around a message. The live panel's longest message of its own (a
 * forward that writes into the read-only weights: where, and what to do instead) is about 360 with its
 * frame, and stays whole; a message of MESSAGE_CHARS is cut to a fifth.
 */
export const LINE_CHARS = 400;

const ELLIPSIS = "…";

/**
 * `before + message + after`, with the message cut short (ending in "…") where the whole would pass `limit`
 * characters. The page's own words around it are kept whole: they say what the line is about.
 */
export function lineAround(before, message, after = "", limit = LINE_CHARS) {
  const text = String(message);
  const room = Math.max(limit - before.length - after.length, ELLIPSIS.length + 1);
  if (text.length <= room) return before + text + after;
  let cut = text.slice(0, room - ELLIPSIS.length).trimEnd();
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1); // never half of a character outside the BMP
  return before + cut + ELLIPSIS + after;
}
