"""Every fact the app shows, checked against a source independent of the code that computed it.

    python bench/oracle.py                       # bench/corpus/logs, bench/data, shared tlparse logs
    python bench/oracle.py LOG_OR_SESSION ... --json

Each input is opened the way the app opens it (`import_trace` for a log, `load` for a session).
Each check then compares what the session says with an oracle that shares no code with the app's
reader or builder:

- the log itself, read here line by line with `json` (`RawLog`): `dynamo_output_graph` records per
  run, `dynamo_graph_break_reason` artifacts and the frames their tracebacks print, the
  `# File: path:N ..., code: ...` quotes of every graph, each kernel's own comments in
  `inductor_output_code` (`Topologically Sorted Source Nodes: [...]`, `%name` of its graph
  fragment), failures in `compilation_metrics`;
- PyTorch's own `torch._dynamo.explain`, run on the model in a separate process when the corpus
  was made (the `.json` beside a corpus log: `explain.graph_count`, `graph_break_count`);
- the files on disk (a source text shown as a file must equal the file).

Checks (a cell is ok, FAIL with the first counter-example, or n/a when the entry has no such fact):
`runs`, `graphs`, `explain`, `breaks`, `break_frames`, `sources`, `kernel_claims`, `fold`
(networkx's Weisfeiler-Lehman hash of each numbered block against the app's folds), `device`,
`crash`, `speedups`, `cudagraphs` (counts and time shares across panes, the capture's records),
`counter` (the breaks shown against PyTorch's own `counters["graph_break"]` in the logged
process: that counter only counts breaks Dynamo resumed after at a call, so the breaks it cannot
resume from ("compiling up to the previous resumable state") and the frames it skipped after a
break ("falling back to eager"), which the log records as graph breaks but torch counts under
`unimplemented`, are added from the log's own records).
Prints one table of entries x checks and, with --json, the figures (pass counts per check) and
the same table as `"table": {"columns", "rows"}`, which docs/benchmarks.md shows.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import lzma
import re
import shutil
import sys
import tempfile
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHECKS = ("runs", "graphs", "explain", "breaks", "break_frames", "sources", "kernel_claims", "fold",
          "device", "crash", "speedups", "cudagraphs", "counter")
# breaks the log records that torch's graph_break counter leaves in counters["unimplemented"]
_UNCOUNTED = ("Encountered graph break that we cannot resume from",
              "Skipping the function and falling back to eager")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_QUOTE = re.compile(r"# File: (?P<path>.+?):(?P<line>\d+) in [^,]*, code: (?P<code>.*)$", re.M)
# guards quote the code first, then a path relative to site-packages
_GUARD_QUOTE = re.compile(r"# (?P<code>\S.*?)  # (?P<path>\S+\.py):(?P<line>\d+) in \w+$", re.M)
_TRACE_LINE = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in [^\n]*\n {4}(?P<code>\S[^\n]*)')
_SOURCE_NODES = re.compile(r"Source Nodes: \[([^\]]*)\]")
_FRAGMENT = re.compile(r"^\s*#\s+%(\w+)\s*:", re.M)
# Triton: `name = async_compile.triton('name', ...)`; C++: `name = async_compile.cpp_pybinding([arg
# types], source)`, no name inside
_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(triton|cpp_pybinding|cpp)\(\s*(?:'(\w+)')?", re.M)
# a launch in call(): `name.run(...)` (Triton) or a plain call of a C++ kernel
PROVENANCE = "inductor_provenance_tracking_node_mappings"
_LAUNCH = re.compile(r"^\s*(?:(\w+)\.run|(cpp_\w+))\(")
_OWN = re.compile(r"[/\\]compiler_core[/\\]")


def _open(path: Path) -> TextIO:
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf-8", errors="replace")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


@dataclass
class RawRun:
    graphs: int = 0
    breaks: list[str] = field(default_factory=list)  # payloads of break-reason artifacts
    # restart reasons per compile (logs without break artifacts): each compile names its own
    # breaks, and two breaks in one function can read alike (resumed at lines 9551 and 9553)
    restarts: dict[str, set[str]] = field(default_factory=dict)
    keys: set[tuple[Any, ...]] = field(default_factory=set)
    graph_keys: set[tuple[Any, ...]] = field(default_factory=set)


@dataclass
class RawLog:
    """The log read with nothing but `json`: records, payloads, runs (a compile key seen again
    starts a new run, as does another pid)."""

    runs: list[RawRun] = field(default_factory=list)
    quotes: dict[tuple[str, int], str] = field(default_factory=dict)
    kernel_nodes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    launch_nodes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    output_code: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # CUDA-graph records of the capture's artifact: (kind, compile id, partition), and torch's own
    # skip counter (`counters["inductor"]["cudagraph_skips"]`) as the artifact carries it
    cudagraph_events: list[tuple[str, str, str]] = field(default_factory=list)
    cudagraph_skips_counter: int = 0

    @staticmethod
    def read(paths: list[Path]) -> RawLog:
        raw = RawLog()
        for path in paths:
            raw._read_one(path)
        return raw

    def _read_one(self, path: Path) -> None:
        run = RawRun()
        self.runs.append(run)
        pid = None
        meta: dict[str, Any] | None = None
        payload: list[str] = []
        with _open(path) as f:
            for line in f:
                if line.startswith("\t"):
                    payload.append(line[1:])
                    continue
                if meta is not None:
                    run = self._record(meta, "".join(payload), run)
                meta, payload = None, []
                brace = line.find("{")
                if brace < 0:
                    continue
                head = line[:brace].split()
                if len(head) >= 3 and head[2] != pid:
                    if pid is not None and (run.graphs or run.keys):
                        run = RawRun()
                        self.runs.append(run)
                    pid = head[2]
                try:
                    meta = json.loads(line[brace:])
                except json.JSONDecodeError:
                    meta = None
            if meta is not None:
                self._record(meta, "".join(payload), run)
        self.runs[:] = [r for r in self.runs if r.graphs or r.keys]

    def _record(self, meta: dict[str, Any], payload: str, run: RawRun) -> RawRun:
        if "dynamo_start" in meta:
            key = (meta.get("rank"), meta.get("frame_id"), meta.get("frame_compile_id"), meta.get("attempt"))
            if key in run.keys:
                run = RawRun()
                self.runs.append(run)
            run.keys.add(key)
        if "dynamo_output_graph" in meta:  # a restarted attempt's graph is replaced, not added
            graph_key = (meta.get("rank"), meta.get("frame_id"), meta.get("frame_compile_id"))
            if graph_key not in run.graph_keys:
                run.graph_keys.add(graph_key)
                run.graphs += 1
        artifact = meta.get("artifact") or {}
        if isinstance(artifact, dict) and artifact.get("name") == "dynamo_graph_break_reason":
            run.breaks.append(payload)
        if isinstance(artifact, dict) and artifact.get("name") == "compilescope_cudagraphs":
            try:
                data = json.loads(payload)
            except json.JSONDecodeError:
                data = {}
            for e in data.get("events") or ():
                self.cudagraph_events.append((str(e.get("kind")), str(e.get("compile_id") or ""),
                                              str(e.get("graph") or "")))
            self.cudagraph_skips_counter += int(data.get("skips_counter") or 0)
        if isinstance(artifact, dict) and artifact.get("name") == PROVENANCE:
            self._provenance(payload)
        if "inductor_output_code" in meta:
            self.output_code.append(payload)
            self._kernels(payload)
        metrics = meta.get("compilation_metrics")
        if isinstance(metrics, dict) and not run.breaks:
            # older torch logs no break artifact: a compile's restarts name each of its breaks
            compile_key = str(metrics.get("compile_id") or metrics.get("frame_key") or len(run.restarts))
            # a restart naming only an exception class (TensorifyScalarRestartAnalysis) is no break
            run.restarts.setdefault(compile_key, set()).update(
                str(r)[:300] for r in metrics.get("restart_reasons") or ()
                if not _CLASS_ONLY.match(str(r).strip()))
        if isinstance(metrics, dict) and metrics.get("fail_type"):
            self.failures.append(f"{metrics.get('fail_type')}: {str(metrics.get('fail_reason'))[:200]}")
        for pattern in (_QUOTE, _TRACE_LINE, _GUARD_QUOTE):
            for m in pattern.finditer(payload):
                self.quotes.setdefault((m.group("path"), int(m.group("line"))), m.group("code").rstrip())
        return run

    def quote(self, path: str, line: int) -> str | None:
        """The log's quote of `path:line`; guards name files by a path relative to site-packages."""
        found = self.quotes.get((path, line))
        if found is not None:
            return found
        by_line = self._by_line.get(line)
        if by_line is None:
            return None
        for qpath, code in by_line:
            if path.endswith("/" + qpath.lstrip("/")):
                return code
        return None

    @property
    def _by_line(self) -> dict[int, list[tuple[str, str]]]:
        if not hasattr(self, "_line_index"):
            index: dict[int, list[tuple[str, str]]] = defaultdict(list)
            for (qpath, n), code in self.quotes.items():
                index[n].append((qpath, code))
            self._line_index = index
        return self._line_index

    def _provenance(self, payload: str) -> None:
        """Inductor's own record of which post-grad nodes each kernel computes
        (`cppCodeToPost` / `tritonCodeToPost`: `"kernel:handle" -> [node, ...]`); torch 2.13 writes
        it where a CPU kernel's code carries no node comments."""
        try:
            data = json.loads(payload)
        except json.JSONDecodeError:
            return
        for key, mapping in data.items():
            if key.endswith("CodeToPost") and isinstance(mapping, dict):
                for handle, nodes in mapping.items():
                    self.kernel_nodes[str(handle).rsplit(":", 1)[0]] |= {str(n) for n in nodes or ()}

    def _kernels(self, code: str) -> None:
        defs = list(_KERNEL_DEF.finditer(code))
        for i, m in enumerate(defs):
            end = defs[i + 1].start() if i + 1 < len(defs) else len(code)
            # a kernel's comments (source nodes, graph fragment) sit between the previous
            # definition's header and its own, and inside its own source
            own = code[defs[i - 1].end() if i else 0:end]
            names = set(_FRAGMENT.findall(own))
            for nodes in _SOURCE_NODES.findall(own):
                names |= {n.strip() for n in nodes.split(",") if n.strip()}
            self.kernel_nodes[m.group(1)] |= names
            if m.group(3):
                self.kernel_nodes[m.group(3)] |= names
        # each launch in call(): the comment above it names the nodes that launch computes
        # (post-grad names in a backward, Dynamo's names in a forward)
        named: set[str] = set()
        for line in code.splitlines():
            found = _SOURCE_NODES.search(line)
            if found:
                named = {n.strip() for n in found.group(1).split(",") if n.strip()}
                continue
            launch = _LAUNCH.match(line)
            if launch and named:
                self.launch_nodes[launch.group(1) or launch.group(2)] |= named
                named = set()

    @property
    def device(self) -> str:
        text = "\n".join(self.output_code)
        if "async_compile.triton(" in text or "device(type='cuda'" in text:
            return "cuda"
        if "cpp_fused" in text or "async_compile.cpp" in text:
            return "cpu"
        return ""


@dataclass
class Entry:
    name: str
    paths: list[Path]
    facts: dict[str, Any]


def _cell(ok: bool | None, why: str = "") -> tuple[str, str]:
    return ("n/a", "") if ok is None else (("ok", "") if ok else ("FAIL", why))


def check_session(path: Path) -> dict[str, tuple[str, str]]:
    """A saved session (no log beside it): its timeline's figures against its own samples,
    recomputed here from the step times with nothing but `statistics` (block means, medians)."""
    import statistics

    from compiler_core.queries.summary import summarize
    from compiler_core.session import load

    session = load(path)
    out = {c: _cell(None) for c in CHECKS}
    out["speedups"] = _speedups(session)
    out["cudagraphs"] = _cudagraphs_across_panes(session)
    shown = (summarize(session).get("timeline") or {})
    for mode, row in shown.items():
        mine = [s for s in session.timeline if s.mode == mode and not s.baseline_for]
        blocks: dict[int, list[float]] = defaultdict(list)
        for s in mine:
            if not s.warmup:
                blocks[s.step // 10].append(s.ms)
        if not blocks or row.get("median_ms") is None:
            continue
        want = statistics.median(sum(b) / len(b) for b in blocks.values())
        if abs(want - row["median_ms"]) > 1e-6 * max(1.0, want):
            out["speedups"] = _cell(False, f"{path.name} {mode}: median {row['median_ms']} printed, "
                                           f"{want} from its own steady blocks")
            break
    return out


def _cudagraphs_across_panes(session: Any) -> tuple[str, str]:
    """The CUDA graphs a mode recorded, as the Modes table (`mode_rows`), the CUDA graphs pane
    (`timeline_cudagraphs`) and `summary` show them, against the run's own recording markers
    counted here; and every partition the CUDA graphs pane lists as skipped says why."""
    from compiler_core.analysis.cudagraph_records import timeline_cudagraphs
    from compiler_core.queries.mode_compare import mode_rows

    markers: dict[str, int] = defaultdict(int)
    for e in session.timeline_events:
        if e.kind == "cudagraph_record":
            markers[e.mode] += 1
    table = {r.mode: r.cudagraph_graphs for r in mode_rows(session.mode_stats)}
    pane = {mode: graphs for mode, graphs, _ in timeline_cudagraphs(session)}
    # without markers (a session saved with figures only), the stored count must read the same
    # in both places
    truth = dict(markers) or {m: n for m, n in table.items() if n}
    checked = 0
    for mode, count in truth.items():
        checked += 1
        shown = {"modes table": table.get(mode), "CUDA graphs pane": pane.get(mode)}
        wrong = {k: v for k, v in shown.items() if v is not None and v != count}
        if wrong or mode not in pane:
            return _cell(False, f"{mode}: {count} recording markers, shown {shown}")
    for c in session.compiles:
        for o in c.inductor:
            if o.cudagraph is not None:
                checked += 1
                if not o.cudagraph.captured and not o.cudagraph.skip_reason:
                    return _cell(False, f"{c.compile_id} {o.graph}: not captured and no reason given")
    shares = _cudagraph_shares(session)
    if shares is not None:
        if shares:
            return _cell(False, shares)
        checked += 1
    return _cell(None if not checked else True)


_CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")


def _cudagraph_shares(session: Any) -> str | None:
    """The share of the GPU's busy time inside CUDA graphs, as the Timeline table ("In CUDA
    graphs", from `TimelineData`), the CUDA graphs pane (`timeline_cudagraphs`) and `summary`
    (`cudagraph_share`) show it, must agree per mode; a mode that recorded graphs (markers or
    the Modes table's count) must spend some time in them and one that recorded none no time;
    and a CUDA run of reduce-overhead or max-autotune with graphs recorded must reach the CUDA
    graphs pane (else it reads "No CUDA-graph information"). None when no mode was profiled on a
    GPU (nothing to compare), "" when all agree, else the first disagreement."""
    from compiler_core.analysis.cudagraph_records import timeline_cudagraphs
    from compiler_core.queries.mode_compare import session_mode_rows
    from compiler_core.queries.summary import summarize
    from explorer.state.timeline_data import TimelineData

    data = TimelineData()
    data.load_session(session)
    timeline = {s.mode: s.runtime for s, _ in data.table()}
    pane = {mode: (graphs, share) for mode, graphs, share in timeline_cudagraphs(session)}
    printed = summarize(session).get("timeline") or {}
    modes_table = {r.mode: r.cudagraph_graphs for r in session_mode_rows(session)}
    markers: dict[str, int] = defaultdict(int)
    for e in session.timeline_events:
        if e.kind == "cudagraph_record":
            markers[e.mode] += 1
    compared = False
    for mode, rt in timeline.items():
        if rt is None or rt.cudagraph_us_per_step is None or not rt.busy_us_per_step:
            continue
        compared = True
        share = rt.cudagraph_us_per_step / rt.busy_us_per_step
        graphs = markers.get(mode) or modes_table.get(mode) or 0
        others = {"CUDA graphs pane": pane.get(mode, (0, None))[1],
                  "summary": (printed.get(mode) or {}).get("cudagraph_share")}
        for where, value in others.items():
            # a mode with no graphs is absent from the pane: no share there, and none to show
            if (value or 0.0) != share:
                return (f"{mode}: {share:.3f} of the GPU's time in CUDA graphs in the Timeline table, "
                        f"{value} in {where}")
        if graphs and share <= 0.0:
            return f"{mode}: {graphs} CUDA graph(s) recorded, 0 % of the GPU's time shown inside them"
        if not graphs and share > 0.0:
            return f"{mode}: {share:.0%} of the GPU's time shown inside CUDA graphs, none recorded"
        if graphs and mode.startswith(_CUDAGRAPH_MODES) and mode not in pane:
            return f"{mode}: {graphs} CUDA graph(s) recorded, missing from the CUDA graphs pane"
    return "" if compared else None


def _cudagraphs_from_log(session: Any, raw: RawLog) -> tuple[str, str]:
    """The capture's CUDA-graph records read with `json` alone: a partition with a record event
    and no skip is captured in the app, one with a skip is not and says why, none is captured
    without a record; torch's own skip counter above zero means some partition shows a skip."""
    if not raw.cudagraph_events and not raw.cudagraph_skips_counter:
        return _cell(None)
    records = {(cid, g) for kind, cid, g in raw.cudagraph_events if kind == "record"}
    skipped_compiles = {cid for kind, cid, _ in raw.cudagraph_events if kind == "skip"}
    infos = {(c.compile_id, str(o.graph)): o.cudagraph for c in session.compiles for o in c.inductor
             if o.cudagraph is not None}
    for key, info in infos.items():
        if info.captured and key not in records and (key[0], "forward") not in records:
            return _cell(False, f"{key}: shown captured, the log records no CUDA graph for it")
        if not info.captured and not info.skip_reason:
            return _cell(False, f"{key}: shown not captured, with no reason")
    if raw.cudagraph_skips_counter and not any(not i.captured and i.skip_reason for i in infos.values()):
        return _cell(False, f"torch counted {raw.cudagraph_skips_counter} skip(s); the app shows none")
    if skipped_compiles - {""} - {cid for cid, _ in infos}:
        return _cell(False, f"skips logged for {sorted(skipped_compiles)}, app shows {sorted(infos)}")
    return _cell(True)


def check(entry: Entry) -> dict[str, tuple[str, str]]:
    from compiler_core.analysis import import_trace

    if entry.paths[0].suffix == ".json":
        log = trace_beside(entry.paths[0])
        if log is None:
            return check_session(entry.paths[0])
        from compiler_core.session import load

        # an app session (a capture or a script run) against the log its own run wrote: the
        # facts it shows must agree with that log as an import's do, its timing with its samples
        out = check_facts(entry, load(entry.paths[0]), RawLog.read([log]))
        timing = check_session(entry.paths[0])
        for name in ("speedups", "cudagraphs"):
            if timing[name][0] == "FAIL" or out[name][0] == "n/a":
                out[name] = timing[name]
        return out
    raw = RawLog.read(entry.paths)
    target = entry.paths[0].parent if len(entry.paths) > 1 else entry.paths[0]
    return check_facts(entry, import_trace(target), raw)


def trace_beside(session: Path) -> Path | None:
    """The trace log a capture or script run wrote beside its session (`S.json` → `S.trace.log`)."""
    log = session.with_suffix(".trace.log")
    return log if log.exists() else None


def check_facts(entry: Entry, session: Any, raw: RawLog) -> dict[str, tuple[str, str]]:
    """Every check of a session against the raw log it was made from."""
    out: dict[str, tuple[str, str]] = {}
    runs = sorted({getattr(c, "run", 0) for c in session.compiles})
    per_run = {r: [c for c in session.compiles if getattr(c, "run", 0) == r] for r in runs}
    ranked = len({c.rank for c in session.compiles}) > 1
    app_runs = len(runs)
    raw_runs = len(raw.runs) if not ranked else len(raw.runs) // max(1, len(entry.paths))
    out["runs"] = _cell(app_runs == raw_runs, f"app {app_runs}, log {raw_runs}")
    app_graphs = [sum(1 for c in per_run[r] if c.dynamo_graph is not None) for r in runs]
    raw_graphs = [r.graphs for r in raw.runs]
    out["graphs"] = _cell(sum(app_graphs) == sum(raw_graphs), f"app {app_graphs}, log {raw_graphs}")
    explain = entry.facts.get("explain") or {}
    if "graph_count" in explain and app_graphs:
        want = (explain["graph_count"], explain.get("graph_break_count"))
        got = (app_graphs[0], sum(len(c.graph_breaks) for c in per_run[runs[0]]))
        out["explain"] = _cell(got[0] == want[0], f"app graphs {got[0]} breaks {got[1]}, explain {want}")
    else:
        out["explain"] = _cell(None)
    crashed_log = bool(entry.facts.get("crashed"))
    raw_breaks = [b for r in raw.runs
                  for b in _distinct_wrappers(r.breaks or [x for c in r.restarts.values() for x in sorted(c)])
                  if not (crashed_log and "Observed exception" in b)]  # the crash, not a break
    app_breaks = [b for c in session.compiles for b in c.graph_breaks]
    # exact: each break the log records is one row (a wrapper re-log folded into its break), and
    # nothing else is one (a restart that names no break, the user's crash)
    out["breaks"] = _cell(len(app_breaks) == len(raw_breaks),
                          f"app {len(app_breaks)}, log {len(raw_breaks)} (wrappers left out)")
    counted = entry.facts.get("graph_break_counter")
    if counted is None:
        out["counter"] = _cell(None)
    else:
        uncounted = sum(1 for b in raw_breaks if any(u in b[:400] for u in _UNCOUNTED))
        out["counter"] = _cell(len(app_breaks) == counted + uncounted, f"app {len(app_breaks)}, "
                               f"torch counted {counted} + {uncounted} it leaves uncounted")
    every_break = [b for r in raw.runs for b in r.breaks]
    frames = {(f, int(n)) for b in every_break for f, n in _FRAME.findall(b)}
    bad = [b.location for b in app_breaks if b.location is not None and (
        _OWN.search(b.location.file) or ("/lib/python3." in b.location.file.split("-packages")[0] and
        "-packages" not in b.location.file) or (frames and (b.location.file, b.location.line) not in frames))]
    out["break_frames"] = _cell(None if not app_breaks else not bad, f"{bad[:1]}")
    out["sources"] = _sources(session, raw)
    out["kernel_claims"] = _kernel_claims(session, raw)
    out["fold"] = _fold(session)
    want_device = entry.facts.get("device") or raw.device
    shown = session.meta.device.lower()
    shown_class = "cuda" if any(k in shown for k in ("cuda", "nvidia", "h100", "h200", "gpu")) else (
        "cpu" if shown else "")
    # the metadata's device and the log's own code (Triton or C++ kernels) must both agree
    wanted = {d.split(":")[0] for d in (want_device, raw.device) if d}
    out["device"] = _cell(None if not wanted else wanted == {shown_class},
                          f"shown {session.meta.device!r}, metadata/folder {want_device!r}, "
                          f"log's kernels {raw.device!r}")
    crashed = bool(entry.facts.get("crashed")) or any(
        not f.startswith(("Unsupported", "None")) for f in raw.failures)
    has_error = any(d.severity == "error" for d in session.diagnostics)
    out["crash"] = _cell(crashed == has_error if (crashed or raw.failures or entry.facts) else None,
                         f"log crashed={crashed} ({raw.failures[:1]}), app error diagnostic={has_error}")
    out["speedups"] = _speedups(session)
    out["cudagraphs"] = _cudagraphs_from_log(session, raw)
    return out


_AT = re.compile(r"Graph break in user code at (\S+)")
_CLASS_ONLY = re.compile(r"^<class '[\w.]+'>$")
_GB = re.compile(r"gb/(gb\d+)\.html")


def _distinct_wrappers(breaks: list[str]) -> list[str]:
    """The run's break payloads, less each "failed to handle gracefully" re-log of a break
    logged before it (same GB code at the same user line): Dynamo's wrapper, not a second break."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    for text in breaks:
        at, gb = _AT.search(text), _GB.search(text)
        key = (at.group(1) if at else "", gb.group(1) if gb else "")
        if "Failed to handle graph break gracefully" in text[:300] and key in seen:
            continue
        seen.add(key)
        out.append(text)
    return out


def _sources(session: Any, raw: RawLog) -> tuple[str, str]:
    origins = getattr(session, "source_origins", {}) or {}
    checked = 0
    for path, text in session.sources.items():
        origin = str(origins.get(path, ""))
        lines = text.splitlines()
        if "quote" in origin.lower():
            for i, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                code = raw.quote(path, i)
                if code is None:
                    return _cell(False, f"{path}:{i} shown, quoted nowhere in the log: {line.strip()[:60]!r}")
                if code.strip() != line.strip():
                    return _cell(False, f"{path}:{i} shown {line.strip()!r}, log quotes {code.strip()!r}")
            checked += 1
            continue
        disk = Path(path)
        if disk.is_file():
            if disk.read_text(encoding="utf-8", errors="replace") != text:
                return _cell(False, f"{path}: shown text differs from the file on disk")
            checked += 1
    return _cell(None if not checked else True)


def _kernel_claims(session: Any, raw: RawLog) -> tuple[str, str]:
    checked = 0
    for c in session.compiles:
        for out in c.inductor:
            for k in out.kernels:
                if k.language == "extern" or not k.fused_nodes:
                    continue
                known = raw.kernel_nodes.get(k.name)
                if not known:
                    continue
                known = known | raw.launch_nodes.get(k.name, set())
                inferred = set(getattr(k, "inferred_nodes", ()))
                extra = [n for n in k.fused_nodes if n not in known and n not in inferred]
                checked += 1
                if extra:
                    return _cell(False, f"{c.compile_id} {k.name} claims {len(extra)} of "
                                        f"{len(k.fused_nodes)} nodes its code never names and the app does "
                                        f"not mark inferred, e.g. {extra[:3]}")
    return _cell(None if not checked else True)


_NUMBERED_PART = re.compile(r"^(.*?[^A-Za-z0-9])?(\d+)$")


def block_hash(nodes: list[Any]) -> str:
    """networkx's Weisfeiler-Lehman hash of one numbered block's subgraph: ops with digits
    stripped and the dtypes and shapes of their outputs (stages that differ only in channels or
    kernel sizes are not repeats), edges from node inputs inside the block."""
    import networkx as nx

    names = {x.name for x in nodes}
    dg = nx.DiGraph()
    for x in nodes:
        shapes = ";".join(f"{o.dtype}{list(o.shape)}" for o in x.outputs)
        dg.add_node(x.name, label=f"{x.op}:{re.sub(r'[0-9_]+', '', x.target)}:{shapes}")
        dg.add_edges_from((a, x.name) for a in x.inputs if a in names)
    with warnings.catch_warnings():  # networkx 3.5 notes its directed hashes changed: all are
        warnings.simplefilter("ignore", UserWarning)  # compared within one run here
        return str(nx.weisfeiler_lehman_graph_hash(dg, node_attr="label", iterations=3))


def _fold(session: Any) -> tuple[str, str]:
    """Repeated blocks of the largest Dynamo graph, found with networkx's Weisfeiler-Lehman hash
    of each numbered sibling's subgraph (ops with digits stripped and the dtypes and shapes of
    their outputs, so stages that differ only in channels or kernel sizes are not repeats; edges
    from node inputs), must
    be folded by the app (all but at most one of a run), and no node may sit directly under the
    parent of folded siblings (a block's nodes spilled out of it)."""
    from explorer.layout import build_groups, from_graph

    graphs = [c.dynamo_graph for c in session.compiles if c.dynamo_graph is not None]
    if not graphs:
        return _cell(None)
    g = max(graphs, key=lambda x: len(x.nodes))
    members: dict[tuple[str, str], dict[int, list[Any]]] = defaultdict(lambda: defaultdict(list))
    direct: dict[str, int] = defaultdict(int)
    siblings: dict[str, dict[str, int]] = {}  # parent path -> child name -> rank of first appearance
    for n in g.nodes:
        parts = [p for p in (n.module_path or "").split("/") if p]
        for depth, part in enumerate(parts):  # every numbered level: blocks nest (features/6/1)
            kin = siblings.setdefault("/".join(parts[:depth]), {})
            kin.setdefault(part, len(kin))
            m = _NUMBERED_PART.match(part)
            if m:
                members[("/".join(parts[:depth]), m.group(1) or "")][int(m.group(2))].append(n)
        direct["/".join(parts)] += 1
    runs: list[tuple[str, list[int]]] = []
    for (parent, prefix), by_index in members.items():
        hashes = {}
        for i, nodes in by_index.items():
            hashes[i] = block_hash(nodes)
        rank = siblings.get(parent, {})
        run: list[int] = []
        for i in sorted(hashes):
            # copies follow one another with no other module between (GPT-2's ln_1, attn, ln_2)
            adjacent = rank.get(f"{prefix}{i}", -9) - rank.get(f"{prefix}{i - 1}", -9) in (1, -1)
            if run and i == run[-1] + 1 and hashes[i] == hashes[run[-1]] and adjacent:
                run.append(i)
            else:
                if len(run) >= 2:
                    runs.append((f"{parent}/{prefix}", run))
                run = [i]
        if len(run) >= 2:
            runs.append((f"{parent}/{prefix}", run))
    if not runs:
        return _cell(None)
    tree = build_groups(from_graph(g))
    folded: dict[str, list[set[int]]] = defaultdict(list)  # parent module path -> folded indices
    for f in tree.fold:
        kids = tree.children[f]
        if kids:
            first = tree.path[kids[0]].strip("/")
            parent = first.rsplit("/", 1)[0] if "/" in first else ""
            folded[parent].append({int(m.group(2)) for c in kids
                                   if (m := _NUMBERED_PART.match(tree.label[c]))})
    for where, run in runs:
        if not any(len(set(run) & f) >= len(run) - 1 for f in folded[where.rsplit("/", 1)[0]]):
            return _cell(False, f"{where}{run[0]}..{run[-1]}: {len(run)} identical blocks (WL hash) "
                                "not folded")
    spilled = {where.rsplit("/", 1)[0]: direct.get(where.rsplit("/", 1)[0], 0) for where, _ in runs}
    bad = {p: k for p, k in spilled.items() if k}
    return _cell(not bad, f"nodes directly under a folded block's parent (spilled out of its blocks): {bad}")


def _speedups(session: Any) -> tuple[str, str]:
    """The speedup `summary` prints equals the paired eager median over the mode's median, both
    printed beside it (eager's own median where a mode has no paired blocks)."""
    from compiler_core.queries.summary import summarize

    timeline = summarize(session).get("timeline") or {}
    if not timeline:
        return _cell(None)
    eager = (timeline.get("eager") or {}).get("median_ms")
    for mode, row in timeline.items():
        shown, median = row.get("speedup"), row.get("median_ms")
        base = row.get("baseline_ms") or eager
        if shown is None or not median or base is None or mode == "eager":
            continue
        if abs(shown - base / median) > 1e-6 * max(1.0, shown):
            return _cell(False, f"{mode}: speedup {shown} printed beside {base} / {median}")
    return _cell(True)


def entries(args: list[str]) -> list[Entry]:
    found: list[Entry] = []
    if args:  # logs, rank directories, saved sessions; a corpus entry's .json is its metadata
        return [Entry(Path(a).name.split(".")[0], [_unpacked(Path(a))], _session_facts(Path(a)))
                if a.endswith(".json.xz") else
                Entry(Path(a).name.split(".")[0], _log_paths(Path(a)), _facts(Path(a)))
                for a in args if not (a.endswith(".json") and _is_corpus_meta(Path(a)))]
    corpus = ROOT / "bench/corpus/logs"
    for path in sorted(corpus.glob("*")) if corpus.is_dir() else []:
        if path.suffix == ".json":
            continue
        found.append(Entry(path.name.split(".")[0], _log_paths(path), _facts(path)))
    for path in sorted((ROOT / "bench/data").glob("*.log.xz")):
        found.append(Entry(path.name.split(".")[0], [path], {}))
    # the app's own capture logs kept as fixtures (e.g. a CUDA-graph skip on an H100)
    for path in sorted((ROOT / "tests/fixtures/traces").glob("*_h100_*.log.gz")):
        found.append(Entry(path.name.split(".")[0], [path], {}))
    for path in [*sorted((ROOT / "resources/sessions").glob("*.json")),
                 ROOT / "tests/fixtures/gpu_stages_h100.json",
                 *sorted((ROOT / "tests/fixtures/timeline").glob("*.json"))]:
        if path.is_file():
            found.append(Entry("session:" + path.stem, [path], {}))
    # the app's own sessions of corpus models (capture and script run), each with the log its run
    # wrote, decompressed once into a temp folder
    for path in sorted((ROOT / "bench/corpus/sessions").glob("*/*.json.xz")):
        found.append(Entry(f"app-{path.parent.name}:{path.name.split('.')[0]}", [_unpacked(path)],
                           _session_facts(path)))
    shared = ROOT.parent / "shared/traces/tlparse-inputs/inputs"
    for path in sorted(shared.glob("*.log")) if shared.is_dir() else []:
        found.append(Entry("tlparse:" + path.stem, [path], {}))
    return found


@functools.cache
def _unpack_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="oracle-sessions-"))


def _unpacked(session_xz: Path) -> Path:
    """`S.json.xz` and its `S.trace.log.xz` as plain files side by side in a temp folder."""
    stem = session_xz.name[: -len(".json.xz")]
    folder = _unpack_root() / session_xz.parent.name
    folder.mkdir(exist_ok=True)
    for suffix in (".json", ".trace.log"):
        packed = session_xz.parent / f"{stem}{suffix}.xz"
        if packed.exists():
            with lzma.open(packed) as src, open(folder / f"{stem}{suffix}", "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    return folder / f"{stem}.json"


def _is_corpus_meta(path: Path) -> bool:
    return (path.parent / (path.stem + ".log.xz")).exists() or (path.parent / path.stem).is_dir()


def _log_paths(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and not p.name.endswith(".json"))
    return [path]


def _session_facts(session_xz: Path) -> dict[str, Any]:
    """What is known of an app session apart from the app: the device of its folder
    (`sessions/<device>/`), and its model's corpus metadata (`crashed`; `explain` only where the
    corpus was made on that device, as the GPU sessions were: CPU sessions are of tiny models)."""
    device = session_xz.parent.name
    entry = session_xz.name.split(".")[0].removeprefix("script_")
    facts = _facts(ROOT / "bench/corpus/logs" / f"{entry}.log.xz")
    if str(facts.get("device", "")).split(":")[0] != device:
        facts.pop("explain", None)
        facts.pop("graph_break_counter", None)
    if facts.get("scenario") != "steps":  # the app captured the model's steps, not the log's scenario
        facts.pop("graph_break_counter", None)
    return {**facts, "device": device}


def _facts(path: Path) -> dict[str, Any]:
    """The corpus metadata beside a log (bench/corpus/README.md), reduced to what the checks use:
    `explain` (PyTorch's own counts from a separate process), `device`, `crashed`."""
    side = path.parent / (path.name.split(".")[0] + ".json")
    if side == path:  # a session passed by name is not its own metadata
        return {}
    try:
        meta: dict[str, Any] = json.loads(side.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    explain = (meta.get("oracle") or {}).get("explain") or {}
    facts: dict[str, Any] = {"device": meta.get("device", ""),
                             "crashed": meta.get("expected_outcome") == "crash"}
    counters = (((meta.get("oracle") or {}).get("logged_run") or {}).get("process") or {}).get("counters")
    if isinstance(counters, dict):
        facts["graph_break_counter"] = sum((counters.get("graph_break") or {}).values())
        facts["scenario"] = meta.get("scenario")
    # explain() calls the model once: comparable only where the logged steps did not recompile
    repeats = any(word in str(meta.get("trouble", "")) for word in ("recompile", "dynamic"))
    if explain.get("status") == "ok" and "graph_count" in explain and meta.get("scenario") == "steps" \
            and not repeats:
        facts["explain"] = explain
    return facts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    rows: list[tuple[str, dict[str, tuple[str, str]]]] = []
    for entry in entries(args.inputs):
        try:
            rows.append((entry.name, check(entry)))
        except Exception as exc:  # a failure to open is itself a finding
            rows.append((entry.name, {c: ("FAIL", f"{type(exc).__name__}: {exc}"[:200]) for c in CHECKS}))
        print(f"# {entry.name}: " + " ".join(f"{c}={rows[-1][1][c][0]}" for c in CHECKS), flush=True)
    width = max((len(n) for n, _ in rows), default=10)
    print("| entry".ljust(width + 2) + " | " + " | ".join(CHECKS) + " |")
    print("|" + "-" * (width + 2) + "|" + "|".join("-" * (len(c) + 2) for c in CHECKS) + "|")
    for name, cells in rows:
        print(f"| {name.ljust(width)} | " + " | ".join(cells[c][0].ljust(len(c)) for c in CHECKS) + " |")
    print("\nFailures:")
    for name, cells in rows:
        for c in CHECKS:
            if cells[c][0] == "FAIL":
                print(f"- {name} / {c}: {cells[c][1]}")
    figures = []
    for c in CHECKS:
        applicable = [cells[c][0] for _, cells in rows if cells[c][0] != "n/a"]
        passed = applicable.count("ok")
        figures.append({"name": f"oracle {c}", "value": passed, "unit": f"of {len(applicable)} entries",
                        "target": "all", "ok": passed == len(applicable)})
    if args.json:  # the table too, so bench/benchmarks_page.py shows it from the stored result
        table = {"columns": list(CHECKS),
                 "rows": [[name] + [cells[c][0] for c in CHECKS] for name, cells in rows]}
        print(json.dumps({"figures": figures, "table": table}))


if __name__ == "__main__":
    main()
