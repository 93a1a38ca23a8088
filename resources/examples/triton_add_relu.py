"""The seed's fused add+ReLU as a user-defined Triton kernel, registered with `triton_op`.

GPU only (`requires = "cuda"`): on a CPU-only machine CompileScope says so instead of running it.
What to look for: the custom op is captured by Dynamo without a graph break, and Inductor calls
the user's Triton kernel (autotuned over three BLOCK sizes) from its output code.
"""

import torch

requires = "cuda"

if torch.cuda.is_available():
    import triton
    import triton.language as tl
    from torch.library import triton_op, wrap_triton

    @triton.autotune(
        configs=[
            triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
            triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=3),
            triton.Config({"BLOCK": 4096}, num_warps=8, num_stages=4),
        ],
        key=["N"],
    )
    @triton.jit
    def add_relu_kernel(x_ptr, b_ptr, y_ptr, N, BLOCK: tl.constexpr):  # noqa: N803
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < N
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
        tl.store(y_ptr + offsets, tl.maximum(x + b, 0.0), mask=mask)

    @triton_op("compilescope::add_relu", mutates_args={})
    def add_relu(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        wrap_triton(add_relu_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, b, y, n)
        return y

    class AddReluNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(1024, 1024)

        def forward(self, x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return add_relu(self.lin(x), b) * 2.0

    model = AddReluNet().cuda()
    example_inputs = (torch.randn(256, 1024, device="cuda"), torch.randn(256, 1024, device="cuda"))
else:
    model = None
    example_inputs = ()
