"""Fill a built Session with the stage artifacts: decompositions, autotuning, CUDA-graph status.

`with_stage_artifacts(session, trace_path)` is what the session builder (or the worker, right
after `import_trace`) calls to put

- `compilescope_decompositions` into `Compile.artifacts` (verbatim; decompositions.py reads it),
- `compilescope_autotune` into `InductorOutput.autotune` of the matching partition,
- `compilescope_cudagraphs` into `InductorOutput.cudagraph` (events carry their compile ids,
  because recordings happen at run time, outside any compile); failing that, the
  `cudagraph_skip_reason` torch wrote into the compile's metrics.

Torch-free; a second pass over the log reads only artifact payloads, which costs little next to
the main import. Already-filled fields are left alone, so running it on a session whose builder
learned these artifacts itself changes nothing.
"""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from collections.abc import Callable

from compiler_core.analysis.autotune_records import ARTIFACT as AUTOTUNE
from compiler_core.analysis.autotune_records import autotune_from_artifact, autotune_graph
from compiler_core.analysis.autotune_targets import resolve
from compiler_core.analysis.cudagraph_records import ARTIFACT as CUDAGRAPHS
from compiler_core.analysis.cudagraph_records import FOUND_AT, cudagraph_from_artifact
from compiler_core.analysis.decompositions import ARTIFACT as DECOMPOSITIONS
from compiler_core.session.model import AutotuneResult, Compile, CudaGraphInfo, InductorOutput, Session

NAMES = frozenset({AUTOTUNE, CUDAGRAPHS, DECOMPOSITIONS})
CompileKey = tuple[str, "int | None"]


@dataclasses.dataclass
class StagePayloads:
    decompositions: dict[CompileKey, str] = dataclasses.field(default_factory=dict)
    autotune: dict[CompileKey, list[tuple[str, AutotuneResult]]] = dataclasses.field(
        default_factory=lambda: defaultdict(list))
    cudagraphs: list[tuple[int | None, str]] = dataclasses.field(default_factory=list)


def read_stage_payloads(trace_path: str | os.PathLike[str]) -> StagePayloads:
    from compiler_core.trace.compile_ids import trace_files

    out = StagePayloads()
    for path, file_rank in trace_files(trace_path):
        try:
            _read_file(out, path, file_rank)
        except OSError:
            continue  # the import that precedes this pass has already warned about this rank
    return out


def _read_file(out: StagePayloads, path: str, file_rank: int | None) -> None:
    from compiler_core.trace.compile_ids import compile_id_of
    from compiler_core.trace.record_checks import record_problem
    from compiler_core.trace.records import read_records

    for rec in read_records(path, frozenset({"artifact"})):
        value = rec.value if isinstance(rec.value, dict) else {}
        name = value.get("name")
        if rec.kind != "artifact" or name not in NAMES or record_problem(rec.kind, rec.meta):
            continue
        rank = rec.meta.get("rank", file_rank)
        key = (compile_id_of(rec.meta) or "-", rank)
        if name == DECOMPOSITIONS:
            out.decompositions.setdefault(key, rec.payload)  # first graph: joint / inference
        elif name == AUTOTUNE:
            graph = autotune_graph(rec.payload)
            out.autotune[key].extend((graph, r) for r in autotune_from_artifact(rec.payload))
        else:
            out.cudagraphs.append((rank, rec.payload))


def with_stage_artifacts(session: Session, trace_path: str | os.PathLike[str]) -> Session:
    """Also re-derives the decomposition tables: a decompositions artifact added here changes them."""
    from compiler_core.analysis.decompositions import with_decompositions

    filled = apply_stage_payloads(session, read_stage_payloads(trace_path))
    changed = any(a.artifacts != b.artifacts for a, b in zip(session.compiles, filled.compiles, strict=True))
    return with_decompositions(filled) if changed else filled


def apply_stage_payloads(session: Session, payloads: StagePayloads) -> Session:
    cuda: dict[tuple[int | None, str, str], CudaGraphInfo] = {}
    for rank, text in payloads.cudagraphs:
        mine = [c for c in session.compiles if c.rank == rank]
        partitions: dict[str, list[str]] = {c.compile_id: [o.graph for o in c.inductor] for c in mine}
        for (cid, graph), info in cudagraph_from_artifact(text, partitions, _owners(mine)).items():
            cuda[(rank, cid, graph)] = info
    compiles = tuple(_apply(c, payloads, cuda) for c in session.compiles)
    return dataclasses.replace(session, compiles=compiles)


def _apply(c: Compile, p: StagePayloads, cuda: dict[tuple[int | None, str, str], CudaGraphInfo]) -> Compile:
    key = (c.compile_id, c.rank)
    artifacts = dict(c.artifacts)
    if key in p.decompositions and DECOMPOSITIONS not in artifacts:
        artifacts[DECOMPOSITIONS] = p.decompositions[key]
    tuned = p.autotune.get(key, [])
    skipped = _metrics_skip(c)
    outputs = tuple(_output(o, tuned, cuda.get((c.rank, c.compile_id, o.graph)) or skipped, len(c.inductor))
                    for o in c.inductor)
    return dataclasses.replace(c, artifacts=artifacts, inductor=outputs)


def _owners(compiles: list[Compile]) -> Callable[[str], list[str]]:
    """Which compile a compile-less event means: the one whose Dynamo graph holds a user line
    the message names ("Found from: File ..., line N"), else the only compile with kernels."""
    compiled = [c for c in compiles if c.inductor]

    def owners(message: str) -> list[str]:
        lines = {(path, int(n)) for path, n in FOUND_AT.findall(message)}
        hits = [c.compile_id for c in compiled if c.dynamo_graph is not None and any(
            n.source is not None and (n.source.file, n.source.line) in lines for n in c.dynamo_graph.nodes)]
        if hits:
            return hits
        return [compiled[0].compile_id] if len(compiled) == 1 else []

    return owners


def _metrics_skip(c: Compile) -> CudaGraphInfo | None:
    """The skip torch itself wrote into compilation_metrics. Used where our own event artifact
    says nothing of a partition: traces from elsewhere, and torch 2.11, whose skip warning goes
    to a logger we do not tap. One skip disables CUDA graphs for the whole compiled function."""
    reason = c.metrics.extra.get("cudagraph_skip_reason", "")
    return CudaGraphInfo(captured=False, skip_reason=reason) if reason else None


def _output(o: InductorOutput, tuned: list[tuple[str, AutotuneResult]], info: CudaGraphInfo | None,
            partitions: int) -> InductorOutput:
    sole = partitions == 1
    mine = tuple(r for graph, r in tuned if graph == o.graph or (sole and graph in ("", "forward")))
    return dataclasses.replace(
        o,
        autotune=tuple(resolve(r, o) for r in (o.autotune or mine)),
        cudagraph=o.cudagraph if o.cudagraph is not None else info,
    )

