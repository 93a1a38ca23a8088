"""Stragglers and divergence on the recorded two-GPU runs (NCCL, one H100 per rank,
tests/data/ranks/gpu): on GPUs the ranks' step durations are coupled through their collectives,
so the slow rank is told by when it arrives at each step, not by how long its steps last."""

from __future__ import annotations

import dataclasses
import lzma
from pathlib import Path

import pytest

from compiler_core.overview import Level, build_overview
from compiler_core.queries.summary import summarize
from compiler_core.ranks.stragglers import ARRIVAL, straggler_report
from compiler_core.session.codec import loads
from compiler_core.session.model import Session

GPU = Path(__file__).resolve().parents[2] / "data" / "ranks" / "gpu"
DELAY_MS = 40.0  # what the slow rank waits in every forward (ddp_ranks.py, fsdp_ranks.py)
SLOW = {"ddp_slow": ("DistributedDataParallel",), "fsdp_slow": ("FSDPBlock", "FSDPBlock#2")}


def load_gpu(name: str) -> Session:
    return loads(lzma.decompress((GPU / f"{name}.json.xz").read_bytes()))


@pytest.mark.parametrize("name", sorted(SLOW))
def test_the_rank_that_waits_is_named_by_when_it_arrives(name: str) -> None:
    report = straggler_report(load_gpu(name))
    assert sorted(s.label for s in report.stragglers) == sorted(SLOW[name])
    for s in report.stragglers:
        assert s.rank == 1 and s.signal == ARRIVAL
        assert 0.9 * DELAY_MS <= s.median_lag_ms < 1.25 * DELAY_MS  # the wait, give or take the host work
        assert s.last_steps >= 0.75 * s.steps and s.steps >= 3
        said = f"rank 1 is the straggler on {s.label}: arrives last at {s.last_steps} of {s.steps} steady"
        assert s.text().startswith(said)
        assert "the others wait for it in their collectives" in s.text()
    for c in report.callables:
        # durations are coupled: both ranks' steps last as long as the slow one's
        lags = {lag.rank: lag for lag in c.lags}
        assert abs(lags[1].median_lag_ms) < 1.0 and (c.median_skew_ms or 0.0) < 1.0
        assert lags[0].median_arrival_ms == 0.0 and lags[1].last_steps > lags[0].last_steps


@pytest.mark.parametrize("name", ["ddp_slow", "fsdp_slow"])
def test_summary_and_overview_name_the_late_rank(name: str) -> None:
    session = load_gpu(name)
    out = summarize(session)
    assert out["rank_divergence"] == []
    assert {(s["rank"], s["signal"]) for s in out["stragglers"]} == {(1, ARRIVAL)}
    for label in SLOW[name]:
        skew = out["rank_skew"]["step_skew"][label]
        assert skew["arrival_steps"] == skew["steps"] and skew["last_arrivals"]["1"] >= 0.75 * skew["steps"]
        assert skew["median_arrival_lag_ms"]["1"] > 0.9 * DELAY_MS
    ranks = build_overview(session).section("ranks")
    assert ranks is not None
    named = [f for f in ranks.facts if "straggler" in f.text]
    assert len(named) == len(SLOW[name]) and all(f.text.startswith("rank 1 is the straggler") for f in named)
    assert all(f.level is Level.WARNING and f.refs[0].rank == 1 for f in named)


@pytest.mark.parametrize("name", ["ddp_diverge", "fsdp_diverge"])
def test_ranks_that_branch_differ_but_none_straggles(name: str) -> None:
    session = load_gpu(name)
    out = summarize(session)
    assert out["stragglers"] == []
    assert out["rank_divergence"] and all(d["ranks"] == [1] for d in out["rank_divergence"])
    assert out["rank_groups"].startswith("rank 0 as reference; rank 1 differs in ")
    assert {d["aspect"] for d in out["rank_divergence"]} >= {"graph", "guards"}


def test_without_host_starts_the_coupled_durations_name_nobody() -> None:
    """The same GPU run with its start times dropped: only durations are left, and they agree."""
    session = load_gpu("ddp_slow")
    bare = dataclasses.replace(session, timeline=tuple(dataclasses.replace(s, start_ms=None)
                                                       for s in session.timeline))  # fmt: skip
    report = straggler_report(bare)
    assert report.stragglers == ()
    (c,) = report.callables
    assert c.arrival_steps == 0
    assert all(lag.median_arrival_ms is None and lag.last_steps == 0 for lag in c.lags)
