"""Files a cell needs in Python's file system before its code runs: a live model's weights (``files=NAME`` on a
``python run`` fence, with ``needs=page``).

A cell cannot await, and a synchronous download inside Python has none of what the live panels' downloads have:
the build's size and sha256 check, the browser's Cache Storage (a new visit or a new interpreter downloads the
files again), progress, and a Stop that interrupts it in place. So the page hands the cell's files to the worker
with the run (protocol.js, RunRequest ``files``); the worker puts each into the file system as it does a panel's
(worker/live-files.js), then runs the code, which finds them there. A restart's replay sends them again.

One entry per live model the build can ship: the site's description of its files (``describe``: {name: {size,
sha256}}) and folder URL under the keys the build fills (build.py, ``render_bodies``), and the ``lessonpy``
function that lists where Python looks for them and whether it has read them already (the panels' ``files`` call).
"""

from __future__ import annotations

import html
import json
from typing import NamedTuple


class LiveFiles(NamedTuple):
    files_key: str  # the site dict's {name: {size, sha256}}, None when the build left the model out
    url_key: str  # the site dict's folder URL, relative to a lesson page
    listing: str  # module:function -> [{name, path, loaded}] (lessonpy.models.page_files.listing)
    what: str  # for an author's error message


#: the names ``files=`` takes
LIVE_FILES = {
    "minilm": LiveFiles("live_files", "live_url", "lessonpy.models.live:files", "MiniLM's live weights and vocabulary"),
    "smollm2": LiveFiles("smollm2_files", "smollm2_url", "lessonpy.models.next_token:files",
                         "SmolLM2's live weights and tokenizer"),
}


def parse(value: str) -> tuple[str, ...]:
    """The names in a ``files=`` option (comma-separated); ValueError naming what is not known."""
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    unknown = [name for name in names if name not in LIVE_FILES]
    if unknown or not names:
        known = "; ".join(f"{name} ({entry.what})" for name, entry in LIVE_FILES.items())
        raise ValueError(f"files={value} is not known: files= takes one or more of {known}, comma-separated")
    return names


def attribute(names, site: dict) -> str:
    """The cell's ``data-files`` attribute (with its leading space): what the page sends with its run, for each
    model of *names* this site ships; empty when it ships none of them (the cell then says why it cannot run)."""
    wanted = []
    for name in names:
        entry = LIVE_FILES[name]
        if site.get(entry.files_key) and site.get(entry.url_key):
            module, function = entry.listing.split(":")
            wanted.append({"call": [module, function], "url": site[entry.url_key], "files": site[entry.files_key]})
    return f' data-files="{html.escape(json.dumps(wanted, separators=(",", ":")))}"' if wanted else ""
