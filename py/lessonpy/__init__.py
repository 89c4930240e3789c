"""Python that the attention lesson loads into Pyodide (and that runs in CPython too)."""
