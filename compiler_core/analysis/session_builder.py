"""Build a `Session` from trace logs: `import_trace` for a file or a multi-rank directory.

Live capture writes a TORCH_TRACE log and calls the same `import_trace`, so a captured session and
an imported one differ only in `meta`. Reading is streaming (records.py); per-compile state is
folded as records arrive (compile_records.py) and frozen at the end (compile_builder.py).

Each rank fails alone: a rank file that cannot be opened (not a regular file, unreadable) or
that fails part-way is one warning, and the other ranks' compiles are kept: one bad
rank of 50 must not lose all 50.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from compiler_core.analysis.absorbed_crash import settle_crashes
from compiler_core.analysis.compile_builder import build_compile
from compiler_core.analysis.compile_records import PAYLOAD_KINDS, CompileRecords, RankRecords, route
from compiler_core.analysis.decompositions import with_decompositions
from compiler_core.analysis.graph_breaks import fold_wrappers_across
from compiler_core.analysis.link_memo import LinkMemo
from compiler_core.analysis.parse_memo import ParseMemo
from compiler_core.analysis.source_lookup import SourceLookup
from compiler_core.analysis.user_crash import compiler_failure_diagnostic, crash_diagnostic
from compiler_core.analysis.user_sources import collect_sources
from compiler_core.analysis.value_bounds import bounded_lines
from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.links import LinkBuilder
from compiler_core.session.model import Compile, Diagnostic, Session, SessionMeta
from compiler_core.session.packed import mark_built
from compiler_core.trace.payload_memo import PayloadMemo
from compiler_core.trace.read_limits import ReadLimits, open_regular
from compiler_core.trace.records import Record, RecordReader
from compiler_core.trace.trace_folders import MAX_DEPTH, TLPARSE_COPY, TRACE_PREFIX, trace_files


def import_trace(path: str | os.PathLike[str], *, meta: SessionMeta | None = None,
                 sources: dict[str, str] | None = None, limits: ReadLimits | None = None,
                 lookup: SourceLookup | None = None) -> Session:  # fmt: skip
    """Read a trace file, or a folder of them: `TORCH_TRACE`'s folder of rank logs, a cluster
    job's folder of host folders, or tlparse's output folder (trace/trace_folders.py).

    Source files the log names are read from disk only under `lookup`; without one, a capture's
    or script run's own log (`meta.origin`) reads its run's files, any other log reads none
    (analysis/source_lookup.py). A single file that is not a regular file raises
    `NotRegularFileError` (an OSError); in a folder such an entry is skipped with a warning.
    A folder with no log in it raises `FileNotFoundError`: an empty session would read as a run
    that compiled nothing."""
    p = os.fspath(path)
    diagnostics: list[Diagnostic] = []
    if not os.path.exists(p):
        raise FileNotFoundError(f"no trace at {p}")
    files = trace_files(p)
    if os.path.isdir(p) and not files:
        raise FileNotFoundError(
            f"no TORCH_TRACE log in {p}: no {TRACE_PREFIX}*.log (.gz, .xz) nor tlparse's {TLPARSE_COPY} "
            f"in it or {MAX_DEPTH} folders down")  # fmt: skip
    if not os.path.isdir(p):
        os.close(open_regular(p))  # fail here, clearly, rather than as a skipped rank
    with gc_paused():
        return _import_files(p, files, diagnostics, meta, sources, limits, lookup)


def _import_files(p: str, files: list[tuple[str, int | None]], diagnostics: list[Diagnostic],
                  meta: SessionMeta | None, sources: dict[str, str] | None,
                  limits: ReadLimits | None, lookup: SourceLookup | None) -> Session:  # fmt: skip
    streams = []
    shared = PayloadMemo() if len(files) > 1 else None  # rank logs repeat each other's payloads
    for file_path, rank in files:
        reader = RecordReader(file_path, PAYLOAD_KINDS, limits=limits or ReadLimits(), shared=shared)
        streams.append((file_path, rank, reader))
    session = build_session(
        ((fp, rank, iter(reader)) for fp, rank, reader in streams), meta=meta, sources=sources,
        origin_path=p, lookup=lookup,
    )  # fmt: skip
    for _, _, reader in streams:
        diagnostics.extend(reader.diagnostics)
    return _with_diagnostics(session, diagnostics)


def build_session(streams: Iterable[tuple[str, int | None, Iterable[Record]]], *,
                  meta: SessionMeta | None = None, sources: dict[str, str] | None = None,
                  origin_path: str = "", lookup: SourceLookup | None = None) -> Session:  # fmt: skip
    """Fold record streams `(path, rank from filename, records)` into one session; `lookup` as
    for `import_trace`."""
    ranks: list[RankRecords] = []
    for path, file_rank, records in streams:
        rr = RankRecords(file_rank, path)
        try:
            _fold(rr, records)
        except OSError as exc:  # this rank only: unopenable, or a read error part-way
            opened = bool(rr.order or rr.interned or rr.unknown_kinds)
            rr.diagnostics.append(Diagnostic(
                "warning", f"rank log {'stopped part-way' if opened else 'skipped'}: {exc}", path=path,
                stage="trace"))  # fmt: skip
        ranks.append(rr)
    _continue_runs_across_files(ranks)
    compiles: list[Compile] = []
    diagnostics: list[Diagnostic] = []
    pre_to_post: dict[tuple[int | None, str], dict[str, list[str]]] = {}
    memo = ParseMemo()
    for rr in ranks:
        diagnostics.extend(rr.diagnostics)
        if rr.first_run:
            diagnostics.append(Diagnostic("info", f"run {rr.first_run + 1}{_of_rank(rr.rank)} starts in this "
                                          f"file: another log{_of_rank(rr.rank) or ' without a rank'} was "
                                          "read before it", path=rr.path, stage="trace"))  # fmt: skip
        for run, (line, why) in enumerate(rr.run_starts, start=2 + rr.first_run):  # said, not warned
            diagnostics.append(Diagnostic("info", f"run {run} of this log starts here: {why}", path=rr.path,
                                          line=line, stage="trace"))  # fmt: skip
        for kind, count in sorted(rr.unknown_kinds.items()):
            diagnostics.append(Diagnostic("info", f"{count} '{kind}' records kept unread", path=rr.path))
        built: list[tuple[CompileRecords, Compile]] = []
        for key in rr.order:
            acc = rr.compiles[key]
            try:
                built.append((acc, build_compile(acc, memo)))
            except _GUARDED as exc:  # last resort, like `_fold`: one compile, named, as an error
                diagnostics.append(Diagnostic(
                    "error", f"{INTERNAL_SKIP} (compile {key}: {type(exc).__name__}: {str(exc)[:200]}); "
                    "compile skipped", path=rr.path, stage="trace"))  # fmt: skip
        for acc, built_compile in settle_crashes(built):
            compiles.append(built_compile)
            if acc.crash is not None:
                diagnostics.append(crash_diagnostic(compiles[-1], acc.crash))
            elif (failed := compiler_failure_diagnostic(compiles[-1])) is not None:
                diagnostics.append(failed)
            diagnostics.extend(Diagnostic("warning", p, path=rr.path, stage="build") for p in acc.problems)
            merged: dict[str, list[str]] = {}
            for part in acc.partitions:
                merged.update(part.provenance.get("preToPost") or {})
            pre_to_post[(acc.rank, acc.compile_id)] = merged
    if not compiles and any(rr.unknown_kinds for rr in ranks):  # a log of another kind: say so
        kinds = sorted({k for rr in ranks for k in rr.unknown_kinds})
        diagnostics.insert(0, Diagnostic(
            "warning", f"no torch.compile compile in this log: it holds {', '.join(kinds[:6])} records "
            "(torch.export and AOTInductor runs log no Dynamo compile), so there is nothing to show",
            path=ranks[0].path, stage="trace"))  # fmt: skip
    if lookup is None and meta is not None and meta.origin in ("capture", "script"):
        lookup = SourceLookup.capture()  # the user's own run: its files are the user's
    compiles = fold_wrappers_across(compiles)
    compiles, out_of_bounds = bounded_lines(compiles)  # before the sources: they are rebuilt from lines
    diagnostics.extend(out_of_bounds)
    found = collect_sources(compiles, sources, lookup)
    srcs, source_notes = found.sources, found.notes
    diagnostics.extend(Diagnostic("info", f"source of {path} {note}", path=path, stage="build")
                       for path, note in source_notes.items() if note.startswith("left out"))  # fmt: skip
    lb = LinkBuilder()
    memo_links = LinkMemo(lb, compiles, set(srcs))  # ranks that logged the same compile: linked once
    for i, c in enumerate(compiles):
        memo_links.link(i, c, pre_to_post.get((c.rank, c.compile_id), {}))
    rank_set = tuple(sorted({c.rank for c in compiles if c.rank is not None} |
                            {rr.rank for rr in ranks if rr.rank is not None}))  # fmt: skip
    base_meta = meta or SessionMeta(origin="trace", origin_path=origin_path, created_unix=time.time(),
                                    torch_version=_logged_torch_version(ranks),
                                    device=_logged_device(ranks))  # fmt: skip
    if not base_meta.ranks and rank_set:
        base_meta = _replace_meta(base_meta, rank_set)
    if not base_meta.torch_version or not base_meta.device:  # a crashed capture's torch-free meta
        from dataclasses import replace

        base_meta = replace(base_meta, torch_version=base_meta.torch_version or _logged_torch_version(ranks),
                            device=base_meta.device or _logged_device(ranks))  # fmt: skip
    links = memo_links.freeze()
    mark_built(links)  # symmetric with sorted targets: the codec writes it without checking
    session = Session(meta=base_meta, sources=srcs, compiles=tuple(compiles), links=links,
                      diagnostics=tuple(diagnostics), source_notes=source_notes,
                      source_origins=found.origins)  # fmt: skip
    # after the stage artifacts: the decompositions artifact is one of them
    return with_decompositions(_with_stage_artifacts(session, ranks), memo_links.same_as)


def _continue_runs_across_files(ranks: list[RankRecords]) -> None:
    """Logs of one rank after its first (in reading order) hold that rank's later runs."""
    runs: dict[int | None, int] = {}
    for rr in ranks:
        earlier = runs.get(rr.rank, 0)
        rr.continue_runs(earlier)
        runs[rr.rank] = max(earlier, rr.runs_read())


def _of_rank(rank: int | None) -> str:
    return "" if rank is None else f" of rank {rank}"


INTERNAL_SKIP = "CompileScope could not read this record"
_GUARDED = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)


def _fold(rr: RankRecords, records: Iterable[Record]) -> None:
    """Route every record. Records are type-checked before use (record_checks.py); the guard
    here is the last resort for a check we lack: that one record is skipped as an *error* that
    names our failure (the fuzz tests fail on it), and the log still opens."""
    for rec in records:
        if rr.rank is None and "rank" in rec.meta and isinstance(rec.meta["rank"], int):
            rr.rank = rec.meta["rank"]
            for acc in rr.compiles.values():
                acc.rank = rr.rank
        try:
            route(rr, rec)
        except _GUARDED as exc:
            rr.diagnostics.append(Diagnostic(
                "error", f"{INTERNAL_SKIP} ({type(exc).__name__}: {str(exc)[:200]}); record skipped",
                path=rr.path, line=rec.line, stage="trace"))  # fmt: skip


def _with_stage_artifacts(session: Session, ranks: list[RankRecords]) -> Session:
    """Autotune / CUDA-graph / decomposition artifacts through the stage readers' own functions
    (compiler_core/stages), fed from this single pass instead of a second read of the log.
    Runs even without artifacts: the CUDA-graph skip torch writes into compile metrics applies too."""
    from compiler_core.analysis.autotune_records import (
        autotune_from_artifact,
        autotune_graph,
        autotune_problem,
    )
    from compiler_core.analysis.stage_artifacts import StagePayloads, apply_stage_payloads

    payloads = StagePayloads()
    skipped: list[Diagnostic] = []
    for rr in ranks:
        for name, cid, text, line in rr.stage_artifacts:
            key = (cid, rr.rank)
            if name == "compilescope_decompositions":
                payloads.decompositions.setdefault(key, text)
            elif name == "compilescope_autotune":
                problem = autotune_problem(text)
                if problem is not None:  # one that does not fit the model never reaches a pane
                    skipped.append(Diagnostic("warning", f"compilescope_autotune {problem}; record skipped",
                                              path=rr.path, line=line, stage="trace"))  # fmt: skip
                    continue
                graph = autotune_graph(text)
                payloads.autotune[key].extend((graph, r) for r in autotune_from_artifact(text))
            else:
                payloads.cudagraphs.append((rr.rank, text))
    return _with_diagnostics(apply_stage_payloads(session, payloads), skipped, last=True)


def _logged_torch_version(ranks: list[RankRecords]) -> str:
    """From the `torch_version` artifact (our captures log one first; torch's own traces may)."""
    from compiler_core.trace.json_payload import JsonPayloadError, parse_json

    for rr in ranks:
        try:
            value = parse_json(rr.torch_version) if rr.torch_version else None
        except JsonPayloadError:
            continue
        if isinstance(value, dict) and value.get("pytorch_version"):
            return str(value["pytorch_version"])
    for rr in ranks:  # torch's own traces: compilation_metrics carries `pytorch_version`
        for acc in rr.compiles.values():
            version = acc.metrics.get("pytorch_version")
            if isinstance(version, str) and version:
                return version
    return ""


def _logged_device(ranks: list[RankRecords]) -> str:
    """The device the generated code ran on, from what only that device's code does: allocating
    with `empty_strided_cuda(...)` (a call: Inductor's wrapper *defines* `empty_strided_cuda`
    in CPU code too, which made every CPU log read "cuda"), launching `async_compile.triton`
    kernels (GPU), building `async_compile.cpp` kernels (CPU). A GPU wins over `cpu` (a GPU
    run's wrapper may allocate small CPU scalars too). Without generated code (a log of Dynamo
    only), the devices of the tensors Dynamo described (`describe_tensor`) decide."""
    seen: set[str] = set()
    for rr in ranks:
        for acc in rr.compiles.values():
            for part in acc.partitions:
                seen |= _devices_in(part.output_code)
    if not seen:
        seen = {d for rr in ranks for d in rr.tensor_devices}
    gpu = sorted(seen - {"cpu", _TRITON})
    if gpu:
        return gpu[0]
    return "cuda" if _TRITON in seen else ("cpu" if seen else "")


_DEVICES = ("cuda", "cpu", "xpu", "mps")
_TRITON = "triton"  # Triton kernels seen, device not named (cuda unless an allocation says xpu)
_KERNEL_KINDS = (("async_compile.triton(", _TRITON), ("async_compile.cpp(", "cpu"),
                 ("async_compile.cpp_pybinding(", "cpu"))  # fmt: skip


def _devices_in(code: str) -> set[str]:
    """Devices `code` allocates on or builds kernels for, by substring search (a regex with a
    leading `\\b` tries every position of a deep model's megabytes of output code; `find`
    jumps to each device's first whole-word call)."""
    out = set()
    for device in _DEVICES:
        word = "empty_strided_" + device + "("
        at = code.find(word)
        while at >= 0:
            if at == 0 or not _is_word(code[at - 1]):
                out.add(device)
                break
            at = code.find(word, at + 1)
    out.update(kind for text, kind in _KERNEL_KINDS if text in code)
    return out


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _replace_meta(meta: SessionMeta, ranks: tuple[int, ...]) -> SessionMeta:
    from dataclasses import replace

    return replace(meta, ranks=ranks)


def _with_diagnostics(session: Session, extra: list[Diagnostic], last: bool = False) -> Session:
    if not extra:
        return session
    from dataclasses import replace

    both = (*session.diagnostics, *extra) if last else (*extra, *session.diagnostics)
    return replace(session, diagnostics=both)
