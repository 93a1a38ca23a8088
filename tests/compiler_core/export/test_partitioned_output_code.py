"""Output code under graph partitioning: mode="reduce-overhead" on a GPU (torch >= 2.9) moves every
launch out of `call()` into `partition_N()` functions written above it, and `call()` only hands
them its buffers. Read as a plain `call()`, such a compile shows no extern call and no launch
count (a diff would then say reduce-overhead "removed" every extern call).

No GPU here, so the test has real Inductor write the partitioned layout for a CPU graph: the one
thing patched is the scheduler's "is this node on a GPU" test (CPU nodes are never partitioned,
since CUDA graphs cannot hold them); the code is torch's own codegen, parsed by ours, and
compared with the same graph compiled without partitions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch

from compiler_core.export.call_plan import kernel_params, plan_calls
from compiler_core.trace.output_code import parse_output_code


def _f(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.relu(x @ w).sin() + 1, (x * 2) @ w


@contextlib.contextmanager
def _cpu_nodes_as_gpu() -> Iterator[None]:
    """Serves torch 2.11-2.13: `BaseSchedulerNode.is_gpu` decides what a partition may hold."""
    from torch._inductor import scheduler

    saved = scheduler.BaseSchedulerNode.is_gpu
    scheduler.BaseSchedulerNode.is_gpu = lambda self: True  # type: ignore[method-assign]
    try:
        yield
    finally:
        scheduler.BaseSchedulerNode.is_gpu = saved  # type: ignore[method-assign]


def _code(partitioned: bool) -> str:
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    args = (torch.randn(8, 8), torch.randn(8, 8))
    # no cache: the patched layout would otherwise come back for the plain compile (its key does
    # not know the patch)
    with torch._inductor.config.patch(force_disable_caches=True), \
            _cpu_nodes_as_gpu() if partitioned else contextlib.nullcontext():
        _, codes = run_and_get_code(torch.compile(_f, mode="reduce-overhead"), *args)
    torch._dynamo.reset()
    return codes[0]


@pytest.fixture(scope="module")
def codes() -> tuple[str, str]:
    return _code(partitioned=False), _code(partitioned=True)


def test_torch_writes_the_partitioned_layout(codes: tuple[str, str]) -> None:
    plain, partitioned = codes
    assert "def partition_0(args):" in partitioned and "self.partitions[0](" in partitioned
    assert "def partition_0(" not in plain


def test_kernels_and_extern_calls_are_found_inside_partitions(codes: tuple[str, str]) -> None:
    plain, partitioned = codes

    def facts(code: str) -> list[tuple[str, str, int]]:
        return sorted((k.name, k.language, len(k.calls)) for k in parse_output_code(code))

    assert facts(partitioned) == facts(plain)
    assert [n for n, lang, _ in facts(partitioned) if lang == "extern"] == [
        "extern_kernels.mm:1", "extern_kernels.mm:2"]
    assert all(calls == 1 for _, lang, calls in facts(partitioned) if lang != "extern")


def test_the_call_plan_reads_partitions_where_call_hands_them_over(codes: tuple[str, str]) -> None:
    plain, partitioned = codes

    def launches(code: str) -> list[tuple[str, bool]]:
        kernels = {k.name: kernel_params(k.source) for k in parse_output_code(code) if k.language != "extern"}
        plan = plan_calls(code, kernels)
        assert plan is not None
        assert plan.inputs == ["arg0_1", "arg1_1"]
        return [(x.name or x.callee, x.resolved) for x in plan.launches]

    assert launches(partitioned) == launches(plain)
    assert len(launches(partitioned)) == 3 and all(ok for _, ok in launches(partitioned))
