"""The one context manager the capture worker enters to record decompositions, autotuning and
CUDA-graph status alongside its own graphs.

Enter it *inside* the trace sink (its artifacts must reach the log) and around everything that
compiles and runs the model: CUDA graphs are recorded on a compiled function's second call, so
a capture that should show them must call the model at least three times under the recorder.

    with TraceLogSink(path), stage_recorders():
        compile_and_run(...)

Inductor hooks used, all official config entries, restored on exit and chained with any pass
the user or another recorder installed: `joint_custom_pre_pass` (the decomposed graph before
pattern rewrites, decomp_capture.py) and `post_grad_custom_pre_pass` (marks the start of each
graph's compilation: which partition is compiling, and when autotuning of its GEMMs may begin).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from torch._inductor.custom_graph_pass import CustomGraphPass

from compiler_core.capture.hooks.autotune_capture import AutotuneRecorder
from compiler_core.capture.hooks.cudagraph_capture import CudaGraphRecorder, PartitionTracker
from compiler_core.capture.hooks.decomp_capture import PreJointPass

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)


class _GraphStartMark(CustomGraphPass):
    """`post_grad_custom_pre_pass`: a partition is about to be optimised and lowered."""

    def __init__(self, previous: Any, partitions: PartitionTracker, autotune: AutotuneRecorder) -> None:
        self.previous, self.partitions, self.autotune = previous, partitions, autotune

    def __call__(self, graph: Any) -> None:
        self.partitions.saw(graph)
        self.autotune.mark()
        if self.previous is not None:
            self.previous(graph)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """torch.compile deep-copies the Inductor config; a pass shares its recorder, never a copy."""
        return self

    def uuid(self) -> Any:
        """Part of the cache key (None would bypass the caches). On a hit nothing is lowered or
        autotuned, so there is nothing for this mark to record."""
        return ("compilescope-stage-mark", 1, getattr(self.previous, "uuid", lambda: None)())


@dataclass
class StageRecorders:
    autotune: AutotuneRecorder
    cudagraphs: CudaGraphRecorder
    partitions: PartitionTracker


@contextmanager
def stage_recorders() -> Iterator[StageRecorders]:
    """Record decompositions, autotuning and CUDA-graph events into the structured trace."""
    from torch._inductor import config

    partitions = PartitionTracker()
    autotune = AutotuneRecorder()
    cudagraphs = CudaGraphRecorder(partitions)
    patches = {
        "joint_custom_pre_pass": PreJointPass(config.joint_custom_pre_pass),
        "post_grad_custom_pre_pass": _GraphStartMark(config.post_grad_custom_pre_pass, partitions, autotune),
    }
    with ExitStack() as stack:
        stack.enter_context(config.patch(patches))
        stack.enter_context(autotune)
        stack.enter_context(cudagraphs)
        yield StageRecorders(autotune, cudagraphs, partitions)
