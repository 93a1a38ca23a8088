"""`compilescope_autotune` artifact → AutotuneResults, and the figures the Autotune pane shows.

Torch-free: the session builder fills `InductorOutput.autotune` with `autotune_from_artifact`
(matching the artifact's `graph` to the partition), and the pane sorts and summarises with the
helpers below so a test can check the same numbers the bars show.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compiler_core.session.codec import from_jsonable
from compiler_core.session.model import AutotuneChoice, AutotuneResult, Compile
from compiler_core.trace.json_payload import JsonPayloadError, parse_json

ARTIFACT = "compilescope_autotune"


def _data(payload: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(payload, str):
        try:
            payload = parse_json(payload)
        except JsonPayloadError:
            return {}
    return payload if isinstance(payload, dict) else {}


def autotune_from_artifact(payload: str | dict[str, Any]) -> list[AutotuneResult]:
    """The results one artifact holds (malformed entries are skipped, never raised)."""
    out: list[AutotuneResult] = []
    results = _data(payload).get("results", [])
    for item in results if isinstance(results, list) else []:
        try:
            result = from_jsonable(AutotuneResult, item)
        except (TypeError, ValueError, AttributeError, KeyError):
            continue
        if _well_typed(result):
            out.append(result)
    return out


def _well_typed(r: AutotuneResult) -> bool:
    """The fields the Autotune pane sorts and formats (from_jsonable keeps JSON types as they are)."""
    num = (int, float)
    return (
        isinstance(r.choices, tuple)
        and all(
            isinstance(c, AutotuneChoice) and (c.time_ms is None or isinstance(c.time_ms, num))
            and isinstance(c.kind, str) and isinstance(c.name, str) and isinstance(c.error, str)
            and isinstance(c.config, dict)
            for c in r.choices
        )
        and (r.tuning_s is None or isinstance(r.tuning_s, num))
        and all(isinstance(s, str) for s in (r.op, r.shape, r.winner, r.kernel))
    )


def autotune_graph(payload: str | dict[str, Any]) -> str:
    """The partition (forward / backward / inference) the artifact's operations belong to."""
    return str(_data(payload).get("graph", ""))


def compile_autotune(c: Compile) -> list[tuple[str, AutotuneResult]]:
    """Every tuned operation of a compile as (partition, result), in compile order."""
    return [(out.graph, r) for out in c.inductor for r in out.autotune]


def ranked(result: AutotuneResult) -> tuple[list[AutotuneChoice], list[AutotuneChoice]]:
    """(timed choices fastest first, failed choices) — the bar chart and the failure list."""
    timed = sorted((c for c in result.choices if c.time_ms is not None), key=lambda c: c.time_ms or 0.0)
    failed = [c for c in result.choices if c.time_ms is None]
    return timed, failed


def winner_speedup(result: AutotuneResult) -> float | None:
    """How much faster the winner is than the slowest extern (ATen/cuBLAS) choice, if any."""
    timed, _ = ranked(result)
    if not timed:
        return None
    externs = [c.time_ms for c in timed if c.kind == "extern" and c.time_ms]
    base = max(externs) if externs else None
    best = timed[0].time_ms
    return base / best if base and best else None


def total_tuning_s(results: Iterable[AutotuneResult]) -> float:
    return sum(r.tuning_s or 0.0 for r in results)
