"""The docs name only what exists: every path and public constant written in backticks in README.md and
docs/*.md is in the tree, so a rename that forgets a doc fails here instead of drifting.

A path is a backticked token with a `/` or a known file extension. It exists when it resolves:
- from the project's root, or from the doc's folder;
- in a table row whose first cell is a folder (README's Layout: `cells.js` in the `static/js/page/` row), from
  that folder; a folder in a section whose heading names a folder (design.md's `worker/` under "… in
  `static/js/`"), from that folder too;
- else, a name with no folder, or a path as a tail of the tree's paths (`worker/boot.js`), anywhere in the tree.
A constant is an UPPER_CASE token; it exists when the code (Python, JavaScript, shell) has it as a word.

The exceptions, each named in IS_NOT_A_PATH or resolves_elsewhere: commands and URLs; placeholders (`<hash>`:
the built site's families of files); what .gitignore says is generated; files the build or the page makes,
whose names the code holds as a string (`widgets.json`, `worker-bundle.js`).
"""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXTENSIONS = (".py", ".js", ".mjs", ".md", ".css", ".html", ".json", ".yml", ".sh", ".txt")
CODE_SUFFIXES = {".py", ".js", ".mjs", ".sh", ".ini", ".html"}
# The code's folders: what a constant or a made file's name is looked for in (not the docs, not the data).
CODE_FOLDERS = ("build.py", "setup.sh", "pytest.ini", "sitebuild", "static/js", "py", "templates", "tests", "bench",
                ".ci")

MEDIA_TYPES = {"application", "text", "image", "font"}
BACKTICKED = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
HEADING = re.compile(r"^#+ ")


def is_path(token: str) -> bool:
    return ("/" in token or token.endswith(EXTENSIONS)) and not IS_NOT_A_PATH(token)


def IS_NOT_A_PATH(token: str) -> bool:  # noqa: N802 (named as the exception it is)
    """Commands (`python3 build.py serve`), URLs, options (`--out DIR`, `title=NAME.py`), markup (`</script>`),
    absolute paths (`/usr/bin/chromium`, a machine's), media types (`application/wasm`), and placeholders:
    `assets/<hash>/`, `lessons/<slug>/widgets.json` name a family of the built site's files, not one of the tree."""
    return (any(c.isspace() for c in token) or "://" in token or token.startswith(("-", "/"))
            or any(c in token for c in "<>{}=") or token.split("/")[0] in MEDIA_TYPES)


@lru_cache(maxsize=None)
def tree() -> tuple[str, ...]:
    """Every file of the tree that git tracks or would (not what .gitignore says is generated), and its folders."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    files = [name for name in listed if (ROOT / name).is_file()]  # a deleted file is still listed until committed
    folders = {f"{name.rsplit('/', i)[0]}/" for name in files for i in range(1, name.count("/") + 1)}
    return tuple(files) + tuple(sorted(folders))


@lru_cache(maxsize=None)
def code_text() -> str:
    files = [name for name in tree() if name.startswith(CODE_FOLDERS) and Path(name).suffix in CODE_SUFFIXES
             and ROOT / name != Path(__file__)]  # not this file, whose probe names what is missing
    return "\n".join((ROOT / name).read_text(encoding="utf-8", errors="replace") for name in files)


def generated(token: str) -> bool:
    """What .gitignore says the build, npm or the tests make (`site/`, `.cache/`, `py/dist/`)."""
    ignored = [line.strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
               if line.strip() and not line.startswith("#") and "*" not in line]
    return any(token.strip("/") == name or token.startswith(name + "/") for name in ignored)


def made_by_the_code(token: str) -> bool:
    """A file or folder the build or the page makes (`worker-bundle.js`, `js/bundle/`, `mpl/kwdoc.json`: paths of
    the built site, not of the tree): the code holds its name as a string. Not for a path into the tree's own
    folders (`static/js/worker/no-such-module.js`), which must exist."""
    parts = token.removeprefix("./").strip("/").split("/")
    if len(parts) > 1 and (ROOT / parts[0]).is_dir():
        return False
    return re.search(rf"[\"'`/]{re.escape(parts[-1])}[\"'`]", code_text()) is not None


def exists(token: str, bases: list[str], anywhere: bool) -> bool:
    """Whether *token* is a path of the tree from the root or one of *bases*, or (*anywhere*) a tail of one."""
    pattern = token.rstrip("/")
    for base in ["", *bases]:
        if list(ROOT.glob(f"{base}{pattern}")) if "*" in pattern else (ROOT / f"{base}{pattern}").exists():
            return True
    regex = re.compile(r"(?:^|/)" + re.escape(pattern).replace(r"\*", "[^/]*") + r"/?$")
    return anywhere and any(regex.search(path) for path in tree())


def resolves_elsewhere(token: str) -> bool:
    return generated(token) or made_by_the_code(token)


def names(doc: Path, text: str) -> list[tuple[int, str, list[str], bool]]:
    """(line, token, bases, in a row) of every backticked token of *doc* outside code blocks; *bases* the
    folders (from the root, ending in /) of the doc, of its section's heading and of the token's table row."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out, section = [], []
    folder = doc.parent.relative_to(ROOT).as_posix()
    doc_base = "" if folder == "." else f"{folder}/"
    for number, line in enumerate(text.splitlines(), 1):
        tokens = BACKTICKED.findall(line)
        if HEADING.match(line):
            section = [t for t in tokens if t.endswith("/") and (ROOT / t).is_dir()]
        bases, row = [doc_base, *section], []
        if line.startswith("|") and len(line.split("|")) > 2:
            row = [f"{b}{t}" for t in BACKTICKED.findall(line.split("|")[1]) if t.endswith("/")
                   for b in ["", *section] if (ROOT / b / t).is_dir()]
        out += [(number, token, bases + row, bool(row)) for token in tokens]
    return out


def drift(doc: Path, text: str | None = None) -> list[str]:
    """What *doc* (its *text*, else the file's) names that is not there, one line each."""
    missing = []
    for number, token, bases, in_row in names(doc, doc.read_text(encoding="utf-8") if text is None else text):
        where = f"{doc.relative_to(ROOT)}:{number}: `{token}`"
        if CONSTANT.fullmatch(token):
            if not re.search(rf"\b{token}\b", code_text()):
                missing.append(f"{where}: no code names this constant")
        elif is_path(token) and not exists(token, bases, anywhere=not in_row) and not resolves_elsewhere(token):
            missing.append(f"{where}: no such path")
    return missing


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_and_constant_a_doc_names_exists(doc):
    missing = drift(doc)
    assert not missing, "\n".join(missing)


def test_the_check_sees_a_missing_path_and_constant():
    doc = ROOT / "docs" / "drift-probe.md"
    text = ("## In `static/js/`\n| `worker/` | `boot.js`, `kept.js` |\n|---|---|\n"
            "| `static/js/page/` | `cells.js`, `no-such-file.js` |\n"
            "`sitebuild/startup/__init__.py`, `NO_SUCH_CONSTANT`, `OUTPUT_CHARS`, `static/js/worker/no-such-module.js`\n")
    assert drift(doc, text) == ["docs/drift-probe.md:4: `no-such-file.js`: no such path",
                          "docs/drift-probe.md:5: `NO_SUCH_CONSTANT`: no code names this constant",
                          "docs/drift-probe.md:5: `static/js/worker/no-such-module.js`: no such path"]

