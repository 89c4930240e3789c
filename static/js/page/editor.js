// A code editor for one cell: CodeMirror 6 with Python highlighting, line numbers,
// smart indentation, and Shift+Enter / Ctrl+Enter to run. lazy-editor.js builds these when the
// reader needs them; the page's other modules go through a LazyEditor, never here.
import {
  EditorState, EditorView, Prec, bracketMatching, closeBrackets, closeBracketsKeymap, defaultKeymap, drawSelection,
  highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, history, historyKeymap, indentOnInput,
  indentUnit, indentWithTab, keymap, lineNumbers, python,
} from "../../vendor/codemirror.js";
import { editorTheme } from "./editor-theme.js";

const prefersDark = () => globalThis.matchMedia?.("(prefers-color-scheme: dark)").matches;

/**
 * @param {HTMLElement|null} parent  element the editor is appended to (null: the caller places view.dom)
 * @param {{doc: string, label: string, onRun: () => void, onChange: (code: string) => void}} options
 */
export function createEditor(parent, { doc, label, onRun, onChange }) {
  const run = () => {
    onRun();
    return true; // handled: do not insert a newline
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap]),
        python(),
        indentUnit.of("    "),
        // Tab indents; Escape then Tab leaves the editor (CodeMirror's keyboard-trap escape).
        keymap.of([indentWithTab]),
        Prec.highest(keymap.of([
          { key: "Shift-Enter", run },
          { key: "Mod-Enter", run },
        ])),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
        // tabindex: an exercise's editor has a maximum height and scrolls; a scrolling region needs content the
        // keyboard reaches (axe, scrollable-region-focusable), and contenteditable alone does not count there.
        EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
        EditorView.lineWrapping, // long lines wrap: no sideways scrolling inside a cell, on a phone either
        editorTheme(prefersDark()),
      ],
    }),
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
    },
    focus: () => view.focus(),
  };
}
