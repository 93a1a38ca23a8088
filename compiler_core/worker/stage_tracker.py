"""Turn trace records into progress events: which compile stage is running, and graph breaks.

The structured trace already narrates a compile through `chromium_event` records (B/E pairs
named after torch functions). We map a few stable names to our stages instead of hooking
Dynamo, AOT and Inductor separately; unknown names are ignored, so new torch versions only
make progress coarser, never wrong. Payload JSON is parsed only for chromium events and graph
break artifacts, which are small.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from compiler_core.worker.protocol import Event

# chromium "B" event name -> stage that begins there
_BEGIN_STAGE = {
    "entire_frame_compile": "dynamo",
    "backend_compile": "aot",
    "entire_backward_compile": "aot",
    "inductor_compile": "inductor",
}
# chromium "E" event names that end whatever stage is running for that compile
_END_ALL = {"entire_frame_compile", "entire_backward_compile"}


def compile_id_of(metadata: dict[str, Any]) -> str:
    frame, attempt = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or attempt is None:
        return ""
    ca = metadata.get("compiled_autograd_id")
    prefix = f"!{ca}/" if ca is not None else ""
    return f"{prefix}{frame}/{attempt}"


class StageTracker:
    """Trace-record observer (see TraceLogSink) that emits `stage` and graph-break events."""

    def __init__(self, emit: Callable[[Event], None], clock: Callable[[], float]) -> None:
        self._emit = emit
        self._clock = clock
        self.current: str = ""
        self.compile_id: str = ""
        self._started_at = 0.0
        self.graph_breaks = 0

    def __call__(self, metadata: dict[str, Any], payload: str | None) -> None:
        if "chromium_event" in metadata and payload:
            self._on_chromium(json.loads(payload), compile_id_of(metadata))
        elif "artifact" in metadata and payload:
            name = metadata["artifact"].get("name", "")
            if name == "dynamo_graph_break_reason":
                self.graph_breaks += 1
                self._emit(Event("warning", t=self._clock(), compile_id=compile_id_of(metadata),
                                 message="graph break: " + payload.strip().splitlines()[0][:500],
                                 data={"category": "graph_break"}))

    def _on_chromium(self, event: dict[str, Any], compile_id: str) -> None:
        name, phase = event.get("name", ""), event.get("ph", "")
        if phase == "B" and name in _BEGIN_STAGE:
            self._switch(_BEGIN_STAGE[name], compile_id)
        elif phase == "E" and name in _END_ALL:
            self.finish("finished")

    def _switch(self, stage: str, compile_id: str) -> None:
        if stage == self.current and compile_id == self.compile_id:
            return
        self.finish("finished")
        self.current, self.compile_id, self._started_at = stage, compile_id, time.monotonic()
        self._emit(Event("stage", t=self._clock(), stage=stage, state="started", compile_id=compile_id))

    def finish(self, state: str) -> None:
        """Close the running compile stage (also called with "failed" when the run raises)."""
        if not self.current:
            return
        elapsed = round(time.monotonic() - self._started_at, 4)
        self._emit(Event("stage", t=self._clock(), stage=self.current, state=state,
                         compile_id=self.compile_id, elapsed_s=elapsed))
        self.current = ""
