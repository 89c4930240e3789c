// The lesson's ```widget blocks: attention-view, step-through, dk-explorer and heads.
// Each widget starts from the payload the build computed (so it draws before Python loads),
// then shows what Python computes: the explorer and heads call lessonpy.widgets through
// runtime.call; the views show what cells send with show_attention.
//
// Routing of show_attention (python's "arrays" events, re-dispatched as lesson:arrays):
//   target=ID   -> the attention-view or step-through with that id;
//   no target   -> the first such view after the cell that ran, else the last one before it
//                  (else the first on the page). An unknown target falls back to this rule and
//                  says so on the view. Payloads a widget asked for itself ("source": "widget")
//                  go only to that widget.
import { createAttentionView } from "./components/linked.js";
import { decodePayload, el } from "./widgets/common.js";

const MAKERS = {
  "attention-view": (ctx) => createViewWidget(ctx, { stepper: false }),
  "step-through": (ctx) => createViewWidget(ctx, { stepper: true }),
  "dk-explorer": async (ctx) => (await import("./widgets/explorer.js")).createExplorer(ctx),
  heads: async (ctx) => (await import("./widgets/heads.js")).createHeads(ctx),
};

/** Build every widget of the page and start routing show_attention's arrays to the views. */
export async function init({ runtime, root }) {
  const widgets = [];
  for (const section of root.querySelectorAll("[data-widget]")) {
    try {
      const spec = JSON.parse(section.querySelector("script.widget-data").textContent);
      const make = MAKERS[spec.name];
      if (!make) throw new Error(`unknown widget ${spec.name}`);
      section.querySelector(".widget-loading")?.remove();
      const widget = await make({ section, spec, runtime, initial: decodePayload(spec.initial) });
      widgets.push({ ...widget, id: spec.id, name: spec.name, section });
    } catch (err) {
      // One broken widget must not take the others (or the page) with it.
      console.error("widget failed to start", err);
      const note = section.querySelector(".widget-loading") ?? section.appendChild(el("p"));
      note.className = "widget-error";
      note.setAttribute("role", "alert");
      note.textContent = `This picture could not start: ${err?.message ?? err}`;
    }
  }
  const views = widgets.filter((w) => w.receive);
  document.addEventListener("lesson:arrays", ({ detail }) => {
    if (!detail || detail.source === "widget" || (detail.view && detail.view !== "attention")) return;
    const route = routeArrays(views, detail, document.querySelector('[data-cell][data-status="running"]'));
    route?.view.receive(detail, route);
  });
  globalThis.lessonWidgets = widgets; // for tests and the curious
  return widgets;
}

/**
 * Which view shows a show_attention payload: {view, note} or null when the page has none.
 * views are in document order; cell is the element of the cell that ran (or null).
 */
export function routeArrays(views, payload, cell) {
  if (!views.length) return null;
  const target = typeof payload.target === "string" && payload.target ? payload.target : null;
  const named = target && views.find((v) => v.id === target);
  if (named) return { view: named, note: "" };
  let view = views[0];
  if (cell) {
    const after = views.find((v) => cell.compareDocumentPosition(v.section) & Node.DOCUMENT_POSITION_FOLLOWING);
    view = after ?? views[views.length - 1];
  }
  const note = target ? `No view is called '${target}' on this page, so it is shown here.` : "";
  return { view, note };
}

/** attention-view and step-through: the linked view, with the stepper for step-through. */
function createViewWidget({ section, spec, initial }, { stepper }) {
  const source = el("p", "widget-source");
  source.setAttribute("aria-live", "polite");
  section.append(source);
  const view = createAttentionView(section, {
    stepper,
    initialRow: spec.options.row ?? undefined,
    interval: spec.options.interval,
  });
  section.querySelector(".attn-view")?.removeAttribute("aria-label"); // the section already names it
  const describe = (text) => { source.textContent = text; };
  view.update(initial);
  describe("Showing the lesson's example, computed when the page was built. Run a cell that calls show_attention to draw your own arrays here.");
  return {
    view,
    receive(payload, { note }) {
      const cell = document.querySelector('[data-cell][data-status="running"]');
      const label = cell?.getAttribute("aria-label") ?? "a cell";
      view.update(payload);
      const what = payload.error ? `${label} sent arrays that cannot be drawn` : `Showing what ${label} computed`;
      describe(`${what}.${note ? ` ${note}` : ""}`);
      section.dataset.updated = String((Number(section.dataset.updated) || 0) + 1);
    },
  };
}
