"""MiniLM's and SmolLM2's real weights for Lesson 6's cells, which check the reader's block against both models.

The weights are the live panels' files (:mod:`lessonpy.models.live`, :mod:`lessonpy.models.smollm2`), which
``python3 build.py`` puts into the site under ``data/minilm-live/`` and ``data/smollm2-live/`` unless
``--no-live-model``. A cell that reads them says so on its fence (``files=minilm`` or ``files=smollm2``,
:mod:`sitebuild.pages.cell_files`), and the page's worker puts them into the folders the panels use before the
cell's code runs, as it does for a panel: checked against the build's size and sha256, kept in the browser's Cache
Storage, with progress in the cell's state line and a Stop that ends the download in place. Python never downloads
them itself (a synchronous download had no check, no cache and no progress). The models read them from there
once per interpreter (and drop the file system's copy: :mod:`lessonpy.models.page_files`). In CPython (a
downloaded notebook) they are looked for in ``minilm-live/`` and ``smollm2-live/`` beside it.

A site without them (``--no-live-model``; most of the tests' sites), a notebook without the folders, or code run
from a cell that does not ask for them is no error: each function returns None and the cell prints
:data:`MISSING`, so the rest of the lesson runs as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lessonpy.models import live, smollm2

#: what a cell prints when the files are not to be had
MISSING = ("The real weights are not here: this site was built without the live models (python3 build.py "
           "--no-live-model), or this code runs in a cell that does not fetch them (the lesson's cells that "
           "read them do), or this notebook has no minilm-live/ or smollm2-live/ folder beside it. The lesson "
           "goes on without this check.")


def _folder(page_folder: str, notebook_folder: str, names) -> str | None:
    """Where the files *names* are: in the page, its folder (the worker put them there); else the folder of that
    name beside a notebook; None when it does not hold them all."""
    path = Path(page_folder if sys.platform == "emscripten" else notebook_folder)
    return str(path) if all((path / n).is_file() for n in names) else None


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
