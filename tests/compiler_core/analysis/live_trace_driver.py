"""Run one example under TORCH_TRACE in a fresh process (tests call this as a script).

With `--enrich`, a tiny custom backend logs each Dynamo graph as a `compilescope_graph` artifact
(the capture worker's format) before handing it to Inductor, so tests can compare text-parsed and
enriched graphs from the same run.
"""

from __future__ import annotations

import json
import runpy
import sys


def main() -> None:
    import torch

    example, mode = sys.argv[1], sys.argv[2]
    ns = runpy.run_path(example)
    backend: object = "inductor"
    if "--enrich" in sys.argv:
        backend = _enriching_backend()
    compiled = torch.compile(ns["model"], backend=backend)
    if mode == "train":
        ns["train_step"](compiled, ns["example_inputs"])
    else:
        with torch.no_grad():
            compiled(*ns["example_inputs"])


def _enriching_backend() -> object:
    import torch
    from torch._inductor.compile_fx import compile_fx

    from compiler_core.session.model import Graph, Node
    from compiler_core.session.wire import plain

    def backend(gm: torch.fx.GraphModule, example_inputs: list[object]) -> object:
        nodes = tuple(
            Node(n.name, n.op, str(n.target), tuple(a.name for a in n.all_input_nodes),
                 attrs={"seq_nr": str(n.meta.get("seq_nr", ""))})
            for n in gm.graph.nodes
        )  # fmt: skip
        payload = {"stage": "dynamo", "graph": plain(Graph("dynamo", nodes))}
        torch._logging.trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": "compilescope_graph", "encoding": "json"},
            payload_fn=lambda: json.dumps(payload),
        )
        return compile_fx(gm, example_inputs)

    return backend


if __name__ == "__main__":
    main()
