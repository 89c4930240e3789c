"""A head trained in the page: the attention lesson's "train-head" cells, repeated for the text's numbers.

One attention head learns the previous-token job by gradient descent. Each position is a one-hot word
followed by a one-hot position (as in :mod:`lessonpy.course.attention.hand_heads`); the values are fixed to the word block,
so a position's output is a distribution over words, and the loss is the squared error between it and
the previous word's one-hot. Only W_q and W_k learn, with gradients written out by hand; the gradient
reaches the scores through the softmax's Jacobian p_i (delta_ij - p_j), which is why a saturated start
(the same weights, scaled up) learns far more slowly.

The loss is squared error, not the log of the weight on the right word, on purpose: -log(sum of some p_j)
is a log-softmax, whose gradient to the scores does not vanish when the softmax saturates on a wrong key,
so it would hide the effect. In a real model the head's output passes through further layers before a
loss, and the gradient that reaches the weights p is bounded, as it is here.

The aside after it (cell "train-induction") trains two causal heads together, the second reading the
first's output, until they form an induction head: see :func:`train_two_layers`.

The cells print what :func:`numbers` formats; :data:`CELL_PRINTS` says which cell prints which number.
The arithmetic is the cells' (same seeds, same order of operations), float64 throughout.
"""

from __future__ import annotations

import numpy as np

from ...maths.attention import softmax

__all__ = ["CELL_PRINTS", "SATURATED", "SOFT", "STEPS", "numbers", "payload", "previous_word_task", "repeat_task",
           "train", "train_two_layers"]

B, T, V, D_K = 32, 8, 8, 8  # 32 sequences of 8 words drawn from 8; head size 8
DATA_SEED, INIT_SEED = 0, 1
LR, STEPS, EVERY = 5.0, 200, 50  # plain gradient descent; a line printed every EVERY steps
SOFT, SATURATED = 0.25, 2.0  # the two starts: W = scale * N(0, 1), the same draws
WORDS = "ABCDEFGH"  # the V made-up words, as the picture labels them

#: cell id -> the numbers (keys of :func:`numbers`) that cell prints
CELL_PRINTS = {
    "train-head": ["th_loss_first", "th_loss_last", "th_prev_first", "th_prev_last", "th_top_first"],
    "train-head-saturated": ["th_sat_loss_first", "th_sat_loss_last", "th_sat_prev_last", "th_sat_top_first"],
    "train-induction": ["th_ind_loss_first", "th_ind_loss_last", "th_ind_prev_first", "th_ind_prev_last",
                        "th_ind_after_first", "th_ind_after_last"],
}


def previous_word_task(B=B, T=T, V=V, seed=DATA_SEED):
    """B random sequences of T words from V: words (B, T) and x (B, T, V + T), one-hot word | position."""
    words = np.random.default_rng(seed).integers(0, V, (B, T))
    x = np.concatenate([np.eye(V)[words], np.broadcast_to(np.eye(T), (B, T, T))], -1)
    return words, x


def head_back(a, q, k, p, W_q, W_k, dp):
    """d loss / d p -> the gradients of W_q, W_k and of the head's input a (the cells' ``causal_head_back``;
    the first cell writes the same lines out). A mask needs nothing here: a masked key has p = 0, so ds = 0."""
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(W_q.shape[1])  # J^T dp, J_ij = p_i (delta_ij - p_j)
    dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
    return (np.einsum("btf,btd->fd", a, dq), np.einsum("btf,btd->fd", a, dk), dq @ W_q.T + dk @ W_k.T)


def loss_and_grads(W_q, W_k, x, V=V):
    """Squared error of every position's output against the previous word; its gradients to W_q, W_k."""
    B, T, _ = x.shape
    d_k = W_q.shape[1]
    vals = x[..., :V]  # fixed values: a position hands over its word
    want = vals[:, :-1]  # position t should output the word at t - 1
    q, k = x @ W_q, x @ W_k
    p = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_k))
    err = p[:, 1:] @ vals - want  # position 0 has no previous word and is not scored
    loss = (err ** 2).sum(-1).mean()
    dp = np.zeros_like(p)
    dp[:, 1:] = 2 * err @ vals.transpose(0, 2, 1) / (B * (T - 1))
    dW_q, dW_k, _ = head_back(x, q, k, p, W_q, W_k, dp)
    return loss, p, dW_q, dW_k


def on_previous(p):
    """Mean weight that positions 1.. put on the position just before them: (B, T, T) -> float."""
    T = p.shape[-1]
    return float(p[:, np.arange(1, T), np.arange(T - 1)].mean())


def train(scale, steps=STEPS, lr=LR, d_k=D_K):
    """The cell's training from W = scale * N(0, 1): (rows, words, p, (W_q, W_k)): a row {step, loss,
    prev, top} every EVERY steps, and the pattern p after *steps* updates with the weights that made it."""
    words, x = previous_word_task()
    W_q, W_k = scale * np.random.default_rng(INIT_SEED).standard_normal((2, x.shape[-1], d_k))
    rows = []
    for step in range(steps + 1):
        loss, p, dW_q, dW_k = loss_and_grads(W_q, W_k, x)
        if step % EVERY == 0:
            rows.append({"step": step, "loss": float(loss), "prev": on_previous(p),
                         "top": float(p[:, 1:].max(-1).mean())})  # the scored rows' largest weight
        last = W_q, W_k
        W_q, W_k = W_q - lr * dW_q, W_k - lr * dW_k
    return rows, words, p, last


# ----------------------------------------------------------------------------- the aside: an induction head
# Two causal heads trained together on sequences that repeat: layer 1 reads words and positions, layer 2 reads
# the words and layer 1's output (not the positions, so "look a fixed distance back" is not handed to it), and
# the loss scores layer 2's output against the next word wherever the repeat makes it known.

IND_L = 4  # each sequence: IND_L distinct words, then the same again


def repeat_task(B=B, L=IND_L, V=V, seed=DATA_SEED):
    """(B, 2L): L distinct random words, then the same L words again."""
    rng = np.random.default_rng(seed)
    half = np.array([rng.permutation(V)[:L] for _ in range(B)])
    return np.concatenate([half, half], 1)


def causal_head(a, W_q, W_k):
    """q, k and the weights of one head over a (B, T, F), keys after the query masked with -inf."""
    T = a.shape[1]
    q, k = a @ W_q, a @ W_k
    s = q @ k.transpose(0, 2, 1) / np.sqrt(W_q.shape[1])
    return q, k, softmax(np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s))


def two_layer_loss_and_grads(W, words, V=V):
    """Loss, both layers' weights and the gradients of [W_q1, W_k1, W_q2, W_k2] (values fixed to the words)."""
    B, T = words.shape
    w = np.eye(V)[words]
    x = np.concatenate([w, np.broadcast_to(np.eye(T), (B, T, T))], -1)
    q1, k1, p1 = causal_head(x, W[0], W[1])
    r = np.concatenate([w, p1 @ w], -1)
    q2, k2, p2 = causal_head(r, W[2], W[3])
    t = np.arange(T // 2, T - 1)
    err = p2[:, t] @ w - np.eye(V)[words[:, t + 1]]
    dp2 = np.zeros_like(p2)
    dp2[:, t] = 2 * err @ w.transpose(0, 2, 1) / (B * len(t))
    dWq2, dWk2, dr = head_back(r, q2, k2, p2, W[2], W[3], dp2)
    dp1 = dr[..., V:] @ w.transpose(0, 2, 1)  # layer 1 learns only through what layer 2 reads of it
    dWq1, dWk1, _ = head_back(x, q1, k1, p1, W[0], W[1], dp1)
    return (err ** 2).sum(-1).mean(), p1, p2, [dWq1, dWk1, dWq2, dWk2]


def train_two_layers(steps=STEPS, lr=LR, L=IND_L):
    """The aside's cell: a row {step, loss, prev, after} every EVERY steps, and the last (p1, p2) with the
    weights [W_q1, W_k1, W_q2, W_k2] that made them.

    prev: layer 1's weight on the previous position in the first copy (the keys layer 2 reads);
    after: layer 2's weight, in the repeat, on the word after the earlier copy of the current word."""
    words = repeat_task(L=L)
    rng = np.random.default_rng(INIT_SEED)
    W = [SOFT * rng.standard_normal((n, D_K)) for n in (V + 2 * L, V + 2 * L, 2 * V, 2 * V)]
    j, t = np.arange(1, L), np.arange(L, 2 * L - 1)
    rows = []
    for step in range(steps + 1):
        loss, p1, p2, grads = two_layer_loss_and_grads(W, words)
        if step % EVERY == 0:
            rows.append({"step": step, "loss": float(loss), "prev": float(p1[:, j, j - 1].mean()),
                         "after": float(p2[:, t, t - L + 1].mean())})
        last = W
        W = [W_i - lr * g for W_i, g in zip(W, grads)]
    return rows, (p1, p2), last


def numbers():
    """The numbers the text states, formatted as the cells print them."""
    soft, *_ = train(SOFT)
    hard, *_ = train(SATURATED)
    ind, *_ = train_two_layers()
    return {
        "th_B": str(B), "th_T": str(T), "th_V": str(V), "th_steps": str(STEPS), "th_lr": f"{LR:g}",
        "th_soft_scale": f"{SOFT:g}", "th_sat_scale": f"{SATURATED:g}",
        "th_sat_factor": f"{SATURATED / SOFT:g}", "th_sat_score_factor": f"{(SATURATED / SOFT) ** 2:g}",
        "th_every": str(EVERY),
        # how much the loss fell in the first EVERY steps: the rate, whatever the starting loss
        "th_drop_first": f"{soft[0]['loss'] / soft[1]['loss']:.0f}",
        "th_sat_drop_first": f"{hard[0]['loss'] / hard[1]['loss']:.1f}",
        **{f"th_{key}": value for key, value in _formatted(soft).items()},
        **{f"th_sat_{key}": value for key, value in _formatted(hard).items()},
        "th_ind_L": str(IND_L), "th_ind_T": str(2 * IND_L),
        **{f"th_ind_{key}_{end}": f"{row[key]:.{places}f}"
           for key, places in (("loss", 4), ("prev", 3), ("after", 3))
           for end, row in (("first", ind[0]), ("last", ind[-1]))},
    }


def _formatted(rows):
    """The first and last printed rows of a training, as the cell formats them."""
    first, last = rows[0], rows[-1]
    return {"loss_first": f"{first['loss']:.4f}", "loss_last": f"{last['loss']:.4f}",
            "prev_first": f"{first['prev']:.3f}", "prev_last": f"{last['prev']:.3f}",
            "top_first": f"{first['top']:.3f}", "top_last": f"{last['top']:.3f}"}


def payload(title=None, target=None):
    """What the "train-head" cell sends with show_attention: the view's picture before Python runs."""
    from ...maths.show import build_payload

    _, words, p, _ = train(SOFT)
    _, x = previous_word_task()
    return build_payload(weights=p[0], V=x[0, :, :V], tokens=[WORDS[w] for w in words[0]],
                         title=title, target=target)
