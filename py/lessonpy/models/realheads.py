"""Attention of two real trained models on a few sentences, shipped as small files, and what it shows.

The data (``static/data/realheads/<model>.npz``, made by ``python3 -m sitebuild.realheads.extract``):

* ``meta``: UTF-8 JSON (as uint8): the model's name, ``layers``, ``heads``, ``kv_heads``, ``head_dim``,
  ``causal``, the ``sentences`` (``text``, display ``tokens``, token ``ids``), and the ``featured`` heads
  (``job``, ``layer``, ``head``; ``score`` over ``count`` query positions of the sentences; ``test``,
  ``test_score``, ``test_runner_up``, ``chance``: the head test on repeated random tokens that picked it, see
  :func:`featured_heads`) with their ``q``/``k``/``v`` shipped.
* ``w<s>``: the attention weights of sentence s, every layer and head, as uint8 levels w * 255 rounded to
  nearest (error <= 1/510 < 0.002 per weight). A causal model's rows are stored as the lower triangle only
  (row t keeps its t + 1 first weights), row after row; an encoder's as full T x T rows.
* ``q<s>``, ``k<s>``, ``v<s>``: float16 (F, T, D) for the F featured heads, in ``featured`` order; for the
  causal model RoPE is already applied to q and k.
* ``n<s>``: float16 (L, H, T), every head's ``||v_j W_O^h||`` for every key j of sentence s: the size of what
  that key passes on through the head (:mod:`lessonpy.models.head_writes`, which makes the weighted pattern).

Rows are *not* renormalised after decoding: many tiny weights rounding to 0 would make the big ones grow
by up to ~0.02, ten times the quantisation error. A decoded row sums to 1 within T / 510.

Python computes, JavaScript draws: :meth:`Heads.pattern` and friends return float32 arrays that the page's
view receives flat, with their shape, like every other array (see :mod:`lessonpy.maths.show`).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np

from . import ablation, head_tests, head_writes
from .site_data import DataBroken, DataMissing, HeadsError, download

LEVELS = 255
#: Largest error of one decoded weight: half a quantisation step.
WEIGHT_ERROR = 0.5 / LEVELS
#: The extraction refuses featured heads whose weights, recomputed from the float16 Q and K, move further
#: than this from the float32 model's, so the reader's attention on the shipped Q, K reproduces the shipped
#: pattern within WEIGHT_ERROR + QK_ERROR (about 0.004). Measured: 6.2e-4 (MiniLM), 1.8e-3 (SmolLM2, whose
#: large sink scores magnify float16's relative error of 2**-11); float32 Q, K would add 280 KB.
QK_ERROR = 2e-3
MODELS = ("minilm", "smollm2")
#: where the committed data lives in the project (CPython); the page fetches the same files from the site
DATA_DIR = Path(__file__).resolve().parents[3] / "static" / "data" / "realheads"


# ---------------------------------------------------------------------------- the file format

def triangle_index(T):
    """The flat indices of the lower triangle (diagonal included) of a T x T matrix, row after row."""
    rows, cols = np.tril_indices(T)
    return rows * T + cols


def encode_weights(w, causal):
    """(L, H, T, T) weights in [0, 1] -> flat uint8: levels rounded to nearest, lower triangle if causal."""
    L, H, T, _ = w.shape
    flat = w.reshape(L, H, T * T)
    if causal:
        flat = flat[..., triangle_index(T)]
    return np.rint(np.clip(flat, 0.0, 1.0) * LEVELS).astype(np.uint8).ravel()


def decode_weights(data, L, H, T, causal):
    """The inverse of :func:`encode_weights`: float32 (L, H, T, T), zeros above the diagonal if causal."""
    levels = np.asarray(data, dtype=np.uint8)
    n = T * (T + 1) // 2 if causal else T * T
    if levels.size != L * H * n:
        raise DataBroken(f"expected {L * H * n} weight levels for L={L}, H={H}, T={T}, got {levels.size}")
    out = np.zeros((L, H, T * T), dtype=np.float32)
    index = triangle_index(T) if causal else slice(None)
    out[..., index] = levels.reshape(L, H, n).astype(np.float32) / LEVELS
    return out.reshape(L, H, T, T)


def write_npz(path, meta, arrays):
    """Save one model's data (``meta`` as JSON, ``arrays`` by name) as a deflated ``.npz`` that
    ``np.load`` reads; unlike ``np.savez_compressed`` it stamps no date, so the same data gives the same bytes."""
    import zipfile

    blob = np.frombuffer(json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode(), dtype=np.uint8)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, a in {"meta": blob, **arrays}.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(a), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), buffer.getvalue(),
                        compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)


class Heads:
    """One model's shipped attention data; :func:`load` gives it in the page and in CPython alike."""

    def __init__(self, meta: dict, arrays: dict):
        self.meta, self.arrays = meta, arrays
        self.name, self.causal = meta["model"], bool(meta["causal"])
        self.layers, self.heads, self.head_dim = meta["layers"], meta["heads"], meta["head_dim"]
        self.sentences = meta["sentences"]
        self.featured = meta.get("featured", [])
        self._weights = {}

    @classmethod
    def from_bytes(cls, npz_bytes: bytes):
        """Read the data from the bytes of an ``.npz`` file."""
        try:
            with np.load(io.BytesIO(npz_bytes)) as z:
                arrays = {name: z[name] for name in z.files}
            meta = json.loads(arrays.pop("meta").tobytes().decode())
            return cls(meta, arrays)
        except Exception as exc:  # noqa: BLE001 (any broken file gets the same clear message)
            raise DataBroken(f"not a real-heads data file: {type(exc).__name__}: {exc}") from None

    @classmethod
    def load(cls, name, folder=None):
        """Read ``<name>.npz`` from *folder*; by default from the current folder (where a downloaded
        notebook keeps it) or else the project's committed data."""
        if name not in MODELS:
            raise HeadsError(f"unknown model {name!r}: choose one of {', '.join(MODELS)}")
        places = [Path(folder)] if folder else [Path.cwd(), DATA_DIR]
        for place in places:
            path = place / f"{name}.npz"
            if path.is_file():
                return cls.from_bytes(path.read_bytes())
        raise DataMissing(f"{name}.npz is not in {' or '.join(str(p) for p in places)}: save it next to the "
                         "notebook (the lesson page links it under 'Take it home'), or in the project run "
                         "python3 -m sitebuild.realheads.extract")

    def tokens(self, s):
        """The display tokens of sentence *s* (a list of T strings)."""
        return self._sentence(s)["tokens"]

    def ids(self, s):
        """The token ids of sentence *s*: int array (T,)."""
        return np.asarray(self._sentence(s)["ids"])

    def weights(self, s):
        """Every layer's and head's weights on sentence *s*: float32 (L, H, T, T)."""
        if s not in self._weights:
            T = len(self.tokens(s))
            w = decode_weights(self.arrays[f"w{s}"], self.layers, self.heads, T, self.causal)
            w.setflags(write=False)  # kept for the next call: an edit in a cell must not change the data
            self._weights[s] = w
        return self._weights[s]

    def norms(self, s):
        """Every head's ``||v_j W_O^h||`` on sentence *s*, for every key j: float32 (L, H, T)."""
        T = len(self.tokens(s))
        n = self.arrays.get(f"n{s}")
        if n is None or n.shape != (self.layers, self.heads, T):
            raise DataBroken(f"{self.name}: expected the value norms n{s} of shape {(self.layers, self.heads, T)}, "
                             f"got {None if n is None else n.shape}")
        return n.astype(np.float32)

    def written(self, s):
        """Every head's pattern weighted by what each key passes on (:func:`head_writes.written`): float32
        (L, H, T, T), each head divided by its largest ``||v_j W_O^h||`` on sentence *s*."""
        return head_writes.written(self.weights(s), self.norms(s))

    def pattern(self, s, layer, head):
        """One head's weights on sentence *s*: float32 (T, T); row t is how query t spreads its attention."""
        self._check_head(layer, head)
        return self.weights(s)[layer, head].copy()

    def featured_head(self, job):
        """The featured head doing *job* (a dict: job, layer, head, score, count)."""
        for i, f in enumerate(self.featured):
            if f["job"] == job:
                return {**f, "index": i}
        raise HeadsError(f"{self.name} has no featured head for {job!r}: "
                         f"choose one of {', '.join(f['job'] for f in self.featured)}")

    def qkv(self, s, job):
        """The featured head's Q, K, V on sentence *s*: three float32 arrays (T, D). For a causal model
        RoPE is already in Q and K; what remains to add is the causal mask."""
        i = self.featured_head(job)["index"]
        return tuple(self.arrays[f"{name}{s}"][i].astype(np.float32) for name in "qkv")

    def _sentence(self, s):
        if not isinstance(s, (int, np.integer)) or not 0 <= s < len(self.sentences):
            raise HeadsError(f"sentence must be 0 ... {len(self.sentences) - 1}, got {s!r}")
        return self.sentences[s]

    def _check_head(self, layer, head):
        if not (0 <= layer < self.layers and 0 <= head < self.heads):
            raise HeadsError(f"{self.name} has layers 0 ... {self.layers - 1} and heads 0 ... {self.heads - 1}, "
                             f"got layer {layer}, head {head}")


def load(name):
    """The shipped data of model *name* ("minilm" or "smollm2") as :class:`Heads`, read once and kept.
    In the page (Pyodide) it is downloaded from the site the first time (a few hundred KB); in CPython it is
    read from the current folder (a downloaded notebook's) or the project's ``static/data/realheads/``."""
    if name not in MODELS:
        raise HeadsError(f"unknown model {name!r}: choose one of {', '.join(MODELS)}")
    if name not in _loaded:
        _loaded[name] = Heads.from_bytes(download(f"{name}.npz")) if sys.platform == "emscripten" else Heads.load(name)
    return _loaded[name]


_loaded: dict = {}


def grid_payload(heads: Heads, s, target=None):
    """Everything a thumbnail grid of all the heads of one sentence needs, as the payload of one "arrays"
    event (``bridge.emit("arrays", grid_payload(...))``): ``arrays.weights`` is float32 (L, H, T, T), which
    the worker sends as one flat Float32Array plus its shape; ``featured`` names the heads with a job, so a
    click on any thumbnail can open ``heads.pattern(s, layer, head)`` (and, for a featured head, its Q, K, V)
    in the linked view. ``arrays.written`` is the same shape: each pattern weighted by what each key passes on
    (:meth:`Heads.written`), shown beside the open head's plain pattern."""
    return {"view": "heads-grid", "target": target, "model": heads.name, "title": heads.meta.get("title", heads.name),
            "causal": heads.causal, "sentence": s, "tokens": heads.tokens(s), "text": heads.sentences[s]["text"],
            "layers": heads.layers, "heads": heads.heads,
            "featured": [{k: f[k] for k in ("job", "layer", "head", "score", "test", "test_score", "chance")}
                         for f in heads.featured],
            "arrays": {"weights": heads.weights(s), "written": heads.written(s)}}


# ---------------------------------------------------------------------------- what a head does

def _positions(ids, causal):
    """For each query t, the earlier (or, without a mask, any other) positions holding the same token."""
    same = ids[:, None] == ids[None, :]
    np.fill_diagonal(same, False)
    return np.tril(same) if causal else same


def job_scores(weights, ids, causal):
    """Scores of every head on one sentence: dict job -> (sum over query positions (L, H), count).

    Each score is a mean over query positions of the weight a head puts where the job says:
      previous   w[t, t-1], for t >= 1
      next       w[t, t+1], for t <= T-2 (encoder only: a causal head cannot look ahead)
      first      w[t, 0], for t >= 1 (for MiniLM token 0 is [CLS]); the "sink"
      last       w[t, T-1], for t <= T-2 (encoder only: MiniLM's last token is [SEP])
      same       total weight on the other positions holding the same token as t, over the t where
                 there is one (for the causal model only earlier ones: a duplicate-token head)
      induction  total weight on the tokens that *followed* earlier occurrences of token t (position s+1
                 for each s < t-1 with ids[s] == ids[t]), over the t where there is one
    """
    T = len(ids)
    t = np.arange(T)
    out = {"previous": (weights[..., t[1:], t[1:] - 1].sum(-1), T - 1),
           "first": (weights[..., t[1:], 0].sum(-1), T - 1)}
    if not causal:
        out["next"] = (weights[..., t[:-1], t[:-1] + 1].sum(-1), T - 1)
        out["last"] = (weights[..., t[:-1], T - 1].sum(-1), T - 1)
    same = _positions(ids, causal)
    rows = np.flatnonzero(same.any(1))
    out["same"] = ((weights[..., rows, :] * same[rows]).sum((-1, -2)), len(rows))
    after = np.zeros((T, T), dtype=bool)
    earlier = _positions(ids, True)
    for q, s in zip(*np.nonzero(earlier)):
        if s + 1 < q:
            after[q, s + 1] = True
    rows = np.flatnonzero(after.any(1))
    out["induction"] = ((weights[..., rows, :] * after[rows]).sum((-1, -2)), len(rows))
    return out


def head_scores(heads: Heads):
    """Every job's score for every head, over all the sentences: dict job -> (scores (L, H), count)."""
    total = {}
    for s in range(len(heads.sentences)):
        for job, (value, n) in job_scores(heads.weights(s), heads.ids(s), heads.causal).items():
            acc, count = total.get(job, (0.0, 0))
            total[job] = (acc + value, count + n)
    return {job: (acc / count, count) for job, (acc, count) in total.items()}


def best_heads(heads: Heads, jobs):
    """The best head for each job *on the sentences*: a list of dicts (job, layer, head, score, count, runner_up).
    Not how the featured heads are chosen (:func:`featured_heads`): a few natural sentences have few repeats."""
    scores = head_scores(heads)
    found = []
    for job in jobs:
        table, count = scores[job]
        order = np.argsort(table, axis=None)[::-1]
        layer, head = np.unravel_index(order[0], table.shape)
        found.append({"job": job, "layer": int(layer), "head": int(head), "score": round(float(table.flat[order[0]]), 4),
                      "runner_up": round(float(table.flat[order[1]]), 4), "count": int(count)})
    return found


def featured_heads(heads: Heads, jobs, tests):
    """The featured head of each job: the best head by the job's test on repeated random tokens (*tests* is
    ``head_tests.summaries()[model]``), with its ``score`` on the sentences over ``count`` query positions and the
    test's ``test``, ``test_score``, ``test_runner_up`` and ``chance``."""
    scores = head_scores(heads)
    found = []
    for job in jobs:
        test = head_tests.TEST_OF_JOB[job]
        s = tests[test]
        layer, head = s["best"]["layer"], s["best"]["head"]
        table, count = scores[job]
        found.append({"job": job, "layer": layer, "head": head, "score": round(float(table[layer, head]), 4),
                      "count": int(count), "test": test, "test_score": round(s["best"]["score"], 4),
                      "test_runner_up": round(s["runner_up"]["score"], 4), "chance": round(s["chance"], 4)})
    return found


# ---------------------------------------------------------------------------- the lesson's numbers

#: the featured head (model, job) and sentence each "your attention on a real head" cell uses
CELL_HEADS = {"real-head-minilm": ("minilm", "previous", 0), "real-head-smollm2": ("smollm2", "induction", 3)}
#: cell id -> the numbers it prints (merged into lessons/attention_numbers.py's CELL_PRINTS)
CELL_PRINTS = {cell: [f"{cell.replace('-', '_')}_diff"] for cell in CELL_HEADS}


def featured_scores(heads: Heads, s, job):
    """A featured head's scores on sentence *s* from its shipped Q, K: Q Kᵀ / sqrt(D), float32 (T, T), with the
    causal mask (-inf above the diagonal) for a causal model."""
    Q, K, _ = heads.qkv(s, job)
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    if heads.causal:
        T = len(Q)
        scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    return scores.astype(np.float32)


def reader_attention(heads: Heads, s, job):
    """The reader's Step 1 attention on a featured head's shipped Q, K (plus the causal mask for a causal model):
    (its scores, :func:`featured_scores`, and their softmax, the weights), each (T, T)."""
    from ..maths.attention import softmax  # the same stable softmax the lesson builds in Step 1

    scores = featured_scores(heads, s, job)
    return scores, softmax(scores)


def reproduce(heads: Heads, s, job):
    """The reader's Step 1 attention on a featured head (:func:`reader_attention`): returns (weights (T, T), the
    largest difference from the shipped pattern)."""
    f = heads.featured_head(job)
    _, mine = reader_attention(heads, s, job)
    return mine, float(np.abs(mine - heads.pattern(s, f["layer"], f["head"])).max())


def numbers():
    """The numbers the lesson's "Real heads" section states of the heads themselves, computed from the committed
    data (the lesson's numbers module adds those of the head tests, the ablation and the changed heads).
    ``<model>_<job>_layer`` and ``_head`` name the featured head (the test's pick), ``_score`` its mean over
    ``_count`` positions of the sentences, ``_runner_up`` the best other head's there; ``_sentence_best_...`` the
    head the sentences alone would pick, its test score and rank, and (SmolLM2) what knocking it out costs."""
    out = {"realheads_weight_error": f"{WEIGHT_ERROR:.4f}", "realheads_qk_error": f"{QK_ERROR:.3f}",
           "realheads_bound": f"{WEIGHT_ERROR + QK_ERROR:.3f}"}
    rowsum = 0.0  # how far a stored row's sum is from 1: the rows are not renormalised (the module's docstring)
    for name in MODELS:
        heads = Heads.load(name)
        rowsum = max(rowsum, *(float(np.abs(heads.weights(s).sum(-1) - 1).max()) for s in range(len(heads.sentences))))
        out[f"{name}_sentences"] = len(heads.sentences)
        out[f"{name}_heads_total"] = heads.layers * heads.heads
        # recomputed from the weights as shipped, not copied from the file's own summary
        on_sentences = head_scores(heads)
        tests = head_tests.load()["models"][name]["tests"]
        for f in featured_heads(heads, [f["job"] for f in heads.featured], head_tests.summaries()[name]):
            key, (table, count) = f"{name}_{f['job']}", on_sentences[f["job"]]
            others = np.delete(table.ravel(), f["layer"] * heads.heads + f["head"])
            best = np.unravel_index(np.argmax(table), table.shape)
            out.update({f"{key}_layer": str(f["layer"]), f"{key}_head": str(f["head"]),
                        f"{key}_score": f"{f['score']:.2f}", f"{key}_runner_up": f"{others.max():.2f}",
                        f"{key}_count": f["count"],
                        # the head the sentences alone would pick, and where the test ranks it
                        f"{key}_sentence_best_layer": str(best[0]), f"{key}_sentence_best_head": str(best[1]),
                        f"{key}_sentence_best_score": f"{table.max():.2f}",
                        f"{key}_sentence_best_test_rank": str(head_tests.rank(tests[f["test"]]["scores"], *best)),
                        f"{key}_sentence_best_test_score": f"{tests[f['test']]['scores'][best]:.2f}"})
            if name == "smollm2":  # what knocking that head out costs (lessonpy.models.ablation)
                out.update(ablation.head_numbers(f"{key}_sentence_best_ablation", *map(int, best)))
    for cell, (name, job, s) in CELL_HEADS.items():
        heads, key = load(name), cell.replace("-", "_")
        _, diff = reproduce(heads, s, job)
        f = heads.featured_head(job)
        total, count = job_scores(heads.weights(s), heads.ids(s), heads.causal)[job]
        mine, stored = reproduce(heads, s, job)[0], heads.pattern(s, f["layer"], f["head"])
        renormalised = float(np.abs(mine - stored / stored.sum(-1, keepdims=True)).max())
        out.update({f"{key}_diff": f"{diff:.4f}", f"{key}_renorm_diff": f"{renormalised:.4f}",
                    f"{key}_sentence": heads.sentences[s]["text"],
                    f"{key}_score": f"{total[f['layer'], f['head']] / count:.2f}", f"{key}_count": count})
    out["realheads_rowsum_max"] = f"{rowsum:.3f}"
    return out
