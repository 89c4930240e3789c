"""Run by fontcache.mjs in Pyodide under Node, matplotlib loaded: builds its font cache, and its last
expression is where the cache lies in Pyodide's file system."""
import os
import matplotlib.font_manager as fm  # builds the cache, and saves it where it reads it from
target = os.path.join(os.path.dirname(fm.__file__), "fontlist.json")
if not os.path.exists(target):  # a matplotlib that reads it elsewhere: stop rather than ship a dud
    raise SystemExit(f"no font cache at {target}")
target
