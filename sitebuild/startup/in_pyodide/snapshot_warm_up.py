"""Run by snapshot.mjs in Pyodide under Node before the image is taken: imports what the reader's first
cells need, and runs the paths they take (a generator, matmul, a softmax), whose lazily built state is then in
the image."""
import gc, importlib
importlib.invalidate_caches()
import numpy, numpy.random, numpy.linalg, numpy.fft
import lessonpy.runtime.pyodide_glue, lessonpy.runtime.runner, lessonpy.maths.show, lessonpy.maths.attention, lessonpy.runtime.restored
import lessonpy.runtime.stdlib_rest  # the boot installs its finders at once after a restore: importing it there cost 50-130 ms
_x = numpy.random.default_rng(0).standard_normal((4, 8))
_w = numpy.exp(_x @ _x.T); _w /= _w.sum(axis=-1, keepdims=True)
del _x, _w
gc.collect()
