"""Record whether each compiled graph ran as a CUDA graph, and if not, why; re-recordings too.

Inductor reports all of this on loggers only, so this module taps them (torch 2.11–2.15):

- skips: `log_cudagraph_skip_and_bump_counter(msg)` in `torch._inductor.cudagraph_utils` logs
  "skipping cudagraphs due to mutated inputs ... Found from: <user stack>" at WARNING on the
  `cudagraphs` artifact logger (2.12+) or the `perf_hints` one (2.11), and bumps
  `counters["inductor"]["cudagraph_skips"]`. Compile-time skips happen inside the compile, so
  `CompileContext.current_compile_id()` names the compile; the partition comes from
  `PartitionTracker` (the graph most recently handed to Inductor).
- recordings and re-recordings: cudagraph trees log "[0/0] Recording function=1, mode=FORWARD,
  ..." and "[0/0] Re-recording function=..., mode=..., reason=..." at DEBUG on
  `torch._inductor.cudagraph_trees`' `cudagraphs` logger. The re-record reason is only computed
  when that logger is enabled for DEBUG, so we lower its level while open. To keep the user's
  console as quiet as before, the tapped logger stops propagating and our handler forwards only
  records the console would have shown anyway.

Recordings happen on the *second* call of a compiled function (the first is a warm-up), at run
time, outside any compile: the artifact `compilescope_cudagraphs` is therefore logged once, on
exit, with the compile id inside each event.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ARTIFACT = "compilescope_cudagraphs"
SKIP_LOGGERS = (
    "torch._inductor.cudagraph_utils.__cudagraphs",  # torch 2.12+
    "torch._inductor.cudagraph_utils.__perf_hints",  # torch 2.11
)
TREE_LOGGER = "torch._inductor.cudagraph_trees.__cudagraphs"
_PREFIX = re.compile(r"^\[(?P<cid>[^\]]*)\]\s*")
_FIELD = re.compile(
    r"(function|mode|reason)=(.*?)(?=, (?:function|mode|cuda_graph_id|reason|inputs)=|$)", re.S
)


@dataclass
class CudaGraphEvent:
    kind: str  # skip | record | rerecord
    compile_id: str = ""
    graph: str = ""  # forward | backward | inference ("" when unknown)
    message: str = ""
    function: str = ""


class PartitionTracker:
    """Remembers which partition Inductor is compiling (set from a custom post-grad pre-pass)."""

    def __init__(self) -> None:
        self.compile_id = ""
        self.graph = ""

    def saw(self, graph: Any) -> None:
        tangents = any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes)
        self.compile_id = current_compile_id()
        self.graph = "backward" if tangents else "forward"


def current_compile_id() -> str:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
    except Exception:  # no compile in progress
        return ""
    return "" if cid is None else str(cid)


class _Tap(logging.Handler):
    """Collects one logger's records and forwards those the console would have shown."""

    def __init__(self, logger: logging.Logger, level: int, sink: CudaGraphRecorder) -> None:
        super().__init__(level=logging.DEBUG)
        self.logger, self.sink = logger, sink
        self.saved = (logger.level, logger.propagate)
        self.console_level = logger.getEffectiveLevel()
        self.forward = logger.propagate
        logger.addHandler(self)
        if level < self.console_level:
            logger.setLevel(level)
            logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # never break the user's run over a message
            self.sink.on_record(self.logger.name, record)
        if self.forward and not self.logger.propagate and record.levelno >= self.console_level:
            parent = self.logger.parent
            if parent is not None:
                parent.handle(record)

    def remove(self) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.saved[0])
        self.logger.propagate = self.saved[1]


class CudaGraphRecorder:
    """Context manager: collects CudaGraphEvents while open and logs them as one artifact on exit."""

    def __init__(self, partitions: PartitionTracker | None = None) -> None:
        self.partitions = partitions or PartitionTracker()
        self.events: list[CudaGraphEvent] = []
        self._taps: list[_Tap] = []

    def __enter__(self) -> CudaGraphRecorder:
        for name in SKIP_LOGGERS:
            self._taps.append(_Tap(logging.getLogger(name), logging.WARNING, self))
        self._taps.append(_Tap(logging.getLogger(TREE_LOGGER), logging.DEBUG, self))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for tap in self._taps:
            tap.remove()
        self._taps.clear()
        self.emit()

    def on_record(self, logger: str, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if logger == TREE_LOGGER:
            event = tree_event(text)
        elif record.levelno >= logging.WARNING and "cudagraph" in text.lower():
            cid = current_compile_id()
            graph = self.partitions.graph if cid and cid == self.partitions.compile_id else ""
            event = CudaGraphEvent("skip", cid, graph, text.strip())
        else:
            event = None
        if event is not None:
            self.events.append(event)

    def payload(self) -> dict[str, Any]:
        from torch._dynamo.utils import counters

        return {"events": [asdict(e) for e in self.events],
                "skips_counter": int(counters["inductor"].get("cudagraph_skips", 0))}

    def emit(self) -> None:
        from torch._logging import trace_structured

        trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": ARTIFACT, "encoding": "json"},
            payload_fn=lambda: json.dumps(self.payload()),
        )


def tree_event(text: str) -> CudaGraphEvent | None:
    """A cudagraph-trees DEBUG line → a record/rerecord event (others → None)."""
    m = _PREFIX.match(text)
    cid = m["cid"] if m else ""
    body = text[m.end():] if m else text
    if body.startswith("Re-recording"):
        kind = "rerecord"
    elif body.startswith("Recording function"):
        kind = "record"
    else:
        return None
    fields = {k: v.strip() for k, v in _FIELD.findall(body)}
    graph = fields.get("mode", "").lower()
    reason = fields.get("reason", "") if kind == "rerecord" else ""
    return CudaGraphEvent(kind, cid, graph, reason, fields.get("function", ""))
