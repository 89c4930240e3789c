// The CodeMirror pieces the page's editor uses, bundled by esbuild into one ES module
// (vendor/codemirror.js) because browsers cannot resolve npm's bare import names.
export { EditorView, keymap } from "@codemirror/view";
export { EditorState, Prec } from "@codemirror/state";
export { indentUnit } from "@codemirror/language";
export { indentWithTab } from "@codemirror/commands";
export { basicSetup } from "codemirror";
export { python } from "@codemirror/lang-python";
export { oneDark } from "@codemirror/theme-one-dark";
