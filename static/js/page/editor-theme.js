// The editor's colours: syntax colours that keep a 4.5:1 contrast (WCAG AA) on the cell's
// background, light and dark (site.css holds them). CodeMirror's default and One Dark palettes do not (axe-core
// flagged strings at 3.5:1 and One Dark's line numbers at 3.9:1).
import { EditorView, HighlightStyle, syntaxHighlighting, tags as t } from "../../vendor/codemirror.js";

// The colours are the page's CSS custom properties (site.css, --syn-*), light and dark, so a switch of the
// system's theme while the page is open recolours the editors as it does the page (fixed colours stayed light).
const colour = (name) => `var(--syn-${name})`;
const palette = Object.fromEntries(
  ["keyword", "string", "number", "comment", "definition", "builtin", "constant", "invalid"].map((n) => [n, colour(n)]));

function highlightStyle(c) {
  return HighlightStyle.define([
    { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword], color: c.keyword },
    { tag: [t.string, t.special(t.string), t.regexp], color: c.string },
    { tag: [t.number, t.integer, t.float], color: c.number },
    { tag: [t.comment, t.lineComment, t.blockComment], color: c.comment, fontStyle: "italic" },
    { tag: [t.function(t.definition(t.variableName)), t.definition(t.className)], color: c.definition },
    { tag: [t.standard(t.variableName), t.function(t.variableName)], color: c.builtin },
    { tag: [t.bool, t.null, t.self, t.atom], color: c.constant },
    { tag: t.invalid, color: c.invalid },
  ]);
}

/** Extensions for one colour scheme; the page's CSS custom properties give the surfaces. */
export function editorTheme(dark) {
  return [
    EditorView.theme({
      "&": { color: "var(--fg)", backgroundColor: "var(--code-bg)" },
      // The page's monospace font, as the editor's stand-in has (CodeMirror's own is "monospace").
      ".cm-scroller": { fontFamily: "var(--mono)" },
      ".cm-content": { caretColor: "var(--fg)" },
      ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--fg)" },
      ".cm-gutters": { color: "var(--muted)", backgroundColor: "var(--code-bg)", borderRight: "1px solid var(--border)" },
      ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--active-line)" },
      "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
        backgroundColor: "var(--selection)",
      },
      ".cm-matchingBracket": { outline: "1px solid var(--muted)", backgroundColor: "transparent" },
    }, { dark }),
    syntaxHighlighting(highlightStyle(palette)),
  ];
}
