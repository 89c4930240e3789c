// The attention-view and step-through widgets: the linked view of show_attention's arrays (components/linked.js),
// with the stepper for step-through. Both start from the build's payload and show what a cell's
// show_attention(..., target=ID) sends (widget-loader.js routes it: their specs say they receive "attention").
import { createAttentionView } from "../../components/linked.js";
import { el, showSource } from "../common.js";

/** attention-view: the linked view. */
export function createViewWidget(ctx) {
  return viewWidget(ctx, { stepper: false });
}

/** step-through: the linked view with the stepper, stepping every `interval` ms (its spec's option). */
export function createStepThrough(ctx) {
  return viewWidget(ctx, { stepper: true });
}

function viewWidget({ section, spec, initial }, { stepper }) {
  const source = el("p", "widget-source");
  source.setAttribute("aria-live", "polite");
  section.append(source);
  const view = createAttentionView(section, {
    stepper,
    initialRow: spec.options.row ?? undefined,
    interval: spec.options.interval,
  });
  section.querySelector(".attn-view")?.removeAttribute("aria-label"); // the section already names it
  view.update(initial);
  source.textContent = "Showing the lesson's example, computed when the page was built. Run a cell that calls show_attention to draw your own arrays here.";
  return {
    view,
    receive(payload, route) {
      view.update(payload);
      showSource(section, source, payload, route);
    },
  };
}
