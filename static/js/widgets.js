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

const VIEW_NAMES = new Set(["attention-view", "step-through"]);

/**
 * Start the page's widgets and route show_attention's arrays to the views.
 * A widget is built when it comes near the screen, when the page is idle, or when arrays
 * are sent to it, whichever is first: each one takes tens of milliseconds of drawing, and a
 * page of them must not spend its first second on pictures nobody can see yet.
 */
export async function init({ runtime, root }) {
  const entries = [...root.querySelectorAll("[data-widget]")].map((section) => ({
    section, id: section.dataset.widgetId, name: section.dataset.widget, widget: null, starting: null,
  }));
  const widgets = []; // the started ones, in the order they started
  globalThis.lessonWidgets = widgets; // for tests and the curious
  const start = (entry) => {
    entry.starting ??= startWidget(entry, runtime).then((widget) => {
      entry.widget = widget;
      if (widget) widgets.push(widget);
      entry.section.dataset.started = "true";
      return widget;
    });
    return entry.starting;
  };

  const observer = new IntersectionObserver((items) => {
    for (const item of items) {
      if (!item.isIntersecting) continue;
      observer.unobserve(item.target);
      start(entries.find((e) => e.section === item.target));
    }
  }, { rootMargin: "100% 0px" }); // a screen's height ahead, so it is drawn before it is seen
  for (const entry of entries) observer.observe(entry.section);
  startWhenIdle(entries, start);

  const views = entries.filter((e) => VIEW_NAMES.has(e.name));
  document.addEventListener("lesson:arrays", async ({ detail }) => {
    if (!detail || detail.source === "widget" || (detail.view && detail.view !== "attention")) return;
    const cell = document.querySelector('[data-cell][data-status="running"]');
    const route = routeArrays(views, detail, cell);
    if (!route) return;
    const widget = route.view.widget ?? (await start(route.view));
    widget?.receive(detail, route, cell);
  });
  return widgets;
}

/** Start the widgets not yet started, one per idle period, in page order. */
function startWhenIdle(entries, start) {
  const idle = globalThis.requestIdleCallback ?? ((fn) => setTimeout(fn, 200));
  const next = () => {
    const entry = entries.find((e) => !e.starting);
    if (entry) start(entry).then(() => idle(next, { timeout: 2000 }));
  };
  idle(next, { timeout: 2000 });
}

/** Build one widget from its section's data block; on failure show why, in its place. */
async function startWidget({ section }, runtime) {
  try {
    const spec = JSON.parse(section.querySelector("script.widget-data").textContent);
    const make = MAKERS[spec.name];
    if (!make) throw new Error(`unknown widget ${spec.name}`);
    section.querySelector(".widget-loading")?.remove();
    const widget = await make({ section, spec, runtime, initial: decodePayload(spec.initial) });
    return { ...widget, id: spec.id, name: spec.name, section };
  } catch (err) {
    // One broken widget must not take the others (or the page) with it.
    console.error("widget failed to start", err);
    const note = section.querySelector(".widget-loading") ?? section.appendChild(el("p"));
    note.className = "widget-error";
    note.setAttribute("role", "alert");
    note.textContent = `This picture could not start: ${err?.message ?? err}`;
    return null;
  }
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
    receive(payload, { note }, cell) {
      const label = cell?.getAttribute("aria-label") ?? "a cell";
      view.update(payload);
      const what = payload.error ? `${label} sent arrays that cannot be drawn` : `Showing what ${label} computed`;
      describe(`${what}.${note ? ` ${note}` : ""}`);
      section.dataset.updated = String((Number(section.dataset.updated) || 0) + 1);
    },
  };
}
