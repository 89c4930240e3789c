// Quizzes: one <div data-quiz> per question, built by sitebuild/pages/practice.py (not a form: see
// render_quiz). Native radios/checkboxes give keyboard use (Tab, arrows, Space); Enter on one checks,
// as it would submit a form.
// Checking shows, for every chosen answer, whether it is right and why; answers persist, and a
// check in another tab of the same lesson shows here too (so both tabs' scores agree).
import * as storage from "./storage.js";

const KIND = "quiz";

class Quiz {
  constructor(el, lesson, onChange) {
    this.el = el;
    this.lesson = lesson;
    this.onChange = onChange;
    this.inputs = [...el.querySelectorAll("input[name]")];
    // the build's word (practice.py, render_quiz): the keys of the right choices (an input's value is its
    // choice's key; the build shuffles the choices), every key in the lesson's order (a saved answer names
    // choices by that index, as before the shuffle), and the version answers are saved for
    const keys = (words) => words.split(" ").filter(Boolean);
    this.data = {
      id: el.dataset.quiz, correct: keys(el.dataset.correct), authored: keys(el.dataset.authored),
      multiple: this.inputs[0]?.type === "checkbox", version: el.dataset.version,
    };
    this.feedback = el.querySelector(".quiz-feedback");
    this.button = el.querySelector(".quiz-check");
    this.correct = null; // null: not checked yet; else the verdict of the last check

    this.button.addEventListener("click", () => this.check());
    el.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || !this.inputs.includes(event.target)) return;
      event.preventDefault();
      this.check();
    });
    // A new choice makes the old verdict stale: clear the marks, keep the explanation visible.
    el.addEventListener("change", () => this.#clearMarks());
    this.button.disabled = false;
    this.#restore();
    // A checked answer is one click to redo, so the latest check in any tab wins, without a question.
    storage.watch(lesson, KIND, this.data.id, (value) => this.#follow(value));
  }

  /** The chosen choices' keys, in the order they are shown. */
  selected() {
    return this.inputs.filter((input) => input.checked).map((input) => input.value);
  }

  check({ save = true } = {}) {
    const chosen = this.selected();
    if (!chosen.length) {
      this.#show("quiz-empty", this.data.multiple ? "Choose one or more answers first." : "Choose an answer first.");
      return;
    }
    const right = new Set(this.data.correct);
    const wrongPicks = chosen.filter((i) => !right.has(i));
    const missed = this.data.correct.filter((i) => !chosen.includes(i));
    this.correct = wrongPicks.length === 0 && missed.length === 0;

    let verdict;
    if (this.correct) verdict = "Correct!";
    else if (!this.data.multiple) verdict = "Not quite. Try another answer.";
    else if (wrongPicks.length === 0) verdict = `Right so far, but ${missed.length === 1 ? "one more answer is" : `${missed.length} more answers are`} correct too.`;
    else verdict = `Not quite: ${wrongPicks.length === 1 ? "one of your choices is" : `${wrongPicks.length} of your choices are`} wrong.`;

    const list = document.createElement("ul");
    list.className = "quiz-whys";
    for (const key of chosen) {
      const ok = right.has(key);
      const input = this.inputs.find((candidate) => candidate.value === key);
      const item = document.createElement("li");
      item.className = ok ? "is-right" : "is-wrong";
      const mark = document.createElement("span");
      mark.className = "quiz-mark";
      mark.textContent = ok ? "✓ Right: " : "✗ Wrong: ";
      const label = this.el.querySelector(`label[for="${input.id}"]`);
      const choice = document.createElement("strong");
      choice.append(...[...label.childNodes].map((n) => n.cloneNode(true)));
      item.append(mark, choice, " — ", this.#template(input.closest(".quiz-choice").querySelector("template.quiz-why")));
      list.append(item);
      input.closest(".quiz-choice").dataset.mark = ok ? "right" : "wrong";
    }
    const parts = [list];
    const explain = this.el.querySelector("template.quiz-explain");
    if (this.correct && explain) {
      const more = document.createElement("div");
      more.className = "quiz-explain-text";
      more.append(this.#template(explain));
      parts.push(more);
    }
    this.#show(this.correct ? "quiz-right" : "quiz-wrong", verdict, parts);
    this.el.dataset.state = this.correct ? "right" : "wrong";
    if (save) {
      const saved = chosen.map((key) => this.data.authored.indexOf(key));
      storage.save(this.lesson, KIND, this.data.id, { version: this.data.version, chosen: saved, correct: this.correct });
    }
    this.onChange();
  }

  #template(template) {
    return template.content.cloneNode(true);
  }

  #show(className, verdict, parts = []) {
    const head = document.createElement("p");
    head.className = `quiz-verdict ${className}`;
    head.textContent = verdict;
    this.feedback.replaceChildren(head, ...parts);
  }

  #clearMarks() {
    for (const li of this.el.querySelectorAll(".quiz-choice[data-mark]")) delete li.dataset.mark;
    delete this.el.dataset.state;
  }

  #restore() {
    this.#follow(storage.load(this.lesson, KIND, this.data.id));
  }

  /** Show a stored answer (this tab's from an earlier visit, or another tab's just now) as checked. */
  #follow(saved) {
    if (!saved || saved.version !== this.data.version || !Array.isArray(saved.chosen)) return;
    const chosen = saved.chosen.map((index) => this.data.authored[index]);
    for (const input of this.inputs) input.checked = chosen.includes(input.value);
    this.#clearMarks();
    this.check({ save: false });
  }

}

/** The page's quiz score, shown after the last quiz: "3 of 6 answered correctly". */
function scoreLine(quizzes) {
  const el = document.createElement("p");
  el.className = "quiz-score";
  el.setAttribute("aria-live", "polite");
  const update = () => {
    const right = quizzes.filter((q) => q.correct).length;
    el.textContent = `Quiz: ${right} of ${quizzes.length} answered correctly.`;
    el.dataset.complete = String(right === quizzes.length);
  };
  return { el, update };
}

export async function init({ lesson, root }) {
  const els = [...root.querySelectorAll("[data-quiz]")];
  if (!els.length) return;
  const quizzes = [];
  const score = scoreLine(quizzes);
  for (const el of els) quizzes.push(new Quiz(el, lesson, score.update));
  els.at(-1).after(score.el);
  score.update();
}
