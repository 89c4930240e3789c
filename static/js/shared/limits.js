// Generated from py/lessonpy/runtime/limits.py (python3 -m sitebuild.pages.page_copies); do not edit.
// The build writes this file into the site from Python, and tests/unit/test_limits.py keeps
// this copy (which the component fixture loads straight from the repository) equal.
export const LIMITS = Object.freeze({
  MAX_T: 512,
  MAX_D: 4096,
  OUTPUT_CHARS: 200000,
  OUTPUT_CHUNK_CHARS: 65536,
  MESSAGE_CHARS: 2000,
  FIGURES_PER_RUN: 20,
  CUT_MARK: " \u2026 [{chars} characters not shown] \u2026 ",
  CUT_MARK_ROOM: 49,
  widgets: {"attention-view": {"T": [2, 64], "d_k": [1, 512]}, "dk-explorer": {"T": [2, 32], "d_k": [4, 512], "temperature": [0.25, 4.0]}, "heads": {"T": [2, 16], "C": [2, 768], "H": [1, 64]}, "lookup-view": {"keys": [1, 32], "temperature": [0.015625, 4.0]}, "residual-stream": {"layers": [1, 64]}},
});
