"""The runtime: Python's side of the page. Running a cell (``runner``), the glue the worker calls
(``pyodide_glue``) and the one door to the page (``bridge``), figures, the reset after a memory-snapshot
restore (``restored``), the standard library's later files (``stdlib_rest``), matplotlib's docstrings
(``artist_set_docs``), and every size limit shared with the page (``limits``). It imports only itself: the
rooms above reach it (``maths`` draws through ``bridge``), never the other way, and it knows no model or course.
"""
