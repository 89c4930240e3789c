"""The cell runner (lessonpy.runtime.runner) driven from CPython tests, as the page's worker drives it."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from lessonpy.runtime.runner import run_cell


def run(code, ns=None, cell_id="c1", **hooks):
    """Run `code` as cell `cell_id` in the namespace `ns` (a new one if None): (the run's result, ns)."""
    ns = {} if ns is None else ns
    # A thread of its own: Playwright's sync API (browser tests in the same session) keeps
    # an event loop running in the main thread, where asyncio.run() refuses to start.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run_cell(code, cell_id, ns, **hooks)).result(), ns
