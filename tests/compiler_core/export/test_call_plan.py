"""Reading a launch's arguments back from the output code's `call()` (torch-free)."""

from __future__ import annotations

from pathlib import Path

from compiler_core.export.call_plan import TensorSpec, kernel_params, plan_calls
from compiler_core.session import load
from tests.conftest import ROOT

SESSIONS = sorted((ROOT / "resources" / "sessions").glob("*.json"))


def test_every_launch_of_the_bundled_sessions_is_resolved() -> None:
    for path in SESSIONS:
        for c in load(path).compiles:
            for part in c.inductor:
                generated = {k.name: kernel_params(k.source) for k in part.kernels if k.language != "extern"}
                plan = plan_calls(part.output_code, generated)
                assert plan is not None, path
                for k in part.kernels:
                    launches = plan.launches_of(k.name)
                    assert launches, (path.name, k.name)  # every kernel, extern calls included
                    assert all(x.resolved for x in launches), (path.name, k.name)


def test_buffers_aliases_views_and_fresh_outputs() -> None:
    """mlp: `buf1 = buf0; del buf0  # reuse` passes addmm's output in place; `buf3` (the mean)
    was never written before the kernel: it is an output, not an input."""
    part = load(ROOT / "resources" / "sessions" / "mlp_graph_break.json").compiles[0].inductor[0]
    plan = plan_calls(part.output_code, {"cpp_fused_mean_relu_0": []})
    assert plan is not None
    (launch,) = plan.launches_of("cpp_fused_mean_relu_0")
    assert [a.root for a in launch.args] == ["buf0", "buf2"]
    assert plan.specs["buf0"] == TensorSpec((32, 128), (128, 1), "float32")
    assert launch.fresh == {"buf2"}
    (addmm,) = plan.launches_of("extern_kernels.addmm:1")
    weight = addmm.args[2]  # reinterpret_tensor(arg0_1, (64, 128), (1, 64), 0): the transposed weight
    assert weight.root == "arg0_1" and weight.view == TensorSpec((64, 128), (1, 64), "float32")
    assert [(a.keyword, a.value) for a in addmm.args if a.keyword in ("alpha", "beta")] == [
        ("alpha", 1),
        ("beta", 1),
    ]


def test_size_symbols_take_the_values_get_args_used() -> None:
    part = load(ROOT / "resources" / "sessions" / "dynamic_shapes.json").compiles[1].inductor[0]
    plan = plan_calls(part.output_code, {"cpp_fused_gelu_0": []})
    assert plan is not None and plan.symbols == {"s33": 16}
    (launch,) = plan.launches_of("cpp_fused_gelu_0")
    assert plan.specs[launch.args[0].root].shape == (16, 64)
    assert launch.args[1].value == 16 and launch.args[1].text == "s33"


def test_code_that_is_not_an_output_code_gives_no_plan(tmp_path: Path) -> None:
    assert plan_calls("def call(args):\n    (", {}) is None
    assert plan_calls("x = 1\n", {}) is None
    plan = plan_calls(
        "def call(args):\n    a, = args\n    k(a, unknown_thing)\n", {"k": ["in_ptr0", "out_ptr0"]}
    )
    assert plan is not None
    (launch,) = plan.launches
    assert not launch.resolved  # `a` has no recorded shape: the harness will say so, not guess
