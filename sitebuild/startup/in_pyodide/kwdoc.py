"""Run by fontcache.mjs in Pyodide under Node, matplotlib loaded: the property lists ``import matplotlib.pyplot``
has matplotlib write for its docstrings (``matplotlib._docstring.interpd``'s ``X:kwdoc`` keys, lessonpy's
artist_set_docs says why), as JSON; its last expression."""
import json

import matplotlib
matplotlib.use("Agg")  # no figure is made: only the import's docstrings
import matplotlib._docstring as docstring
import matplotlib.pyplot  # noqa: F401  (its import writes them)

texts = {key: text for key, text in docstring.interpd.params.items() if key.endswith(":kwdoc")}
if not texts:  # a matplotlib that keeps them elsewhere: stop rather than ship a dud
    raise SystemExit("matplotlib wrote no X:kwdoc texts")
json.dumps({"matplotlib": matplotlib._version.version, "texts": texts}, sort_keys=True)
