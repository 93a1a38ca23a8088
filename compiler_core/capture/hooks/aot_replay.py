"""Replay a compile's AOT-level records on an AOTAutograd cache hit, so that cache can stay on.

A hit skips tracing the joint graph, partitioning and Inductor's hooks: neither our
`compilescope_graph` records (joint, forward, backward, post-grad) nor torch's own
`aot_*_graph` texts are logged, and the session would lose its AOT stage and saved tensors.
Keeping the cache off makes every warm capture redo that work, a large part of its time. So, per
backend call, `AotRecordWatch` listens on the trace logger: it learns the AOTAutograd cache
state and key from torch's `aotautograd_cache_*` artifact, and on a miss collects the records
that a hit would skip; they are stored under the key and re-logged (inside the same compile
context, so with the right compile id) on a later hit.

Only used when backward is lowered eagerly (`force_non_lazy_backward_lowering`): otherwise the
backward's records arrive after the backend call and a stored entry would be incomplete.
Staleness is handled by the cache key itself, which includes our joint pass's `uuid`, a
fingerprint of the Dynamo graph with its metadata (see RecordingBackend).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from compiler_core.capture.hooks import post_grad_store

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ARTIFACT_NAME = "compilescope_graph"
# torch re-logs its own aot_*_graph texts on a hit, but not the pre-grad graph
_REPLAYED_ARTIFACTS = {ARTIFACT_NAME, "after_pre_grad_graph", "compilescope_decompositions"}
_CONTEXT_KEYS = {"frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank",
                 "has_payload", "stack", "subgraph_name"}


Stored = tuple[str, dict[str, Any], "str | None"]


class AotRecordWatch(logging.Handler):
    """A trace-logger handler for the duration of one backend call (see module doc).

    Torch logs an AOTAutograd hit at the *end* of the load, after each partition's output code
    (loaded from the FX graph cache, whose `fx_graph_cache_hit` artifact carries that
    partition's FX key). The builder assigns post-grad records to partitions by log order, so
    each partition's post-grad record is replayed right after its `fx_graph_cache_hit` (from
    post_grad_store, keyed by FX key) when `inner_compile` never ran, i.e. the AOT cache hit;
    the AOT-level records (joint, forward, backward) follow the `aotautograd_cache_hit`.
    """

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.cache_state = ""
        self.key = ""
        self.inner_called = False  # set by the backend's inner_compile wrapper
        self.records: list[Stored] = []
        self._replaying = False

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if self._replaying or not isinstance(metadata, dict) or not metadata:
            return
        kind = next(iter(metadata))
        if kind != "artifact":
            return
        payload = getattr(record, "payload", None)
        name = metadata["artifact"].get("name", "")
        if name.startswith("aotautograd_cache_") and payload:
            self._on_aot_cache(payload)
        elif name == "fx_graph_cache_hit" and payload and not self.inner_called:
            self._replay(_load_one(post_grad_store.get(_json_key(payload))))
        elif name in _REPLAYED_ARTIFACTS and payload and not _is_post_grad(payload):
            self.records.append((kind, metadata[kind], payload))  # post-grad ones replay per partition

    def _on_aot_cache(self, payload: str) -> None:
        try:
            info = json.loads(payload)
        except ValueError:
            return
        self.cache_state = str(info.get("cache_state", ""))
        self.key = str(info.get("key", ""))
        if self.cache_state == "hit":
            self._replay(_load(post_grad_store.get(self._store_key())))

    def _store_key(self) -> str:
        return f"aot_{self.key}"

    def _replay(self, records: list[Stored]) -> None:
        self._replaying = True
        try:
            replay(records)
        finally:
            self._replaying = False

    def __enter__(self) -> AotRecordWatch:
        from torch._logging._internal import trace_log

        trace_log.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        from torch._logging._internal import trace_log

        trace_log.removeHandler(self)

    def finish(self) -> None:
        """After a successful backend call: store a miss's AOT-level records."""
        if self.cache_state == "miss" and self.key and self.records:
            post_grad_store.put(self._store_key(), json.dumps(self.records))


def _json_key(payload: str) -> str:
    try:
        info = json.loads(payload)
    except ValueError:
        return ""
    return str(info.get("key", "")) if isinstance(info, dict) else ""


def _load_one(stored: str | None) -> list[Stored]:
    """A post_grad_store entry is one compilescope_graph payload."""
    if stored is None:
        return []
    return [("artifact", {"name": ARTIFACT_NAME, "encoding": "json"}, stored)]


def _is_post_grad(payload: str) -> bool:
    return '"stage": "post_grad_' in payload[:64]


def _load(stored: str | None) -> list[Stored]:
    if stored is None:
        return []
    try:
        data = json.loads(stored)
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    return [(str(k), m if isinstance(m, dict) else {}, p) for k, m, p in data]


def replay(records: list[Stored]) -> None:
    """Re-log stored records in the current compile context (so with its compile id)."""
    from torch._logging import trace_structured

    for kind, metadata, payload in records:
        clean = {k: v for k, v in metadata.items() if k not in _CONTEXT_KEYS}
        trace_structured(kind, metadata_fn=lambda m=clean: m, payload_fn=lambda p=payload: p)  # type: ignore[misc]
