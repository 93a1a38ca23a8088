"""`recomputed_nodes` equals the partitioner's own count, on real CPU compiles.

The partitioner reports what it rematerialised itself: with `AOT_PARTITIONER_DEBUG=1`,
`min_cut_rematerialization_partition` logs `# remat/fw/bw: R/F/B`. Each model runs once under a
plain `torch.compile` (no CompileScope code in the process) with that switch on and `TORCH_TRACE`
set; the test reads R from torch's log record and compares it with what CompileScope counts from
that run's trace log, and, for the transformer, from a live `compiler_core capture`. Caches are
off in the child: an AOTAutograd cache hit would skip the partitioner and its log record.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize
from compiler_core.session import Session, codec

ROOT = Path(__file__).resolve().parents[3]

# Plain torch: the partitioner's own log record, nothing of ours but the model-file loader.
_CHILD = r"""
import json, logging, os, re, sys
os.environ["AOT_PARTITIONER_DEBUG"] = "1"
os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"  # a cache hit skips the partitioner
import torch
from compiler_core.modelfile import load_model_file
remat = []
class Remat(logging.Handler):
    def emit(self, record):
        m = re.match(r"# remat/fw/bw: (\d+)/(\d+)/(\d+)", record.getMessage())
        if m:
            remat.append([int(x) for x in m.groups()])
log = logging.getLogger("torch._functorch.partitioners")
log.addHandler(Remat())
log.setLevel(logging.INFO)
spec = load_model_file(sys.argv[1])
spec.train_step(torch.compile(spec.model), spec.example_inputs())
print(json.dumps(remat))
"""


def _partitioner_run(model: Path, trace_dir: Path, **env: str) -> list[list[int]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TORCH_TRACE=str(trace_dir), **env)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(model)], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT, timeout=900)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ours(session: Session) -> list[int]:
    return [len(c.aot.recomputed) for c in session.compiles if c.aot and c.aot.backward is not None]


@pytest.mark.slow
def test_transformer_recomputed_equals_partitioners_count(tmp_path: Path) -> None:
    model = ROOT / "resources" / "examples" / "transformer_block.py"
    remat = _partitioner_run(model, tmp_path / "trace")
    assert [r[0] for r in remat] == [14]  # torch 2.13 CPU: 4 permute, 3 mul, 2 sub, 2 view, 2 add, erf
    logged = import_trace(tmp_path / "trace")
    assert _ours(logged) == [14]
    assert summarize(logged)["recomputed_nodes"] == 14
    out = tmp_path / "s.json"
    subprocess.run([sys.executable, "-m", "compiler_core", "capture", str(model), "-o", str(out), "-q"],
                   env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True, cwd=ROOT, timeout=900)  # fmt: skip
    assert _ours(codec.load(out)) == [14]


@pytest.mark.slow
def test_hf_llama_recomputed_equals_partitioners_count(tmp_path: Path) -> None:
    """Real transformers code (2 layers, bf16) on CPU: the views and casts count too."""
    model = ROOT / "bench" / "models" / "hf_llama_train.py"
    remat = _partitioner_run(model, tmp_path / "trace", CS_LAYERS="2")
    ours = _ours(import_trace(tmp_path / "trace"))
    assert [r[0] for r in remat] == ours
    assert ours[0] > 20


def test_summary_counts_the_partitioners_definition_on_the_h200_llama_log() -> None:
    """Forward call names that the backward shares: 797 on the 32-layer log, half of them views."""
    from tests.bench_logs import bench_session

    s = bench_session("hf_llama_train")
    (aot,) = [c.aot for c in s.compiles if c.aot and c.aot.backward is not None]
    assert len(aot.recomputed) == 797
    targets = {n.name: n.target for n in aot.backward.nodes}
    views = [r for r in aot.recomputed if re.search(r"\.(permute|view)\.", targets[r])]
    assert len(views) == 390
