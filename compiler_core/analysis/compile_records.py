"""Per-compile accumulation: route each trace record to the compile it belongs to.

`CompileRecords` is the mutable scratchpad for one `[frame/compile]` on one rank; `compile_builder`
turns it into the frozen `Compile`. Restart attempts (`0/0_1`, Dynamo re-tracing after a graph
break) fold into one compile because the user sees one compile whose graph ends at the break.

A log may hold several runs: `torch._dynamo.reset()` and compiling again (as
`torch._dynamo.explain()` does), a script run twice into one file, or another process writing
to it. Each run numbers its compiles from `0/0` again, so a run is a state of the reader, not
damage: a new one starts when a compile id that already finished starts again, when `0/0`
starts after later frames, when another process id writes a `dynamo_start`, or when torch's
per-process records come again (its string table restarting, a second `torch_version`). The
compiles of run N > 1 are named `0/0#N` (ids stay unique in a session: refs and links key on
them) and carry `run = N - 1`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compiler_core.analysis.user_crash import UserCrash
from compiler_core.session.model import Diagnostic
from compiler_core.session.vocab import partition_of
from compiler_core.trace.compile_ids import compile_id_from_string, compile_id_of
from compiler_core.trace.json_payload import JsonPayloadError, parse_json
from compiler_core.trace.record_checks import (
    CHROMIUM_EVENT,
    PROVENANCE,
    fields_problem,
    record_problem,
)
from compiler_core.trace.records import Record

GRAPH_KINDS = {
    "dynamo_output_graph": "dynamo",
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "aot_inference_graph": "aot_inference",
}
CACHE_ARTIFACTS = {
    "fx_graph_cache_hit": ("fx_graph", "hit"),
    "fx_graph_cache_miss": ("fx_graph", "miss"),
    "fx_graph_cache_bypass": ("fx_graph", "bypass"),
    "aotautograd_cache_hit": ("aotautograd", "hit"),
    "aotautograd_cache_miss": ("aotautograd", "miss"),
    "aotautograd_cache_bypass": ("aotautograd", "bypass"),
}
# Chromium event names -> CompileMetrics.stage_s keys.
STAGE_EVENTS = {
    "entire_frame_compile": "total",
    "backend_compile": "backend",
    "create_aot_dispatcher_function": "aot",
    "inductor_compile": "inductor",
    "compile_fx_inner": "inductor",
    "code_gen": "codegen",
    "bytecode_tracing": "dynamo",
}
_TENSOR_DEVICE = re.compile(r"device\(type='(\w+)'")
_STAGE_EVENT_NAME = re.compile(rb'"name": ?"(?:' + "|".join(STAGE_EVENTS).encode() + rb')"')
# Records whose payload the builder reads; everything else is skipped while reading.
PAYLOAD_KINDS = frozenset(
    [*GRAPH_KINDS, "inductor_post_grad_graph", "inductor_pre_grad_graph", "inductor_output_code",
     "dynamo_cpp_guards_str", "dynamo_guards", "artifact", "chromium_event", "dynamo_error",
     "exported_program", "graph_dump"]
)  # fmt: skip
STAGE_ARTIFACTS = frozenset(
    {"compilescope_autotune", "compilescope_cudagraphs", "compilescope_decompositions"}
)
KEPT_ARTIFACTS = frozenset({"fx_graph_runnable", "aot_forward_graph_fw_metadata", "torch_version"})


@dataclass
class Partition:
    """One Inductor compilation (forward, backward or inference) of a compile."""

    post_grad_text: str = ""
    output_code: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    kernel_to_post: dict[str, list[str]] = field(default_factory=dict)  # older logs' mapping
    enriched: Any = None  # the compilescope_graph `Graph` for this partition
    name: str = ""  # forward | backward | inference once known


@dataclass
class CompileRecords:
    compile_id: str
    rank: int | None
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0
    graphs: dict[str, str] = field(default_factory=dict)  # dynamo/aot_* -> readable text
    enriched: dict[str, Any] = field(default_factory=dict)  # stage -> Graph (compilescope_graph)
    pre_grad_text: str = ""
    partitions: list[Partition] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)  # dynamo_graph_break_reason payloads
    guards_text: str = ""
    guards_json: list[Any] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    bwd_metrics: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, str] = field(default_factory=dict)
    stage_s: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    artifacts: dict[str, str] = field(default_factory=dict)
    stack: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False
    run: int = 0  # which run of the log (0 = the first)
    crash: UserCrash | None = None  # set by compile_builder: the user's code raised while traced
    problems: list[str] = field(default_factory=list)  # values compile_builder dropped, said as warnings


@dataclass
class RankRecords:
    """Everything read from one rank's log, grouped by compile."""

    rank: int | None
    path: str
    compiles: dict[str, CompileRecords] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    interned: dict[int, str] = field(default_factory=dict)
    open_events: dict[tuple[str, str, Any], list[float]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    # compilescope stage artifacts (autotune, CUDA graphs, decompositions) as (name, compile id
    # or "-", payload, line): CUDA-graph events are logged at run time, outside any compile.
    stage_artifacts: list[tuple[str, str, str, int]] = field(default_factory=list)
    torch_version: str = ""  # payload of the compile-less `torch_version` artifact, if logged
    tensor_devices: set[str] = field(default_factory=set)  # `describe_tensor` devices: cuda, cpu...
    run: int = 0  # the run being read (0 = the first)
    run_starts: list[tuple[int, str]] = field(default_factory=list)  # (line, why) of runs 2, 3...
    first_run: int = 0  # runs of this rank read from other files before this one
    _run_first: int = 0  # index in `order` of the current run's first compile
    _run_frame: int = -1  # highest Dynamo frame id started in the current run
    _run_pid: int | None = None  # process that wrote the current run's dynamo_start records

    def current_key(self, base_id: str) -> str:
        return base_id if self.run == 0 else f"{base_id}#{self.run + 1}"

    def new_run(self, why: str, line: int) -> None:
        """Start the next run, unless the current one has no compile yet (the first sign of a
        new process is its string table, then its dynamo_start: one run, not two)."""
        if self._run_first == len(self.order):
            return
        self.run += 1
        self.run_starts.append((line, why))
        self._run_first = len(self.order)
        self._run_frame = -1
        self._run_pid = None

    def runs_read(self) -> int:
        """How many runs hold a compile (a log may end with the start of a run that compiled nothing)."""
        return max((acc.run for acc in self.compiles.values()), default=-1) + 1

    def continue_runs(self, earlier: int) -> None:
        """Number this log's runs after `earlier` runs of the same rank read from other files (two
        jobs written into one TORCH_TRACE folder, a job's folder copied beside another): each
        run numbers its compiles from `0/0`, and a rank's ids must stay unique in a session."""
        if earlier <= 0:
            return
        renamed: dict[str, CompileRecords] = {}
        for key in self.order:
            acc = self.compiles[key]
            acc.run += earlier
            acc.compile_id = f"{key.split('#', 1)[0]}#{acc.run + 1}"
            renamed[acc.compile_id] = acc
        self.compiles, self.order = renamed, list(renamed)
        self.run += earlier
        self.first_run = earlier

    def _restarts(self, base_id: str, meta: dict[str, Any], pid: int | None) -> str:
        """Why a `dynamo_start` for `base_id` begins a new run ("" when it does not)."""
        acc = self.compiles.get(self.current_key(base_id))
        if acc is not None and acc.finished:
            return f"compile id {base_id} starts again"
        frame, fcid = meta.get("frame_id"), meta.get("frame_compile_id")
        if "compiled_autograd_id" not in meta and frame == 0 and fcid == 0 and self._run_frame > 0:
            return "compile ids restart at 0/0"
        if pid is not None and self._run_pid is not None and pid != self._run_pid:
            return f"another process (pid {pid}) writes to the log"
        return ""

    def compile_for(self, base_id: str, meta: dict[str, Any], start: Record | None = None) -> CompileRecords:
        """The compile `base_id` of the current run; `start` is the record when it is a
        `dynamo_start`, which may begin a new run."""
        if start is not None:
            why = self._restarts(base_id, meta, start.pid)
            if why:
                self.new_run(why, start.line)
            frame = meta.get("frame_id")
            if isinstance(frame, int) and "compiled_autograd_id" not in meta:
                self._run_frame = max(self._run_frame, frame)
            self._run_pid = start.pid if start.pid is not None else self._run_pid
        key = self.current_key(base_id)
        acc = self.compiles.get(key)
        if acc is None:
            acc = CompileRecords(key, self.rank, meta.get("frame_id"), meta.get("frame_compile_id"),
                                 run=self.run)  # fmt: skip
            self.compiles[key] = acc
            self.order.append(key)
        acc.attempt = max(acc.attempt, int(meta.get("attempt") or 0))
        return acc


def route(rr: RankRecords, rec: Record) -> None:
    """Fold one record into `rr`; a record with a wrong-typed field is skipped with a warning."""
    kind, meta = rec.kind, rec.meta
    problem = record_problem(kind, meta)
    if problem:
        skip(rr, rec, problem)
        return
    if kind == "str":
        _intern(rr, rec)
        return
    if kind == "artifact" and isinstance(rec.value, dict) and rec.value.get("name") == "torch_version":
        rr.new_run("torch logs its version again (a new process)", rec.line)
    if kind == "chromium_event":
        _chromium(rr, rec)
        return
    base = compile_id_of(meta)
    if kind == "artifact" and isinstance(rec.value, dict) and rec.value.get("name") in STAGE_ARTIFACTS:
        rr.stage_artifacts.append((str(rec.value["name"]), base or "-", rec.payload, rec.line))
        return
    if base is None and kind == "compilation_metrics" and isinstance(rec.value, dict):
        base = compile_id_from_string(str(rec.value.get("compile_id", "")))
    if kind == "describe_tensor" and isinstance(rec.value, dict) and isinstance(rec.value.get("device"), str):
        m = _TENSOR_DEVICE.match(rec.value["device"])  # "device(type='cuda', index=0)"
        if m and len(rr.tensor_devices) < 8:
            rr.tensor_devices.add(m.group(1))
    if base is None:
        if kind == "artifact" and isinstance(rec.value, dict) and rec.value.get("name") == "torch_version":
            rr.torch_version = rec.payload
        if kind not in ("describe_tensor", "describe_storage", "describe_source", "artifact", "link"):
            rr.unknown_kinds[kind] = rr.unknown_kinds.get(kind, 0) + 1
        return
    acc = rr.compile_for(base, meta, rec if kind == "dynamo_start" else None)
    _route_compile(rr, acc, rec)


def _route_compile(rr: RankRecords, acc: CompileRecords, rec: Record) -> None:
    kind, value = rec.kind, rec.value
    if kind in GRAPH_KINDS:
        acc.graphs[GRAPH_KINDS[kind]] = rec.payload
    elif kind == "dynamo_start":
        acc.stack = list(rec.meta.get("stack") or (value or {}).get("stack") or [])
    elif kind == "inductor_post_grad_graph":
        _post_grad_partition(acc).post_grad_text = rec.payload
    elif kind == "inductor_pre_grad_graph":
        acc.pre_grad_text = rec.payload
    elif kind == "inductor_output_code":
        _open_partition(acc, "output_code").output_code = rec.payload
    elif kind == "dynamo_cpp_guards_str":
        acc.guards_text = rec.payload
    elif kind == "dynamo_guards":
        guards = _json(rr, rec, default=[])
        acc.guards_json = guards if isinstance(guards, list) else []
    elif kind == "compilation_metrics":
        acc.metrics = dict(value or {})
        acc.finished = True
    elif kind == "bwd_compilation_metrics":
        acc.bwd_metrics = merged_bwd_metrics(acc.bwd_metrics, dict(value or {}))
    elif kind == "dynamo_error":
        acc.errors.append(rec.payload)
    elif kind == "artifact" and isinstance(value, dict):
        _artifact(rr, acc, rec, str(value.get("name", "")))
    elif kind not in (
        "describe_tensor",
        "describe_storage",
        "describe_source",
        "guard_added",
        "expression_created",
        "compilation_metrics_runtime",
        "link",
        "graph_dump",
    ):
        rr.unknown_kinds[kind] = rr.unknown_kinds.get(kind, 0) + 1


def merged_bwd_metrics(seen: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """One compile may log several backward compiles (DDPOptimizer compiles a backward per bucket
    under the frame's one compile id): their times add up, and the first value of anything else
    (a CUDA-graph skip reason) stays. Keeping only the last record reported one bucket's time."""
    out = dict(seen)
    for key, value in new.items():
        before = out.get(key)
        if key.endswith("_time_s") and isinstance(value, int | float) and isinstance(before, int | float):
            out[key] = before + value
        elif before in (None, ""):
            out[key] = value
    return out


def _artifact(rr: RankRecords, acc: CompileRecords, rec: Record, name: str) -> None:
    if name in ("inductor_post_grad_graph", "after_post_grad_graph"):
        _post_grad_partition(acc).post_grad_text = rec.payload
    elif name in ("after_pre_grad_graph", "inductor_pre_grad_graph"):
        acc.pre_grad_text = rec.payload
    elif name == "inductor_provenance_tracking_node_mappings":
        data = _json(rr, rec, default={})
        if _shape_ok(rr, rec, fields_problem(data, PROVENANCE, "provenance map")) and len(data) > 1:
            _open_partition(acc, "provenance").provenance = data
    elif name == "inductor_triton_kernel_to_post_grad_nodes":
        data = _json(rr, rec, default={})
        if _shape_ok(rr, rec, fields_problem({"map": data}, {"map": PROVENANCE["preToPost"]}, "kernel map")):
            _open_partition(acc, "kernel_to_post").kernel_to_post = data
    elif name == "dynamo_graph_break_reason":
        acc.breaks.append(rec.payload)
    elif name == "recompile_reasons":
        acc.recompile_reasons.extend(_recompile_reasons(rec.payload))
    elif name in CACHE_ARTIFACTS:
        stage, result = CACHE_ARTIFACTS[name]
        acc.cache[stage] = result
    elif name == "dynamo_error":
        acc.errors.append(rec.payload)
    elif name == "compilescope_graph":
        _enriched(rr, acc, rec)
    elif name in KEPT_ARTIFACTS:
        acc.artifacts[name] = rec.payload


def _recompile_reasons(payload: str) -> list[str]:
    """Older torch logs a JSON list of reasons; newer torch logs the reasons as plain text (one
    per line) under the same `"encoding": "json"` header, so text that is not JSON is the reason."""
    try:
        data = parse_json(payload)
    except JsonPayloadError:
        return [ln.strip() for ln in payload.splitlines() if ln.strip()]
    if isinstance(data, list):
        return [str(r).strip() for r in data]
    return [str(data).strip()] if str(data).strip() else []


def _enriched(rr: RankRecords, acc: CompileRecords, rec: Record) -> None:
    """Decoded into a `Graph` here, not when the compile is frozen, so a malformed graph is
    reported against its own line and the compile falls back to the logged text."""
    from compiler_core.session.model import Graph
    from compiler_core.session.wire import BadValueError, checked

    data = _json(rr, rec, default={})
    if not isinstance(data, dict) or "stage" not in data or "graph" not in data:
        return
    if not isinstance(data["stage"], str):
        skip(rr, rec, "compilescope_graph stage is not a string")
        return
    try:
        graph = checked(Graph, data["graph"])
    except BadValueError as exc:
        skip(rr, rec, f"compilescope_graph does not hold a graph ({exc})")
        return
    stage = data["stage"]
    if stage.startswith("post_grad_") and partition_of(stage[len("post_grad_") :]) is None:
        skip(rr, rec, "compilescope_graph stage names no partition (forward/backward/inference)")
        return
    if stage.startswith("post_grad_"):
        part = _open_partition(acc, "enriched")
        part.enriched = graph
        part.name = stage[len("post_grad_") :]
    else:
        acc.enriched[stage] = graph


def _new_partition(acc: CompileRecords) -> Partition:
    acc.partitions.append(Partition())
    return acc.partitions[-1]


def _post_grad_partition(acc: CompileRecords) -> Partition:
    """Logs carry `after_post_grad_graph`, `inductor_post_grad_graph` or both for one Inductor
    compilation: a partition still waiting for its output code takes the later one."""
    if acc.partitions and not acc.partitions[-1].output_code and acc.partitions[-1].post_grad_text:
        return acc.partitions[-1]
    return _new_partition(acc)


def _open_partition(acc: CompileRecords, slot: str) -> Partition:
    """The latest partition still missing `slot` (a new one when all have it)."""
    if acc.partitions:
        last = acc.partitions[-1]
        if not getattr(last, slot):
            return last
    return _new_partition(acc)


def _intern(rr: RankRecords, rec: Record) -> None:
    value = rec.value
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
        if value[1] in rr.interned:  # torch interns each string once per process
            rr.new_run("the string table starts again (a new process)", rec.line)
        rr.interned[value[1]] = str(value[0])


def _chromium(rr: RankRecords, rec: Record) -> None:
    """Sum begin/end durations of the stage events per compile id."""
    if not rec.raw_payload or not _STAGE_EVENT_NAME.search(rec.raw_payload):
        return  # most events are other spans: skip their JSON
    ev = _json(rr, rec, default=None)
    if not isinstance(ev, dict) or ev.get("name") not in STAGE_EVENTS:
        return
    if not _shape_ok(rr, rec, fields_problem(ev, CHROMIUM_EVENT, "chromium event")):
        return
    cid = compile_id_from_string(str((ev.get("args") or {}).get("compile_id", "")))
    if cid is None:
        return
    key = (str(ev["name"]), cid, ev.get("tid"))
    ts = float(ev.get("ts") or 0.0)
    if ev.get("ph") == "B":
        rr.open_events.setdefault(key, []).append(ts)
    elif ev.get("ph") == "E" and rr.open_events.get(key):
        start = rr.open_events[key].pop()
        acc = rr.compiles.get(rr.current_key(cid))
        if acc is not None:
            stage = STAGE_EVENTS[key[0]]
            acc.stage_s[stage] = acc.stage_s.get(stage, 0.0) + (ts - start) / 1e6


def skip(rr: RankRecords, rec: Record, why: str) -> None:
    """Warn that `rec` is not used, naming its header line."""
    rr.diagnostics.append(Diagnostic("warning", f"{why}; record skipped", path=rr.path, line=rec.line,
                                     stage="trace"))  # fmt: skip


def _shape_ok(rr: RankRecords, rec: Record, problem: str | None) -> bool:
    if problem:
        skip(rr, rec, problem)
    return problem is None


def _json(rr: RankRecords, rec: Record, default: Any) -> Any:
    if not rec.raw_payload.strip():
        # no payload at all is not damage: an FX-graph cache hit logs its provenance artifacts
        # with nothing after the header (a script run twice against a warm cache)
        return default
    try:
        return parse_json(rec.payload)
    except JsonPayloadError as exc:
        line = rec.line + exc.lineno
        rr.diagnostics.append(
            Diagnostic(
                "warning",
                f"malformed JSON payload in {rec.kind} record: {exc}",
                path=rr.path,
                line=line,
                stage="trace",
            )
        )
        return default
