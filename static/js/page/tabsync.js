// One editor's text kept in step with the other tabs of the same lesson, never overwriting
// anyone's work without a word. Each save carries `from`, the fingerprint of the version the
// edit was made on. When another tab saves: if this tab has no edits of its own since it last
// saw storage, and the other tab edited that same version, this tab follows silently; otherwise
// it keeps its text and asks the reader which version to keep.
import * as storage from "./storage.js";

export class TabSync {
  /**
   * @param {object} o
   * @param {string} o.lesson, o.kind, o.id   the storage key's parts
   * @param {string} o.original   the text when nothing is stored (the lesson's code, the starter)
   * @param {string} o.stored     the text storage holds now (as loaded)
   * @param {{getCode: () => string, setCode: (code: string) => void}} o.editor
   * @param {(code: string, from: string) => boolean} o.write   save this tab's text; false if storage refused
   * @param {HTMLElement} o.anchor   a conflict notice goes right after it
   * @param {() => void} [o.onKeep]   where focus goes after "Keep this tab's version"
   * @param {(value: object|null) => void} [o.onStored]   sees every value another tab saves, first
   *   (what travels with the text, such as an exercise's attempts and hints)
   */
  constructor({ lesson, kind, id, original, stored, editor, write, anchor, onKeep, onStored }) {
    Object.assign(this, { original, stored, editor, write, anchor, onKeep, onStored });
    this.adopting = false;
    this.notice = null;
    storage.watch(lesson, kind, id, (value) => this.#changedElsewhere(value));
  }

  /** The reader changed the text here: save it (call from the editor's onChange). */
  edited(code) {
    if (this.adopting) return; // taking another tab's version: it is already what is stored
    if (!this.write(code, storage.fingerprint(this.stored))) return; // the page says once; the editor keeps it
    this.stored = code;
    this.#dismiss();
  }

  #changedElsewhere(value) {
    this.onStored?.(value);
    const theirs = value && typeof value.code === "string" ? value.code : this.original;
    const mine = this.editor.getCode();
    if (theirs === mine) {
      this.stored = theirs;
      this.#dismiss();
      return;
    }
    const onTopOfOurs = !value || value.from === undefined || value.from === storage.fingerprint(this.stored);
    if (mine === this.stored && onTopOfOurs) this.#adopt(theirs);
    else this.#showConflict(theirs);
  }

  #adopt(code) {
    this.adopting = true;
    try {
      this.editor.setCode(code);
    } finally {
      this.adopting = false;
    }
    this.stored = code;
    this.#dismiss();
  }

  #showConflict(theirs) {
    this.#dismiss();
    const notice = document.createElement("div");
    notice.className = "tab-notice";
    notice.setAttribute("role", "alert");
    const text = document.createElement("span");
    // Either tab's save may be the later one, so the notice does not say which version storage holds.
    text.textContent = "You changed this in another tab too, at the same time. ";
    const keep = document.createElement("button");
    keep.type = "button";
    keep.textContent = "Keep this tab's version";
    keep.addEventListener("click", () => {
      this.edited(this.editor.getCode());
      this.onKeep?.();
    });
    const use = document.createElement("button");
    use.type = "button";
    use.textContent = "Use the other tab's version";
    use.addEventListener("click", () => {
      this.#adopt(theirs);
      // saved as the reader's choice: storage may hold this tab's save (the later one), which a reload would
      // bring back, and the other tab, which has this version, then sees it chosen and is asked no more
      this.edited(theirs);
      this.editor.focus?.();
    });
    notice.append(text, keep, " ", use);
    this.anchor.after(notice);
    this.notice = notice;
  }

  #dismiss() {
    this.notice?.remove();
    this.notice = null;
  }
}
