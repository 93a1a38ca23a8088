"""A torch.compile backend that is Inductor plus a recorder, built only from official hook points.

`RecordingBackend` is what `torch.compile(model, backend=...)` receives. For each Dynamo graph it
logs the graph, then calls Inductor's `compile_fx` with

- `inner_compile` wrapped: AOTAutograd hands every partition (forward, backward, inference) to
  it with `is_inference`/`is_backward` flags. We log the partition before Inductor sees it and,
  after Inductor returns, the same `GraphModule` again: Inductor's post-grad passes mutate it
  in place, so it is then the graph whose node names the kernels' fused nodes refer to;
- `joint_custom_post_pass`: sees the joint forward+backward graph after Inductor's joint passes,
  i.e. the graph the partitioner splits;
- `post_grad_custom_post_pass`: only marks that post-grad passes ran, so a crash inside
  Inductor before them is not mistaken for a post-grad graph. On an FX graph cache hit they
  do not run; the record stored by the compile that filled the cache entry is replayed
  instead (post_grad_store.py). On an AOTAutograd cache hit none of the hooks run;
  `AotRecordWatch` (aot_replay.py) replays that compile's stored records. Both keep warm
  captures about as fast as plain compiles.

Hooks and the mode's Inductor options travel in `config_patches`, which `compile_fx` also
re-applies around a lazily compiled backward. Every record is a structured-trace artifact named
`compilescope_graph` with payload `{"stage": ..., "graph": <session Graph as JSON>}`, logged
inside the compile context so it carries the right compile id. Both passes subclass
`CustomGraphPass` because their `uuid` is part of Inductor's FX cache key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx
from torch._inductor.custom_graph_pass import CustomGraphPass

from compiler_core.capture.graph_records import graph_record
from compiler_core.capture.hooks import post_grad_store
from compiler_core.capture.hooks.aot_replay import AotRecordWatch
from compiler_core.session.wire import plain

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ARTIFACT_NAME = "compilescope_graph"
STAGES = (
    "dynamo", "aot_joint", "aot_forward", "aot_backward", "aot_inference",
    "post_grad_forward", "post_grad_backward", "post_grad_inference",
)


def graph_payload(stage: str, graph: torch.fx.Graph) -> str:
    """The artifact payload for `graph` at `stage` (see STAGES)."""
    kind, name = _kind_and_name(stage)
    return json.dumps({"stage": stage, "graph": plain(graph_record(graph, kind, name))})


def emit_payload(payload: str) -> None:
    from torch._logging import trace_structured

    trace_structured(
        "artifact",
        metadata_fn=lambda: {"name": ARTIFACT_NAME, "encoding": "json"},
        payload_fn=lambda: payload,
    )


def emit_graph(stage: str, graph: torch.fx.Graph) -> None:
    """Log `graph` as a compilescope_graph artifact (built only if a trace handler listens)."""
    from torch._logging import trace_structured

    trace_structured(
        "artifact",
        metadata_fn=lambda: {"name": ARTIFACT_NAME, "encoding": "json"},
        payload_fn=lambda: graph_payload(stage, graph),
    )


def _kind_and_name(stage: str) -> tuple[str, str]:
    """Stage → (Graph.kind, Graph.name): `post_grad_backward` → (`post_grad`, `backward`)."""
    if stage == "dynamo":
        return "dynamo", ""
    if stage.startswith("post_grad_"):
        return "post_grad", stage.removeprefix("post_grad_")
    return stage, stage.removeprefix("aot_")


def partition_name(kwargs: dict[str, Any]) -> str:
    if kwargs.get("is_backward"):
        return "backward"
    return "inference" if kwargs.get("is_inference") else "forward"


class _PostGradMarker(CustomGraphPass):
    """post_grad_custom_post_pass: marks graphs that reached the end of post-grad passes.

    Its `uuid` enters Inductor's FX cache key: "compilescope" keeps our entries apart from plain
    runs' (whose hits would have no stored record), and `fingerprint`, a hash of the graph about
    to be compiled *with* its metadata, makes a moved user line a cache miss (post_grad_store).
    """

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.reached: set[int] = set()
        self.fingerprint = ""

    def __call__(self, graph: torch.fx.Graph) -> None:
        if self.previous is not None:
            self.previous(graph)
        self.reached.add(id(graph))

    def uuid(self) -> Any:
        return ("compilescope", post_grad_store.RECORD_VERSION, self.fingerprint, _uuid_of(self.previous))


class _JointRecorder(CustomGraphPass):
    """joint_custom_post_pass: logs the joint graph (the inference graph runs these passes too)."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.fingerprint = ""  # of the Dynamo graph with metadata: enters the AOTAutograd cache key

    def __call__(self, graph: torch.fx.Graph) -> None:
        if self.previous is not None:
            self.previous(graph)
        if any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes):
            emit_graph("aot_joint", graph)

    def uuid(self) -> Any:
        version = post_grad_store.RECORD_VERSION
        return ("compilescope-joint", version, self.fingerprint, _uuid_of(self.previous))


def _uuid_of(custom_pass: Any) -> Any:
    """A chained user pass keeps its own cache identity (None, i.e. no caching, if it has none)."""
    if custom_pass is None:
        return ""
    return custom_pass.uuid() if hasattr(custom_pass, "uuid") else None


class RecordingBackend:
    """`backend=` for torch.compile; accepts the `mode`/`options` torch passes to custom backends."""

    def __init__(self, dynamic: bool | None = None, extra_patches: dict[str, Any] | None = None) -> None:
        self.dynamic = dynamic
        self.extra_patches = dict(extra_patches or {})
        self.graphs_compiled = 0
        self.__name__ = "compilescope"

    def __call__(
        self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], mode: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> Callable[..., Any]:
        from torch._inductor import config as inductor_config
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner

        self.graphs_compiled += 1
        dynamo_payload = graph_payload("dynamo", gm.graph)
        emit_payload(dynamo_payload)
        marker = _PostGradMarker(inductor_config.post_grad_custom_post_pass)
        joint = _JointRecorder(inductor_config.joint_custom_post_pass)
        joint.fingerprint = hashlib.sha256(dynamo_payload.encode()).hexdigest()[:32]
        patches = {
            **mode_config(mode, options, self.dynamic),
            **self.extra_patches,
            "post_grad_custom_post_pass": marker,
            "joint_custom_post_pass": joint,
        }

        watch = AotRecordWatch()

        def inner(gm_: torch.fx.GraphModule, inputs: Sequence[Any], **kwargs: Any) -> Any:
            watch.inner_called = True
            part = partition_name(kwargs)
            before = graph_payload(f"aot_{part}", gm_.graph)
            emit_payload(before)
            marker.fingerprint = hashlib.sha256(before.encode()).hexdigest()[:32]
            result = None
            try:
                result = compile_fx_inner(gm_, inputs, **kwargs)
                return result
            finally:
                self._emit_post_grad(part, gm_, marker, result)

        with watch:
            compiled: Callable[..., Any] = compile_fx(  # type: ignore[assignment]
                gm, example_inputs, inner_compile=inner, config_patches=patches
            )
        watch.finish()
        return compiled

    @staticmethod
    def _emit_post_grad(part: str, gm: torch.fx.GraphModule, marker: _PostGradMarker, result: Any) -> None:
        """After Inductor: record the mutated graph (miss) or replay the stored record (FX cache hit)."""
        key = getattr(result, "_fx_graph_cache_key", None)
        if id(gm.graph) in marker.reached:
            payload = graph_payload(f"post_grad_{part}", gm.graph)
            emit_payload(payload)
            if key:
                post_grad_store.put(key, payload)
        elif key:
            stored = post_grad_store.get(key)
            if stored is not None:
                emit_payload(stored)

    def reset(self) -> None:
        """torch._dynamo.reset() calls this; forget cudagraph trees like Inductor's own wrapper."""
        from torch._inductor import config as inductor_config

        if inductor_config.triton.cudagraphs:
            from torch._inductor.cudagraph_trees import reset_cudagraph_trees

            reset_cudagraph_trees()


def mode_config(mode: str | None, options: dict[str, Any] | None, dynamic: bool | None) -> dict[str, Any]:
    """The Inductor config a `mode`/`options` pair means, validated as torch.compile does."""
    try:
        wrapper = torch._TorchCompileInductorWrapper(mode, options, dynamic)  # validates options
        return dict(wrapper.config)
    except AttributeError:  # the private wrapper moved: fall back to the public helper
        from torch._inductor import list_mode_options

        config = dict(list_mode_options(mode, dynamic)) if mode and mode != "default" else {}
        config.update(options or {})
        return config
