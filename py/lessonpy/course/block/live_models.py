"""MiniLM's and SmolLM2's real weights for Lesson 6's cells, which check the reader's block against both models.

The weights are the live panels' files (:mod:`lessonpy.models.live`, :mod:`lessonpy.models.smollm2`), which
``python3 build.py`` puts into the site under ``data/minilm-live/`` and ``data/smollm2-live/`` unless
``--no-live-model``. Those panels have the page's worker fetch them; a cell cannot await, so here Python downloads
them itself, synchronously (a worker may), into the folders the panels use, and the models read them from there
once per interpreter (and drop the file system's copy: :mod:`lessonpy.models.page_files`). In CPython (a
downloaded notebook) they are looked for in ``minilm-live/`` and ``smollm2-live/`` beside it.

A site without them (``--no-live-model``; the tests' sites) or a notebook without the folders is no error: each
function returns None and the cell prints :data:`MISSING`, so the rest of the lesson runs as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lessonpy.models import live, site_data, smollm2

#: from the worker's script (assets/<hash>/js/worker/worker-bundle.js) to the site's root, where data/ is
SITE_ROOT = "../../../../"
#: what a cell prints when the files are not to be had
MISSING = ("The real weights could not be had: this site was built without the live models (python3 build.py "
           "--no-live-model), their download failed, or this notebook has no minilm-live/ or smollm2-live/ "
           "folder beside it. The lesson goes on without this check.")


def _download(site_folder: str, name: str, dest: Path) -> bool:
    """Put data/<site_folder>/<name> of the site into the file *dest*; False when the site does not serve it."""
    try:
        site_data.fetch_into(f"{SITE_ROOT}data/{site_folder}/{name}", name, dest)
    except site_data.DataMissing:
        return False
    return True


def _folder(page_folder: str, site_folder: str, names) -> str | None:
    """Where the files *names* are: the page's folder, filled from the site first; else the folder of that name
    beside a notebook; None when neither has them all."""
    if sys.platform != "emscripten":
        here = Path(site_folder)
        return str(here) if all((here / n).is_file() for n in names) else None
    path = Path(page_folder)
    path.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (path / name).is_file() and not _download(site_folder, name, path / name):
            return None
    return page_folder


def minilm():
    """MiniLM's (weights, tokenizer) (:func:`lessonpy.models.live.model`: name -> read-only float32 array, and
    its WordPiece), or None when they are not to be had."""
    if live.files()[0]["loaded"]:  # read already in this interpreter: no file is needed
        return live.model()
    folder = _folder(live.FOLDER, "minilm-live", (live.WEIGHTS_NAME, live.VOCAB_NAME))
    return None if folder is None else live.model(folder)


def smollm2_model():
    """SmolLM2's (weights, tokenizer) (:func:`lessonpy.models.smollm2.load`), or None when not to be had."""
    if smollm2.loaded():
        return smollm2.load()
    folder = _folder(smollm2.FOLDER, "smollm2-live", (smollm2.WEIGHTS_NAME, smollm2.TOKENIZER_NAME))
    return None if folder is None else smollm2.load(folder)
