// The lesson's ```widget blocks, each one of the widgets of widgets/<name>/ (their specs, spec.yml, give
// widgets/index.js: each widget's module, what it receives, the Python it calls).
// Each widget starts from the payload the build computed (so it draws before Python loads; the lesson's
// payloads are one JSON file beside the page, {id: data}, fetched when the first widget is started),
// then shows what Python computes: a widget calls the Python its spec names (ctx.calls, through runtime.call;
// arrays and numbers come back as the call's reply), or shows what cells send with show_attention, show_lookup or
// show_residual_stream.
//
// Routing of those (python's "arrays" events, re-dispatched as lesson:arrays;
// the payload's view says which: it goes to the widgets whose spec receives that view):
//   target=ID   -> the widget of those names with that id;
//   no target   -> the first such widget after the cell whose run sent it, else the last one
//                  before it (else the first on the page). An unknown target falls back to
//                  this rule and says so on the view.
// Where a cell stands is the build's word, not the DOM's: the page config lists the cells in
// page order, each widget says how many cells come before it (data-cells-before), and the
// event's runId says which cell's run sent it (runtime.cellOf).
import { inIdleTime, readerMoved } from "./idle.js";
import { PageFileError, isObject, pageFile } from "./page-file.js";
import { Event } from "../shared/protocol.js";
import { settled } from "../runtime/settled.js";
import { decodePayload, el } from "./widgets/common.js";
import { WIDGETS } from "./widgets/index.js";
/** A far widget waits this long at most for an idle period (a page that is never idle still gets them). */
const IDLE_TIMEOUT_MS = 2000;

/**
 * Start the page's widgets and route show_attention's arrays to the views.
 * A widget is built when it comes near the screen, when the page is idle after Python is ready and the
 * reader has moved on the page, or when arrays are sent to it, whichever is first: each one takes tens of milliseconds of drawing, and a
 * page of them must not spend its first second on pictures nobody can see yet.
 */
export async function init({ runtime, root, cells = null, cellIds = [], widgetsURL = null }) {
  const entries = [...root.querySelectorAll("[data-widget]")].map((section) => ({
    section, id: section.dataset.widgetId, name: section.dataset.widget, widget: null, starting: null,
    cellsBefore: Number(section.dataset.cellsBefore ?? 0),
  }));
  // Fetched once, when the first widget starts; what is not the build's file for these widgets is refused
  // like a failed download (page-file.js), so a widget never reads a file of another shape.
  const specs = pageFile(widgetsURL, "widget data", { valid: (data) => hasWidgets(data, entries.map((e) => e.id)) });
  const widgets = []; // the started ones, in the order they started
  globalThis.lessonWidgets = widgets; // for tests and the curious
  const start = (entry) => {
    entry.starting ??= startWidget(entry, runtime, specs).then(({ widget, retry }) => {
      entry.widget = widget;
      if (widget) widgets.push(widget);
      // Its data did not come: arrays sent to it ask again (not the idle time's pass, which would loop
      // offline), and once the data has come the widgets it failed are started again.
      if (retry) Object.assign(entry, { starting: null, failed: true });
      for (const other of widget ? entries.filter((e) => e.failed) : []) {
        other.failed = false;
        start(other);
      }
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
  // The ones far from the screen: in idle time once Python has settled (settled.js) and the reader has
  // moved on the page (idle.js, readerMoved), as the editors; one per idle period in page order, none
  // while Python computes: nothing of them is needed before the first output, nor on the first screen.
  const startNext = () => {
    const entry = entries.find((e) => !e.starting && !e.failed);
    return entry ? start(entry).then(() => true) : false;
  };
  Promise.all([settled(runtime, () => cells?.chain), readerMoved()])
    .then(() => inIdleTime(startNext, { busy: () => runtime.busy, timeout: IDLE_TIMEOUT_MS }));

  document.addEventListener(`lesson:${Event.ARRAYS}`, async ({ detail }) => {
    const view = detail?.view || "attention";
    const views = entries.filter((e) => WIDGETS[e.name]?.receives === view);
    if (!views.length) return;
    const cellIndex = cellIds.indexOf(runtime.cellOf(detail.runId)); // -1: not sent by a cell
    const route = routeArrays(views, detail, cellIndex);
    if (!route) return;
    const widget = route.view.widget ?? (await start(route.view));
    // the sending cell's name as the reader sees it (cells.js keeps it): the widget says where its picture came from
    const sender = cellIndex >= 0 ? cells?.cells?.[cellIndex]?.label ?? null : null;
    widget?.receive(detail, { ...route, sender });
  });
  return widgets;
}

/** Build one widget from its data; on failure show why, in its place. Resolves to {widget, retry}. */
async function startWidget({ section, id }, runtime, specs) {
  try {
    const spec = (await specs.get())[id]; // there: hasWidgets
    const known = Object.hasOwn(WIDGETS, spec.name) ? WIDGETS[spec.name] : null;
    if (!known) throw new Error(`unknown widget ${spec.name}`);
    const make = await known.load();
    section.querySelector(".widget-loading")?.remove();
    const widget = await make({ section, spec, runtime, calls: known.calls, initial: decodePayload(spec.initial) });
    section.querySelector(".widget-error")?.remove(); // a retry that worked
    return { widget: { ...widget, id: spec.id, name: spec.name, section }, retry: false };
  } catch (err) {
    // One broken widget must not take the others (or the page) with it.
    console.error("widget failed to start", err);
    const note = section.querySelector(".widget-loading, .widget-error") ?? section.appendChild(el("p"));
    note.className = "widget-error";
    note.setAttribute("role", "alert");
    note.textContent = `This picture could not start: ${err?.message ?? err}`;
    return { widget: null, retry: err instanceof PageFileError };
  }
}

/** Whether `data` is the widgets' data the build writes for widgets `ids`: {id: {name, …}} for each of them. */
export function hasWidgets(data, ids) {
  return isObject(data) && ids.every((id) => Object.hasOwn(data, id) && isObject(data[id]) && typeof data[id].name === "string");
}

/**
 * Which view shows a show_attention payload: {view, note} or null when the page has none.
 * views are in page order, each with cellsBefore (how many cells precede it); cellIndex is
 * the position of the cell that sent the payload among the page's cells (-1: no cell).
 */
export function routeArrays(views, payload, cellIndex) {
  if (!views.length) return null;
  const target = typeof payload.target === "string" && payload.target ? payload.target : null;
  const named = target && views.find((v) => v.id === target);
  if (named) return { view: named, note: "" };
  let view = views[0];
  if (cellIndex >= 0) {
    const after = views.find((v) => v.cellsBefore > cellIndex);
    view = after ?? views[views.length - 1];
  }
  const note = target ? `No view is called '${target}' on this page, so it is shown here.` : "";
  return { view, note };
}
