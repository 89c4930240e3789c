"""The boot plan: which of the site's Pyodide files a visit fetches, when, and where they go in Python's file system.

One structure, written here and nowhere else, into every lesson page's config (`plan`) and into the service
worker's manifest (templates/sw.js keeps every file of the variants the page picked). One worker module reads
it (static/js/worker/plan.js): it picks each kind's variant by its probe, once, and hands the rest of the
worker a flat plan of URLs.

    {
      "probes": {kind: file},          the small stored archive that picks each kind's variant (archives.py)
      "kinds": {kind: {variant: {      kind: "stdlib" (zips) or "wheels" (the lock and the wheels it names);
                                       variant: "deflated" or "stored" (sitebuild/startup/archives.py)
        "start":    [{file, option}],  every visit, at once: the standard library, or the lock (`option`: the
                                       loadPyodide option that names it)
        "normal":   [{file, name, sha256}],  a normal start, at once: the boot packages' wheels, which the
                                       worker downloads itself and serves to Pyodide's install
        "restore":  [file],            a restore from the snapshot, at once: the boot packages' libraries,
                                       unzipped into site-packages before the image goes in
        "later":    [{file, modules, into, unpack}],  every visit, after the first output: the standard
                                       library's rest (a zip written at `into` and mounted)
        "restored": [{file, modules, into, unpack}],  after a restore, after the first output: the boot
                                       packages' other files (unzipped into the folder `into`)
      }}},
      "modules": {name: [module]}      the dotted names each later file holds, under the name a later item's
                                       `modules` gives (its deflated file's): the variants share one list
    }

Files are relative to the Pyodide folder; a later file's modules are the dotted names it holds (the finder of
lessonpy.runtime.stdlib_rest fetches it at once when one of them is imported before it came). A page carries the plan
without them (page_plan): they are a file of the Pyodide folder (MODULES_FILE, write_modules), which the
worker reads while Python starts and needs once it is up, not 11 KB of every lesson's HTML. A kind's files follow
its probe: the split libraries and rests are zips, so they go with the standard library's variant; whole
wheels (a folder whose wheels are not split) with the lock's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..files import write_json
from ..project import lessonpy
from . import archives, stdlib_split, wheel_split
from .pyodide_assets import LOCK_NAME, SITE_PACKAGES_PAGE_PREFIX, STDLIB_NAME, boot_lock_entries

#: The later files' module lists ({name: [module]}) in the Pyodide folder, named in a page's plan (page_plan)
MODULES_FILE = "later-modules.json"
KINDS = tuple(archives.PROBES)  # "stdlib", "wheels": each picks its variant by its own probe
VARIANTS = (archives.DEFLATED, archives.STORED)
PHASES = ("start", "normal", "restore", "later", "restored")


def boot_plan(dist: Path, packages: Iterable[str], rest_modules: list[str] | None, restore: bool) -> dict:
    """The boot plan of the Pyodide folder *dist* for the boot *packages*: *rest_modules*, the dotted names of
    the standard library's rest (None when it is not split: sitebuild.startup.stdlib_split), and *restore*
    whether pages may restore the snapshot (its libraries and its rests are then in the plan)."""
    packages = list(packages)
    in_variant = archives.in_variant
    plan = {"probes": {kind: in_variant(archives.PROBES[kind], archives.STORED) for kind in KINDS},
            "kinds": {kind: {variant: {phase: [] for phase in PHASES} for variant in VARIANTS} for kind in KINDS},
            "modules": {}}
    rest_path = lessonpy("runtime.stdlib_rest").REST  # where lessonpy's finder looks for the standard library's rest
    # the wheels split for a restore, each with the modules of its rest (read once, for both variants)
    split = {wheel: wheel_split.rest_modules(dist / wheel_split.part_name(wheel, "rest"))
             for wheel in (entry["file_name"] for entry in boot_lock_entries(dist, packages))
             if (dist / wheel_split.part_name(wheel, "libs")).is_file()}
    for variant in VARIANTS:
        stdlib, wheels = plan["kinds"]["stdlib"][variant], plan["kinds"]["wheels"][variant]
        stdlib["start"].append({"file": in_variant(STDLIB_NAME, variant), "option": "stdLibURL"})
        wheels["start"].append({"file": in_variant(LOCK_NAME, variant), "option": "lockFileURL"})
        entries = boot_lock_entries(dist, packages, variant)
        wheels["normal"] = [{"file": e["file_name"], "name": e["name"], "sha256": e["sha256"]} for e in entries]
        if rest_modules is not None:
            plan["modules"][stdlib_split.REST_NAME] = rest_modules
            stdlib["later"].append({"file": in_variant(stdlib_split.REST_NAME, variant),
                                    "modules": stdlib_split.REST_NAME, "into": rest_path, "unpack": False})
        if not restore:
            continue
        if split:  # the libraries apart (zips, with the standard library's variant), the rest after the first output
            for wheel, modules in split.items():
                rest = wheel_split.part_name(wheel, "rest")
                plan["modules"][rest] = modules
                stdlib["restore"].append(in_variant(wheel_split.part_name(wheel, "libs"), variant))
                stdlib["restored"].append({"file": in_variant(rest, variant), "modules": rest,
                                           "into": SITE_PACKAGES_PAGE_PREFIX, "unpack": True})
        else:  # whole wheels: the restore reads the ones the lock names
            wheels["restore"] = [entry["file"] for entry in wheels["normal"]]
    return plan


def page_plan(plan: dict) -> dict:
    """The plan as a page's config carries it: its module lists are named (MODULES_FILE), not copied."""
    return {**{key: value for key, value in plan.items() if key != "modules"}, "modulesFile": MODULES_FILE}


def write_modules(plan: dict, folder: Path) -> Path:
    """Write the plan's module lists into the site's Pyodide *folder* (a page's worker reads them there)."""
    return write_json(folder / MODULES_FILE, plan["modules"])


def files_of(variant_plan: dict) -> list[str]:
    """Every file of one kind's variant in the plan, in phase order: what the service worker keeps of it."""
    return [item if isinstance(item, str) else item["file"] for phase in PHASES for item in variant_plan[phase]]
