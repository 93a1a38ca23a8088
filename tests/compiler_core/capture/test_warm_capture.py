"""Warm captures use the AOTAutograd and FX graph caches without losing or staling recorded graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_core.capture.hooks.inspect_config import REPLAY_VERIFIED_FROM, replay_supported
from compiler_core.session import Session
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

pytestmark = pytest.mark.slow

MODEL = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.lin(x)) * 2


model = Net()
example_inputs = (torch.randn(4, 8),)


def train_step(model, inputs):
    model(*inputs).sum().backward()
'''


def _capture(path: Path, cache: Path, out: str) -> Session:
    spec = CaptureSpec(model_path=str(path), out_path=str(path.parent / out))
    client = WorkerClient(spec, timeout_s=300, cache_dir=cache)
    assert client.run().ok, (client.error, client.stderr_tail[-2000:])
    session = client.recover_session()
    assert session is not None
    return session


def _tanh_lines(session: Session) -> set[int]:
    (compiled,) = session.compiles
    lines = set()
    for out in compiled.inductor:
        assert out.post_grad is not None
        lines |= {n.source.line for n in out.post_grad.nodes if n.source and "tanh" in n.target}
    return lines


def test_cache_hit_replays_post_grad_records_and_edits_recompile(tmp_path: Path) -> None:
    if not replay_supported():  # older torch compiles with both caches off: no hit to replay
        pytest.skip(f"cache-hit replay is verified from torch {REPLAY_VERIFIED_FROM}")
    cache = tmp_path / "cache"
    path = tmp_path / "net.py"
    path.write_text(MODEL)
    cold = _capture(path, cache, "cold.json")
    warm = _capture(path, cache, "warm.json")
    assert cold.compiles[0].metrics.cache == {"aotautograd": "miss", "fx_graph": "miss"}
    assert warm.compiles[0].metrics.cache == {"aotautograd": "hit", "fx_graph": "hit"}
    # the hit skipped every hook, yet the replayed records rebuild the same session content
    assert cold.compiles[0].inductor == warm.compiles[0].inductor
    assert cold.compiles[0].aot == warm.compiles[0].aot and cold.compiles[0].aot is not None
    assert cold.compiles[0].dynamo_graph == warm.compiles[0].dynamo_graph
    assert cold.links == warm.links
    forward_line = MODEL.splitlines().index("        return torch.tanh(self.lin(x)) * 2") + 1
    assert _tanh_lines(warm) == {forward_line}

    path.write_text("# a new first line moves every line down\n" + MODEL)  # same graph, new metadata
    edited = _capture(path, cache, "edited.json")
    assert edited.compiles[0].metrics.cache.get("aotautograd") == "miss"
    assert _tanh_lines(edited) == {forward_line + 1}
