// The frame every view of the reader's arrays opens with: a labelled section, a title the payload
// may set, and an alert where a refusal (show_attention's or show_lookup's `error`) is read out.
import { el } from "../dom.js";

/** viewFrame(className, label) -> {root, title, message}; title and message start hidden. */
export function viewFrame(className, label) {
  const root = el("section", className);
  root.setAttribute("aria-label", label);
  const title = el("h3", "attn-title");
  title.hidden = true;
  const message = el("p", "attn-message");
  message.setAttribute("role", "alert");
  message.hidden = true;
  return { root, title, message };
}
