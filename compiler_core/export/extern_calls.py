"""An extern call (`extern_kernels.mm`, `torch.ops.aten._scaled_dot_product_flash_attention_for_cpu`)
as a small script: the ATen op called with the arguments the output code recorded, then timed.

An extern call is a library kernel (a BLAS GEMM, a convolution, an attention kernel) that
Inductor calls rather than generates, so there is no source to export and nothing to compare
against: the file is the op itself, with inputs of the recorded shapes, strides and dtypes, for
timing it or handing it to whoever owns that library. `extern_kernels` is imported from where
Inductor's own output code imports it, so `extern_kernels.addmm(..., out=buf)` means the same.
"""

from __future__ import annotations

from compiler_core.export.call_plan import CallPlan, Launch
from compiler_core.export.harness_inputs import (
    HELPERS,
    buffers_source,
    not_runnable,
    safe_callee,
    why_not_runnable,
)
from compiler_core.export.machine_stamp import MachineStamp, preamble
from compiler_core.session import Kernel


def launch_device(plan: CallPlan | None, launch: Launch | None, default: str) -> str:
    """cpu | cuda | xpu: where the launch's tensors live (a CPU op of a GPU graph stays on CPU)."""
    if plan is None or launch is None:
        return default
    for a in launch.args:
        spec = a.view if a.view is not None else plan.specs.get(a.root)
        if a.root and spec is not None and spec.device:
            return spec.device.split(":")[0]
    return default


def extern_script(
    header: str, stamp: MachineStamp, k: Kernel, plan: CallPlan | None, launch: Launch | None, device: str
) -> str:
    text = header + preamble(stamp, device, compiled_cpp=False)
    why = why_not_runnable(plan, launch)
    if launch is not None and not safe_callee(launch.callee):
        why = why or "the recorded callee is no dotted name"
    if why or plan is None or launch is None:
        return text + not_runnable(why)
    sync = "torch.cuda.synchronize" if device == "cuda" else "lambda: None"
    return text + _EXTERN.format(
        name=repr(k.name),
        callee=launch.callee,
        helpers=HELPERS,
        buffers=buffers_source(plan, launch, device),
        sync=sync,
    )


_EXTERN = """
import time

from torch._inductor.select_algorithm import extern_kernels  # noqa: F401  (as the output code does)

aten = torch.ops.aten
KERNEL = {name}


{helpers}

{buffers}

def call(b):
    return {callee}(*launch_args(b), **launch_keywords(b))


def main():
    b = make_buffers()
    call(b)
    us, n = time_us(lambda: call(b), {sync})
    print(f"{{KERNEL}}: {{us:.2f}} us per call (median of 5 loops of {{n}}); an ATen op, its own reference")


if __name__ == "__main__":
    main()
"""
