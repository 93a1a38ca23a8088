"""The breaks the app shows, against PyTorch's own `counters["graph_break"]` in the process that
wrote the log (bench/oracle.py's `counter` check), on real corpus logs. torch's counter misses two
kinds of break its own log records: those Dynamo cannot resume from and the frames it skips after
a break; the T5 log has one of the first, the Qwen2-MoE log one of each."""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench_scripts import bench_module

LOGS = Path(__file__).resolve().parent.parent / "bench" / "corpus" / "logs"


@functools.cache
def _oracle() -> ModuleType:
    return bench_module("oracle")


def _cells(name: str, shift: int = 0) -> dict[str, tuple[str, str]]:
    oracle = _oracle()
    log = LOGS / f"{name}.log.xz"
    facts = oracle._facts(log)
    facts["graph_break_counter"] += shift
    cells: dict[str, tuple[str, str]] = oracle.check(oracle.Entry(name, [log], facts))
    return cells


@pytest.mark.parametrize("name", ["hf_t5_train", "hf_qwen2moe_infer"])
def test_the_breaks_shown_are_torchs_count_plus_what_it_leaves_uncounted(name: str) -> None:
    assert _cells(name)["counter"] == ("ok", "")


def test_a_break_count_off_by_one_fails() -> None:
    verdict, why = _cells("hf_t5_train", shift=1)["counter"]
    assert verdict == "FAIL" and "torch counted 5 + 1" in why, why
