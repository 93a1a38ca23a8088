"""Real TORCH_TRACE logs of the before/after scripts in `scripts/`, made once per test process.

Each variant runs in a fresh interpreter under `TORCH_TRACE` with its own Inductor cache (a
shared cache would turn the second compile into a cache hit and hide its stages), as a user
would run the script before and after applying a fix.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.session import Session

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parent / "scripts"


@functools.cache
def trace_log(script: str, variant: str) -> Path:
    """The folder holding the log of `scripts/<script> <variant>`."""
    out = Path(tempfile.mkdtemp(prefix=f"cs-diff-{Path(script).stem}-{variant}-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    env = dict(os.environ, TORCH_TRACE=str(out / "trace"), TORCHINDUCTOR_CACHE_DIR=str(out / "cache"),
               PYTHONPATH=str(ROOT))  # fmt: skip
    done = subprocess.run([sys.executable, str(SCRIPTS / script), variant], env=env, capture_output=True,
                          text=True, timeout=600, cwd=out)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((out / "trace").glob("dedicated_log_torch_trace*.log")), done.stderr[-3000:]
    return out / "trace"


@functools.cache
def trace_session(script: str, variant: str) -> Session:
    return import_trace(trace_log(script, variant))
