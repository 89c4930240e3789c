"""The order a quiz shows its choices in, and the option keys the page checks answers by.

Authors write the right choice wherever it reads best (often first); shown that way, three questions
teach the reader where the answer sits. So the build shows each quiz's choices in a shuffled order
that depends only on the lesson and the quiz (its slug and id): rebuilds are stable, and a reader sees
the same order on every visit. One lesson-wide salt is added to the seed, the smallest that keeps any
one position from holding the right answers of more than half of the lesson's quizzes; a lesson where
no order keeps its right answers from all sitting in one position (two quizzes whose every choice is
right, say) is refused.

Every choice gets a key, a short hash of its quiz and text, for the page's ``value``s and ``data-correct``,
so the HTML holds no "the right answer is 0". Saved answers stay indices in the lesson's order (as they
were before the shuffle): the quiz's ``data-authored`` lists its keys in that order for quiz.js.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .lessons import LessonError

#: How many salts to try before deciding that no order spreads a lesson's right answers.
SALTS = 64


def option_key(quiz_id: str, text: str) -> str:
    """A choice's key on the page: the same for the same quiz and text, and says nothing of its place."""
    return hashlib.sha256(f"{quiz_id}\n{text.strip()}".encode()).hexdigest()[:8]


def shuffled(slug: str, quiz_id: str, count: int, salt: int = 0) -> list[int]:
    """The display order of a quiz's *count* choices: the lesson-order index of each, first shown first."""
    seed = hashlib.sha256(f"{slug}\n{quiz_id}\n{salt}".encode()).digest()
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def right_positions(order: Sequence[int], correct: Sequence[bool]) -> frozenset[int]:
    """Where the right choices are shown (0 = first), given the display *order*."""
    return frozenset(shown for shown, index in enumerate(order) if correct[index])


def all_in_one_position(positions: Sequence[frozenset[int]]) -> bool:
    """True when a lesson of more than one quiz shows every right answer in the same place(s)."""
    return len(positions) > 1 and len(set(positions)) == 1


def crowded(positions: Sequence[frozenset[int]]) -> bool:
    """True when one place shows the right answer of more than half of a lesson's quizzes (a lesson with every
    right answer in one place is crowded too): a reader who guesses that place would pass the quiz."""
    counts = Counter(place for places in positions for place in places)
    return len(positions) > 1 and max(counts.values()) * 2 > len(positions)


def spread_orders(slug: str, quizzes: list[tuple[dict, int]], path: Path | str) -> dict[str, list[int]]:
    """{quiz id: display order} for a lesson's quizzes (parse_quiz's dicts with their fences' lines, in page
    order), salted with the smallest salt whose orders are not crowded; when every salt's are (several right
    answers per quiz can make that unavoidable), the first whose answers are not all in one place; when there
    is none, a LessonError: the position would give the answers away."""
    fallback = None
    for salt in range(SALTS):
        orders = {quiz["id"]: shuffled(slug, quiz["id"], len(quiz["choices"]), salt) for quiz, _ in quizzes}
        positions = _positions(quizzes, orders)
        if not crowded(positions):
            return orders
        if fallback is None and not all_in_one_position(positions):
            fallback = orders
    if fallback is None:
        where = " and ".join(str(p + 1) for p in sorted(positions[0]))
        quiz, line = quizzes[-1]
        raise LessonError(path, line, f"quiz {quiz['id']!r}: in every order the build tried, the right answers of "
                                      f"all {len(quizzes)} quizzes sit in position {where}, so the position gives "
                                      "them away; give the quizzes right and wrong choices in different numbers")
    return fallback


def _positions(quizzes: list[tuple[dict, int]], orders: dict[str, list[int]]) -> list[frozenset[int]]:
    return [right_positions(orders[quiz["id"]], [c["correct"] for c in quiz["choices"]]) for quiz, _ in quizzes]
