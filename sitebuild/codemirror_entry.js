// The CodeMirror pieces the page's editor uses, bundled by esbuild into one ES module
// (vendor/codemirror.js) because browsers cannot resolve npm's bare import names.
// Named pieces rather than `basicSetup`: search, lint and folding are not needed in short
// cells, and every kilobyte here is parsed on the main thread while the page starts.
export {
  EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers,
} from "@codemirror/view";
export { EditorState, Prec } from "@codemirror/state";
export { HighlightStyle, bracketMatching, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
export { python } from "@codemirror/lang-python";
