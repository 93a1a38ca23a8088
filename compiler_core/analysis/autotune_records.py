"""`compilescope_autotune` artifact → AutotuneResults, and the figures the Autotune pane shows.

Torch-free: the session builder fills `InductorOutput.autotune` with `autotune_from_artifact`
(matching the artifact's `graph` to the partition), and the pane sorts and summarises with the
helpers below so a test can check the same numbers the bars show.
"""

from __future__ import annotations

from typing import Any

from compiler_core.session.model import AutotuneChoice, AutotuneResult
from compiler_core.session.wire import BadValueError, checked
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
    """The results one artifact holds; an artifact with any ill-typed result gives none (the
    session builder warns with `autotune_problem`), never raises."""
    if autotune_problem(payload) is not None:
        return []
    results = _data(payload).get("results", [])
    return [checked(AutotuneResult, item) for item in results]


def autotune_problem(payload: str | dict[str, Any]) -> str | None:
    """Why the artifact cannot be read (naming the field: `results[0].nodes[0]: expected str, got
    int`), or None. Checked against the model's own types (session/wire.py): a value that
    does not fit (ints for node names, a list inside `config`) once reached the Autotuning pane
    (a TypeError) and a saved session, which then failed validation when reopened."""
    if isinstance(payload, str):
        try:
            payload = parse_json(payload)
        except JsonPayloadError as exc:
            return f"malformed JSON ({exc})"
    if not isinstance(payload, dict):
        return "not a JSON object"
    if not isinstance(payload.get("graph", ""), str):
        return "graph: not a string"
    results = payload.get("results", [])
    if not isinstance(results, list):
        return "results: not a list"
    for i, item in enumerate(results):
        try:
            checked(AutotuneResult, item)
        except BadValueError as exc:
            return f"results[{i}]{'.' + exc.path if exc.path else ''}: {exc.problem}"
    return None


def autotune_graph(payload: str | dict[str, Any]) -> str:
    """The partition (forward / backward / inference) the artifact's operations belong to."""
    return str(_data(payload).get("graph", ""))


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

