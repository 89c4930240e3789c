// One rule for the text of a code cell or an exercise: its lines end in "\n", never "\r\n" or a lone "\r".
// CodeMirror keeps a document's lines apart whatever ended them and gives them back joined by "\n"; the page
// does the same to every text on its way in (set through an editor, read from storage, opened from a file), so
// what is run, saved and downloaded is one text whether or not the cell's editor was built yet.

/** `text` with every "\r\n" and lone "\r" made "\n". */
export const codeText = (text) => text.replace(/\r\n?/g, "\n");
