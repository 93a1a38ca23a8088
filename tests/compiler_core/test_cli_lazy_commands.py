"""`python -m compiler_core import` loads only the import command, not capture/run/budget."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "traces" / "tlparse_simple.log.gz"


def test_import_command_leaves_the_worker_modules_unloaded(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code = (
        "import sys\n"
        "from compiler_core.cli import main\n"
        f"assert main(['import', {str(LOG)!r}, '-o', {str(out)!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('compiler_core.worker', "
        "'compiler_core.cli.capture_cmd', 'compiler_core.cli.run_cmd', 'compiler_core.cli.budget_cmd'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert out.stat().st_size > 0


def test_full_help_still_lists_every_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "compiler_core", "-h"], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0
    for name in ("capture", "import", "summary", "budget", "run"):
        assert name in done.stdout
