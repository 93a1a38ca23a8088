"""Write PyTorch's structured trace (`torch.__trace`) to a tlparse-compatible log file.

This is what `TORCH_TRACE=dir` does, scoped to one capture: a handler with torch's own
`TorchLogsFormatter(trace=True)` on the `torch.__trace` logger, so the file is byte-for-byte the
format tlparse and our importer read. Differences from TORCH_TRACE, and why:

- We choose the file path (next to the session) instead of a random name in a directory.
- Strings interned *before* the handler was installed (`structured.INTERN_TABLE`) are never
  logged again, so stack frames would reference unknown ids; we dump the table first.
- Every record is flushed as it is written, so a crash or segfault leaves a readable log.
- An optional observer sees each record's metadata (cheap dict), which drives progress events.

On exit the logger's level, handlers and `isEnabledFor` are restored exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

RecordObserver = Callable[[dict[str, Any], "str | None"], None]


class _TraceFileHandler(logging.FileHandler):
    """FileHandler that also tells an observer about each record (never failing the compile)."""

    def __init__(self, path: Path, observer: RecordObserver | None) -> None:
        super().__init__(path, mode="w", encoding="utf-8", delay=False)
        self._observer = observer

    def emit(self, record: logging.LogRecord) -> None:
        _bound(record)
        super().emit(record)  # StreamHandler flushes after every record
        if self._observer is not None:
            metadata = getattr(record, "metadata", None)
            if isinstance(metadata, dict):
                try:
                    self._observer(metadata, getattr(record, "payload", None))
                except Exception as exc:  # an observer bug must not break the user's compile
                    # one line: the exception being handled may chain the user's (a 60 MB message)
                    logging.getLogger(__name__).warning("trace observer failed: %s: %.300s",
                                                        type(exc).__name__, exc)


MAX_TEXT = 1 << 20  # one field or payload; torch may log one huge exception message many times
# A graph is what the log is for, and a real model's is large: the joint graph record of a
# 2-layer HF Llama is 1.4 MB, a 32-layer model's graphs tens of MB. Graph payloads keep this bound.
MAX_GRAPH = 1 << 29
GRAPH_RECORDS = frozenset([
    "dynamo_output_graph", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
    "aot_inference_graph", "inductor_pre_grad_graph", "inductor_post_grad_graph", "inductor_output_code",
    "graph_dump", "optimize_ddp_split_graph", "optimize_ddp_split_child",
])
_CUT = "\n[... {} characters cut by CompileScope: a trace record is kept under 1 MiB a field]"


def _payload_limit(metadata: Any) -> int:
    """MAX_GRAPH for graph and code records (torch's, and the capture's own graph records),
    MAX_TEXT for the rest (messages, tracebacks, metrics: `dynamo_graph_break_reason` carries
    the user's exception text)."""
    if not isinstance(metadata, dict):
        return MAX_TEXT
    if GRAPH_RECORDS.intersection(metadata):
        return MAX_GRAPH
    artifact = metadata.get("artifact")
    name = artifact.get("name", "") if isinstance(artifact, dict) else ""
    graph = isinstance(name, str) and (name.endswith("_graph") or name == "fx_graph_runnable" or
                                       name.startswith("compilescope_graph"))
    return MAX_GRAPH if graph else MAX_TEXT


def _bound(record: logging.LogRecord) -> None:
    """Cut any string field of the record's metadata to MAX_TEXT, and its payload to its limit
    (`_payload_limit`): torch logs the message of an exception several times over, so a model
    that raises with a huge message would otherwise have gigabytes written to its log."""
    payload = getattr(record, "payload", None)
    metadata = getattr(record, "metadata", None)
    limit = _payload_limit(metadata)
    if isinstance(payload, str) and len(payload) > limit:
        if payload.lstrip()[:1] in ("{", "["):  # JSON cut in a string is no JSON: say so instead
            record.payload = _json({"compilescope_cut": len(payload)})
        else:
            record.payload = payload[:limit] + _CUT.format(len(payload) - limit)
    if isinstance(metadata, dict):
        record.metadata = _bounded(metadata)


def _bounded(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + _CUT.format(len(value) - MAX_TEXT)
    if depth < 4 and isinstance(value, dict):
        return {k: _bounded(v, depth + 1) for k, v in value.items()}
    if depth < 4 and isinstance(value, list):
        return [_bounded(v, depth + 1) for v in value]
    return value


class TraceLogSink:
    """Context manager: while open, torch's structured trace goes to `path` as well."""

    def __init__(self, path: str | Path, observer: RecordObserver | None = None) -> None:
        self.path = Path(path)
        self._observer = observer
        self._handler: _TraceFileHandler | None = None
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> TraceLogSink:
        from torch._logging._internal import TorchLogsFormatter, trace_log

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handler = _TraceFileHandler(self.path, self._observer)
        handler.setFormatter(TorchLogsFormatter(trace=True))
        self._saved = {
            "level": trace_log.level,
            "isEnabledFor": trace_log.__dict__.get("isEnabledFor"),
            "propagate": trace_log.propagate,
        }
        trace_log.setLevel(logging.DEBUG)
        # As torch does for TORCH_TRACE: logging.disable() must not silence the trace.
        trace_log.isEnabledFor = lambda level: level >= trace_log.level  # type: ignore[method-assign]
        trace_log.propagate = False
        trace_log.addHandler(handler)
        self._handler = handler
        self._dump_intern_table()
        self._log_torch_version()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        from torch._logging._internal import trace_log

        if self._handler is None:
            return
        trace_log.removeHandler(self._handler)
        self._handler.close()
        self._handler = None
        trace_log.setLevel(self._saved["level"])
        trace_log.propagate = self._saved["propagate"]
        if self._saved["isEnabledFor"] is None:
            trace_log.__dict__.pop("isEnabledFor", None)
        else:
            trace_log.isEnabledFor = self._saved["isEnabledFor"]  # type: ignore[method-assign]

    def _dump_intern_table(self) -> None:
        """Re-emit already interned strings, to this handler only, in id order."""
        from torch._logging import structured

        for text, index in sorted(structured.INTERN_TABLE.items(), key=lambda kv: kv[1]):
            self._write({"str": [text, index]}, None)

    def _log_torch_version(self) -> None:
        import torch

        version = {"pytorch_version": torch.__version__, "oss": True}
        self._write({"artifact": {"name": "torch_version", "encoding": "json"}}, _json(version))

    def _write(self, metadata: dict[str, Any], payload: str | None) -> None:
        from torch._logging._internal import trace_log

        assert self._handler is not None
        if payload is not None:
            import hashlib

            digest = hashlib.md5(payload.encode(), usedforsecurity=False).hexdigest()
            metadata = {**metadata, "has_payload": digest}
        record = trace_log.makeRecord(
            trace_log.name, logging.DEBUG, __file__, 0, "", (), None,
            extra={"metadata": metadata, "payload": payload},
        )
        self._handler.handle(record)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=0)
