"""The real heads' shipped data files as the page has them: fetched from the site's data folder, and the
errors a model's data raises. Its own module, beneath :mod:`realheads` and :mod:`ablation`, which both read
files of that folder (before, ablation imported realheads for :func:`download` and realheads imported ablation).
"""

from __future__ import annotations


class HeadsError(ValueError):
    """The data is missing, malformed, or asked for something it does not hold."""


# The page says what failed in its own words from these classes' names (realheads.js, DATA_FAILURES), never from
# their messages, which name a URL or numpy's error for someone debugging in Python.
class DataMissing(HeadsError):
    """A model's data file could not be had: the download failed, or it is not on disk."""


class DataBroken(HeadsError):
    """What came is not a model's data: not an .npz, or one whose arrays do not fit its description."""


#: the site path of the data, relative to the worker script (assets/<hash>/js/worker/worker-bundle.js)
SITE_PATH = "../../data/realheads/"


def download(filename):
    """Fetch a file of the site's data folder synchronously (a worker may): cells run top to bottom without await."""
    return fetch(f"{SITE_PATH}{filename}", filename)


def fetch(path, filename):
    """The bytes of the site's file at *path*, relative to the worker's script, downloaded synchronously;
    :class:`DataMissing` naming *filename* when the site does not serve it. Pyodide only."""
    return _get(path, filename).to_bytes()


def _get(path, filename):
    """The site's file at *path* as a JavaScript ArrayBuffer, downloaded synchronously (a worker may)."""
    import js  # Pyodide only: the worker's own URL says where the site is

    url = js.URL.new(path, js.location.href).href
    request = js.XMLHttpRequest.new()
    request.open("GET", url, False)
    request.responseType = "arraybuffer"
    try:
        request.send(None)
    except Exception as exc:  # noqa: BLE001 - a network error is thrown (a JsException), a 404 answered: one failure
        raise DataMissing(f"could not download {filename} from {url}: {type(exc).__name__}") from None
    if request.status != 200:
        raise DataMissing(f"could not download {filename} from {url}: HTTP {request.status}")
    return request.response
