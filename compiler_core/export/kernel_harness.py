"""A generated kernel as a file that runs alone: C++ (CPU Inductor) or Triton.

The kernel is built the way Inductor's own output code builds it
(`async_compile.cpp_pybinding(arg_types, source)`, `async_compile.triton(name, source)`), so the
same compiler flags, headers and caches apply; its launch is rebuilt from the output code's
`call()` (call_plan.py, harness_inputs.py). A C++ harness then checks the kernel against the
eager ATen ops it replaced where they can be paired with its pointers (eager_reference.py;
tolerance 1e-4 relative and absolute for 32- and 64-bit floats, 2e-2 for 16-bit ones, NaN equal
to NaN) and prints its time from a timed loop; a Triton harness times it with
`triton.testing.do_bench_cudagraph` (launches replayed back to back, caches warm, as the kernel runs
inside the model, where the profiler times it) and, second, with `triton.testing.do_bench` (the L2
cache flushed before each launch: a cold-cache figure). A mismatch prints the largest difference and exits 1.
"""

from __future__ import annotations

import ast
import keyword
import re

from compiler_core.export.call_plan import CallPlan, Launch, kernel_params
from compiler_core.export.eager_reference import EagerMatch
from compiler_core.export.harness_inputs import (
    HELPERS,
    buffers_source,
    literal,
    not_runnable,
    one_line,
    why_not_runnable,
)
from compiler_core.export.machine_stamp import MachineStamp, preamble
from compiler_core.session import Kernel

# names the harness itself binds: a node named like one would shadow it inside eager_reference
_RESERVED = {
    "torch",
    "inf",
    "nan",
    "device",
    "time",
    "sys",
    "os",
    "launch_args",
    "launch_keywords",
    "make_buffers",
    "kernel",
    "main",
    "tolerance",
    "time_us",
}


def cpp_arg_types(output_code: str, name: str) -> list[str] | None:
    """The pybinding's argument types (`['float*', 'const int64_t']`) from the definition line."""
    m = re.search(rf"^{re.escape(name)} = async_compile\.cpp_pybinding\((\[[^\]]*\])", output_code, re.M)
    if not m:
        return None
    try:
        types = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None
    return types if isinstance(types, list) and all(isinstance(t, str) for t in types) else None


def cpp_harness(
    header: str,
    stamp: MachineStamp,
    k: Kernel,
    plan: CallPlan | None,
    launch: Launch | None,
    eager: EagerMatch,
    arg_types: list[str] | None,
) -> str:
    """The file for one C++ kernel (see the module doc)."""
    text = header + preamble(stamp, "cpu", compiled_cpp=True)
    why = why_not_runnable(plan, launch)
    if arg_types is None:
        why = why or "the output code does not hold this kernel's cpp_pybinding definition"
    if why or plan is None or launch is None or arg_types is None:
        return text + not_runnable(why)
    checked = _eager_source(k, plan, launch, eager)
    return text + _CPP.format(
        name=repr(k.name),
        source=literal(k.source),
        arg_types=repr(arg_types),
        helpers=HELPERS,
        buffers=buffers_source(plan, launch, "cpu"),
        eager=checked,
        eager_note=repr("not checked: " + one_line(eager.why_not) if eager.why_not else "checked"),
    )


def triton_harness(
    header: str, stamp: MachineStamp, k: Kernel, plan: CallPlan | None, launch: Launch | None, device: str
) -> str:
    text = header + preamble(stamp, device, compiled_cpp=False)
    why = why_not_runnable(plan, launch)
    if why or plan is None or launch is None:
        return text + not_runnable(why)
    return text + _TRITON.format(
        name=repr(k.name),
        source=literal(k.source),
        device=repr(device),
        helpers=HELPERS,
        buffers=buffers_source(plan, launch, device),
    )


def _eager_source(k: Kernel, plan: CallPlan, launch: Launch, eager: EagerMatch) -> str:
    """`def eager_reference(__b)`: index of a launch argument -> the value the eager ops give it."""
    names = [*eager.inputs, *(line.split(" = ", 1)[0] for line in eager.lines), *eager.constants]
    if eager.why_not or not all(
        n.isidentifier() and not keyword.iskeyword(n) and n not in _RESERVED and not n.startswith("__")
        for n in names
    ):
        return "def eager_reference(__b):\n    return {}\n"
    index = {p: i for i, p in enumerate(kernel_params(k.source))}
    rows = [
        "def eager_reference(__b):",
        '    """The post-grad ops this kernel fused, on the launch\'s inputs (cloned: the kernel',
        '    writes some of them in place); returns {argument index: expected value}."""',
        "    __args = launch_args(__b)",
    ]
    rows += [f"    {name} = {value}" for name, value in eager.constants.items()]
    for node, param in eager.inputs.items():
        shape = f".reshape({eager.reshape[node]!r})" if node in eager.reshape else ""
        rows.append(f"    {node} = __args[{index[param]}].clone(){shape}  # {param}")
    rows += [f"    {line}" for line in eager.lines]
    outs = ", ".join(f"{index[p]}: {node}.clone()" for p, node in eager.outputs.items())
    rows.append(f"    return {{{outs}}}")
    return "\n".join(rows) + "\n"


_CPP = """
import time
from math import inf, nan  # noqa: F401  (the eager ops may name them)

from torch import device  # noqa: F401
from torch._inductor.async_compile import AsyncCompile

KERNEL = {name}
EAGER_CHECK = {eager_note}
SOURCE = {source}

async_compile = AsyncCompile()
kernel = async_compile.cpp_pybinding({arg_types}, SOURCE)
async_compile.wait(globals())
del async_compile


{helpers}

{buffers}

{eager}

def tolerance(dtype):
    return 2e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4


def main():
    b = make_buffers()
    expected = eager_reference(b)
    args = launch_args(b)
    kernel(*args)
    for i, want in expected.items():
        got = args[i]
        tol = tolerance(got.dtype)
        try:
            torch.testing.assert_close(got, want.to(got.dtype), rtol=tol, atol=tol, equal_nan=True)
        except AssertionError as exc:
            print(KERNEL + ": differs from the eager ops it replaced (argument " + str(i) + "):")
            print(str(exc))
            sys.exit(1)
    us, n = time_us(lambda: kernel(*args))
    check = "matches eager ATen (rtol=atol=1e-4; 2e-2 for 16-bit floats)" if expected else EAGER_CHECK
    print(f"{{KERNEL}}: {{us:.2f}} us per launch (median of 5 loops of {{n}}); eager check: {{check}}")


if __name__ == "__main__":
    main()
"""

_TRITON = """
import time

from torch._C import _cuda_getCurrentRawStream as get_raw_stream
from torch._inductor.async_compile import AsyncCompile
import triton

KERNEL = {name}
SOURCE = {source}

async_compile = AsyncCompile()
kernel = async_compile.triton(KERNEL, SOURCE, device_str={device})
async_compile.wait(globals())
del async_compile


{helpers}

{buffers}

def main():
    b = make_buffers()
    args = launch_args(b)

    def launch():  # on the current stream: a CUDA-graph capture launches on its own
        kernel.run(*args, stream=get_raw_stream(torch.cuda.current_device()), **launch_keywords(b))

    launch()
    torch.cuda.synchronize()
    try:  # launches replayed back to back with warm caches, as inside the compiled model
        ms, how = triton.testing.do_bench_cudagraph(launch), "triton.testing.do_bench_cudagraph"
    except Exception as exc:  # a kernel a CUDA graph cannot capture
        print(f"no CUDA-graph timing ({{type(exc).__name__}}: {{exc}})")
        ms, how = triton.testing.do_bench(launch), "triton.testing.do_bench"
    print(f"{{KERNEL}}: {{ms * 1000:.2f}} us per launch ({{how}})")
    cold = triton.testing.do_bench(launch)
    print(f"{{KERNEL}}: {{cold * 1000:.2f}} us per launch with the L2 cache flushed before each "
          f"(triton.testing.do_bench)")


if __name__ == "__main__":
    main()
"""
