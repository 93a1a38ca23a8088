"""A model that raises with an enormous message: torch logs the message into the trace in several
records; each field is cut to 1 MiB so the trace stays small and the failure stays cheap."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.capture.hooks.trace_sink import MAX_TEXT
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

HUGE = """
import torch

class M(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        raise RuntimeError("x" * (40 * 2**20))

model = M()
example_inputs = (torch.randn(4),)
"""


@pytest.mark.slow
def test_a_40_mib_exception_message_leaves_a_small_trace_and_a_clear_failure(
        model_file: Callable[[str, str], Path], capture_cache: Path, tmp_path: Path) -> None:
    spec = CaptureSpec(str(model_file("huge", HUGE)), str(tmp_path / "s.json"), input_steps=0)
    client = WorkerClient(spec, cache_dir=capture_cache, timeout_s=600)
    exit_ = client.run()
    assert exit_.returncode != 0 and client.error is not None and "RuntimeError" in client.error.message
    trace = Path(spec.resolved_trace_path)
    # unbounded, torch logs the message in about nine records: 360 MiB
    assert trace.stat().st_size < 12 * MAX_TEXT, trace.stat().st_size
    # no 40 MiB traceback printed: the progress observer read every record (a cut JSON payload
    # failed it, and its failure was logged with the user's chained exception)
    printed = client.stdout_bytes + (client._stderr.total if client._stderr else 0)
    assert printed < 4 * MAX_TEXT, printed
    session = client.recover_session()
    assert session is not None
    assert not any("malformed" in d.message for d in session.diagnostics)  # a cut JSON payload stays JSON
