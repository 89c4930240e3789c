"""py/scaffold as the reader's folder: its modules import each other by bare name (`from config import
GPTConfig`), so importing this puts the folder on sys.path; laptop_run runs one of its scripts as the reader does."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

SCAFFOLD = Path(__file__).resolve().parents[2] / "py" / "scaffold"
if str(SCAFFOLD) not in sys.path:
    sys.path.insert(0, str(SCAFFOLD))


def laptop_run(folder, script, modules, lessonpy=False):
    """Run a laptop script of the scaffold as the reader does: copied into *folder* next to the *modules* it
    imports, with `python SCRIPT` there. Its printed lines. *lessonpy*: the course's wheel is installed (py/ on
    PYTHONPATH), as in the reader's notebook folder; without it, lessonpy cannot be imported."""
    for name in (*modules, script):
        shutil.copy(SCAFFOLD / name, folder)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if lessonpy:
        env["PYTHONPATH"] = str(SCAFFOLD.parent)
    run = subprocess.run([sys.executable, script], cwd=folder, capture_output=True, text=True, timeout=120, check=False,
                         env=env)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()
