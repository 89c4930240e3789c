"""The step-through's "now" panel forgets the reader's key on new data (static/js/page/components/stepnow.js,
forgetKey, which the stepper's reset calls): the key menu is made again from the new tokens, even when there are as
many, and the key follows the new row's strongest score. On the components' fixture page (modules from the tree)."""

from __future__ import annotations

import pytest


pytestmark = pytest.mark.browser

FORGET = """async () => {
  const { createStepNow } = await import(new URL("/static/js/page/components/stepnow.js", location.href).href);
  const matrix = (rows, cols, data) => ({ rows, cols, data: Float32Array.from(data) });
  const arrays = (strongest) => ({
    Q: matrix(3, 2, [1, 0, 0, 1, 1, 1]), K: matrix(3, 2, [1, 0, 0, 1, 1, 1]),
    scores: matrix(3, 3, [0, 1, 2, 0, 1, 2, 0, 1, 2].map((_, i) => (i % 3 === strongest ? 5 : i % 3))),
  });
  const now = createStepNow(document.body.appendChild(document.createElement("div")));
  const menu = () => [...now.element.querySelectorAll("select.attn-now-key option")].map((o) => o.textContent);
  now.show({ kind: "score", row: 0, tokens: ["a", "b", "c"], arrays: arrays(2), divisor: 1 });
  const first = { key: now.element.dataset.key, menu: menu() };
  const pick = now.element.querySelector("select.attn-now-key");
  pick.value = "0";
  pick.dispatchEvent(new Event("change"));
  const picked = now.element.dataset.key;
  now.forgetKey();
  now.show({ kind: "score", row: 0, tokens: ["x", "y", "z"], arrays: arrays(1), divisor: 1 });
  return { first, picked, after: { key: now.element.dataset.key, menu: menu() } };
}"""


def test_forget_key_makes_the_menu_again_and_follows_the_strongest_score(page):
    result = page.evaluate(FORGET)
    assert result["first"] == {"key": "2", "menu": ["0: a", "1: b", "2: c"]}  # the strongest score's key
    assert result["picked"] == "0"  # the reader's pick holds
    # new data with as many tokens: the menu names the new ones, and the reader's old pick is forgotten
    assert result["after"] == {"key": "1", "menu": ["0: x", "1: y", "2: z"]}
