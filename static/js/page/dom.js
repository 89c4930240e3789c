// The one small DOM helper the page's modules share.

/** A new element with an optional class and text (text, never HTML). */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The name a cell shows ("Cell 3": the build's render.cell_name), the one every message of the page calls it by. */
export function cellName(cell) {
  return cell.querySelector(".cell-name").textContent;
}
