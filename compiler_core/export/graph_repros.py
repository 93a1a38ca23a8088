"""A runnable repro of one Dynamo graph: the compile, reproduced without the user's model.

Where the log holds torch's own `fx_graph_runnable` artifact (the graph Inductor compiled, with
`load_args` for random inputs of the recorded metadata and `run_repro`), that is the repro, as
torch wrote it and tlparse links it; only its first line that points Inductor's cache at a
folder of the recording machine is left out (the repro would otherwise write there). Otherwise
one is generated from the session's Dynamo graph: its printed `GraphModule` (valid Python), random
inputs of each placeholder's recorded shape, stride and dtype (size symbols take the values the
output code's `get_args()` used, else 8), run eagerly and through `torch.compile`, and compared
(rtol = atol = 1e-3: a compiled graph reorders float reductions).
"""

from __future__ import annotations

import re

from compiler_core.export.call_plan import TensorSpec
from compiler_core.export.eager_reference import node_spec
from compiler_core.export.harness_inputs import not_runnable
from compiler_core.export.machine_stamp import MachineStamp, preamble
from compiler_core.session import Compile

_CACHE_LINE = re.compile(r"^os\.environ\['TORCHINDUCTOR_CACHE_DIR'\] = .*$", re.M)
_CLASS = re.compile(r"^class [^(\n]*\(", re.M)
_DTYPE = re.compile(r"^[a-z][a-z0-9_]*$")
DEFAULT_SIZE = 8


def runnable_artifact(c: Compile) -> str:
    """The log's `fx_graph_runnable` for this compile, "" when it has none."""
    return c.artifacts.get("fx_graph_runnable", "")


def graph_repro(header: str, stamp: MachineStamp, c: Compile, symbols: dict[str, int], train: bool) -> str:
    """The repro file for compile `c` (see the module doc); `symbols` are the size symbols' values."""
    text = header + preamble(stamp, stamp.device or "cpu", compiled_cpp=False)
    artifact = runnable_artifact(c)
    if artifact:
        return (
            text
            + "\n"
            + _CACHE_LINE.sub(
                "# (the recording machine's Inductor cache folder was set here; left out)", artifact
            )
        )
    g = c.dynamo_graph
    if g is None or not g.text:
        return text + not_runnable(
            "the session holds neither fx_graph_runnable nor this compile's Dynamo graph"
        )
    rows: list[str] = []
    for n in g.nodes:
        if n.op != "placeholder":
            continue
        if not n.outputs:
            rows.append(f"        {symbols.get(n.name, DEFAULT_SIZE)},  # size symbol {n.name}")
            continue
        spec = node_spec(n, {**_defaults(n.outputs[0].shape), **symbols})
        if spec is None or not _DTYPE.match(spec.dtype):
            return text + not_runnable(f"placeholder {n.name} has no single recorded tensor shape")
        grad = train and spec.dtype.startswith(("float", "bfloat")) and "_parameters_" in n.name
        rows.append(f"        {_tensor(spec, n.outputs[0].device or 'cpu', grad)},  # {n.name}")
    module = _CLASS.sub("class GraphModule(", g.text, count=1)
    return text + _GENERATED.format(graph=module, inputs="\n".join(rows), cid=repr(c.compile_id))


def _defaults(shape: tuple[int | str, ...]) -> dict[str, int]:
    return {str(d): DEFAULT_SIZE for d in shape if isinstance(d, str)}


def _tensor(spec: TensorSpec, device: str, grad: bool) -> str:
    dev = device.split(":")[0] if re.match(r"^[a-z]+(:\d+)?$", device) else "cpu"
    return f"_tensor({spec.shape!r}, {spec.stride!r}, torch.{spec.dtype}, {dev!r}, {grad})"


_GENERATED = """
from math import inf, nan  # noqa: F401  (the graph may name them)

from torch import device  # noqa: F401

# The Dynamo graph as the session printed it
{graph}


def _tensor(size, stride, dtype, device, requires_grad):
    need = 1 + sum((s - 1) * abs(st) for s, st in zip(size, stride) if s > 0)
    if dtype.is_floating_point:
        storage = torch.randn(need, device=device).to(dtype)
    else:
        storage = torch.zeros(need, dtype=dtype, device=device)
    return torch.as_strided(storage, size, stride).detach().requires_grad_(requires_grad)


def make_inputs():
    torch.manual_seed(0)
    return [
{inputs}
    ]


def main():
    mod = GraphModule()
    inputs = make_inputs()
    expected = mod(*inputs)
    got = torch.compile(mod)(*inputs)
    torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-3, equal_nan=True)
    print("graph [" + {cid} + "] compiled here and matches eager (rtol=atol=1e-3)")


if __name__ == "__main__":
    main()
"""
