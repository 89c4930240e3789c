// Optional parts of a lesson page (quizzes, exercises, widgets) are separate modules,
// loaded only when the page has them. Each exports init({runtime, lesson, root, cells, cellIds, widgetsURL,
// mathsURL}), cellIds being the page's cell ids in page order (from the build), widgetsURL where the widgets'
// data is, mathsURL where the far formulas' MathML is.
const FEATURES = [
  // [selector that marks the feature in the page, its module's name, a function that imports it]
];

/** Register a feature module for pages that contain `selector`: `load` imports it (`() => import("./quiz.js")`,
 *  a literal path, which the build's bundler follows), `name` names it in an error. */
export function registerFeature(selector, name, load) {
  FEATURES.push([selector, name, load]);
}

/** Load and start every feature present in `root`; a failing feature never breaks the others. */
export async function initFeatures(context) {
  const started = FEATURES.filter(([selector]) => context.root.querySelector(selector)).map(async ([selector, name, load]) => {
    try {
      const module = await load();
      await module.init(context);
    } catch (err) {
      console.error(`could not start ${name} (${selector}):`, err);
    }
  });
  await Promise.all(started);
}
