// The lookup-view widget: the lesson's soft dictionary lookup (components/lookupview.js). It starts
// from what the build computed for the lesson's example (lessonpy.maths.lookup.EXAMPLE), so the picture
// is there before Python loads, and shows what a cell's show_lookup(..., target=ID) sends. The
// temperature slider steps along the payload's grid: it never calls Python.
import { createLookupView } from "../../components/lookupview.js";
import { el, showSource } from "../common.js";

export function createLookupWidget({ section, spec, initial }) {
  const source = el("p", "widget-source");
  source.setAttribute("aria-live", "polite");
  section.append(source);
  const view = createLookupView(section, { temperature: spec.options.temperature });
  view.element.removeAttribute("aria-label"); // the section already names it
  view.update(initial);
  source.textContent = "Showing the lesson's example, computed when the page was built. " +
    "Run a cell that calls show_lookup to draw your own keys, query and values here.";
  return {
    view,
    receive(payload, route) {
      view.update(payload);
      showSource(section, source, payload, route);
    },
  };
}
