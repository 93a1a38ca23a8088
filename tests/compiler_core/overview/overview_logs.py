"""Real logs for the Overview's tests, each with a source of truth that shares no code with ours.

- `bench/corpus/logs/<entry>.log.xz` and the `.json` beside it: facts PyTorch itself recorded in
  the run (`counters`, `compilation_metrics`, the steps' input shapes);
- `raw_records(log, name)`: the log's own records of one kind, read here with `json` and string
  splitting only (the glog header, then the tab-indented payload lines);
- a real CPU run under `TORCH_TRACE` of `scripts/recompile_limit.py`, whose stderr carries
  torch's own "hit config.recompile_limit" warning.
"""

from __future__ import annotations

import functools
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler_core.analysis import import_trace
from compiler_core.session import Session
from tests.conftest import ROOT

CORPUS = ROOT / "bench" / "corpus" / "logs"
SCRIPTS = Path(__file__).resolve().parent / "scripts"


@functools.cache
def corpus_log(entry: str) -> Path:
    """`<entry>.log.xz` decompressed once per test process (a rank folder stays as it is)."""
    folder = CORPUS / entry
    if folder.is_dir():
        return folder
    out = Path(tempfile.mkdtemp(prefix="cs-overview-")) / f"{entry}.log"
    out.write_bytes(lzma.decompress((CORPUS / f"{entry}.log.xz").read_bytes()))
    return out


@functools.cache
def corpus_session(entry: str) -> Session:
    return import_trace(corpus_log(entry))


def corpus_meta(entry: str) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((CORPUS / f"{entry}.json").read_text())
    return meta


def raw_records(log: Path, name: str) -> list[tuple[dict[str, Any], str]]:
    """(header, payload) of every record whose header has the key `name` (a record kind such
    as `compilation_metrics`) or names the artifact `name`, in log order."""
    data = log.read_bytes()
    unpack = {".xz": lzma.decompress, ".gz": gzip.decompress}.get(log.suffix)
    data = unpack(data) if unpack else data
    text = data.decode("utf-8", errors="replace")
    out: list[tuple[dict[str, Any], list[str]]] = []
    keep = False
    for line in text.splitlines():
        if line.startswith("\t"):
            if keep:
                out[-1][1].append(line[1:])
            continue
        start = line.find("] {")
        keep = False
        if start < 0:
            continue
        header = json.loads(line[start + 2 :])
        artifact = header.get("artifact")
        if name in header or (isinstance(artifact, dict) and artifact.get("name") == name):
            out.append((header, []))
            keep = True
    return [(h, "\n".join(lines)) for h, lines in out]


@dataclass(frozen=True)
class TracedRun:
    log: Path
    stderr: str
    returncode: int


@functools.cache
def traced_run(script: str) -> TracedRun:
    """`scripts/<script>` run on this CPU in a fresh interpreter under TORCH_TRACE, with an
    Inductor cache of its own, as a user runs theirs."""
    out = Path(tempfile.mkdtemp(prefix="cs-overview-run-"))
    env = dict(os.environ, TORCH_TRACE=str(out / "trace"), TORCHINDUCTOR_CACHE_DIR=str(out / "cache"))
    done = subprocess.run([sys.executable, str(SCRIPTS / script)], env=env, capture_output=True, text=True,
                          timeout=600, cwd=out)  # fmt: skip
    logs = sorted((out / "trace").glob("dedicated_log_torch_trace*.log"))
    assert len(logs) == 1, (logs, done.stderr[-3000:])
    return TracedRun(logs[0], done.stderr, done.returncode)
