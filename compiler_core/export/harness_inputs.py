"""The parts every exported harness shares: the buffers of one launch rebuilt from their recorded
shapes, the launch's argument list over them, a timed loop, and text from data made safe to
embed in a Python file.

A launch's arguments are views of a few storages (`buf1` twice, once through
`reinterpret_tensor`): the harness allocates each storage once, large enough for every view the
launch takes of it, and passes the same views the output code passed, so aliasing and strides
are the ones the kernel was compiled for. Floating-point storages hold `randn` values; integer
and boolean ones hold zeros, which are in range for every index a kernel could load from them.
"""

from __future__ import annotations

import re

from compiler_core.export.call_plan import Arg, CallPlan, Launch, TensorSpec

NOT_RUNNABLE_EXIT = 4  # the export could not rebuild this launch's inputs: the file says which
_CALLEE = re.compile(r"^[A-Za-z_][\w.]*$")
_DTYPE = re.compile(r"^[a-z][a-z0-9_]*$")
_FLOAT = ("float", "half", "bfloat16", "float16", "float32", "float64", "double")


def literal(text: str) -> str:
    """`text` as a Python string literal: a raw triple-quoted one where that is exact (readable
    kernel source), else `repr` (data that holds `'''` cannot end the literal early)."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text and "\x00" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def one_line(text: object) -> str:
    """A comment row from data: a name holding a newline must not start a line of code."""
    return " ".join(str(text).split())


def safe_callee(callee: str) -> bool:
    return bool(_CALLEE.match(callee))


def arg_spec(plan: CallPlan, a: Arg) -> TensorSpec | None:
    return a.view if a.view is not None else plan.specs.get(a.root)


def missing_inputs(plan: CallPlan, launch: Launch) -> list[str]:
    """The launch's tensor arguments whose shape or dtype the session does not record."""
    return [
        a.text
        for a in launch.args
        if a.root and ((s := arg_spec(plan, a)) is None or not _DTYPE.match(s.dtype))
    ]


def buffers_source(plan: CallPlan, launch: Launch, device: str) -> str:
    """`def make_buffers()` and `def launch_args(b)` for one launch (see the module doc)."""
    sizes: dict[str, tuple[int, str]] = {}
    for a in launch.args:
        spec = arg_spec(plan, a)
        if a.root and spec is not None:
            old = sizes.get(a.root, (0, spec.dtype))
            sizes[a.root] = (max(old[0], spec.storage_size(), _root_size(plan, a.root)), old[1] or spec.dtype)
    rows = [
        "def make_buffers():",
        '    """One storage per buffer of the launch, as large as its largest view."""',
        "    torch.manual_seed(0)",
        "    return {",
    ]
    rows += [
        f"        {root!r}: _storage({size}, torch.{dtype}, {device!r}),"
        for root, (size, dtype) in sizes.items()
    ]
    rows += [
        "    }",
        "",
        "",
        "def launch_args(b):",
        '    """The arguments exactly as the output code passed them: the same views, sizes, literals."""',
        "    return [",
    ]
    keywords: list[str] = []
    for a in launch.args:
        text = _arg_source(plan, a)
        if a.keyword:
            keywords.append(f"        {a.keyword!r}: {text},")
        else:
            rows.append(f"        {text},  # {one_line(a.text)[:80]}")
    rows.append("    ]")
    rows += ["", "", "def launch_keywords(b):", "    return {", *keywords, "    }"]
    return "\n".join(rows) + "\n"


def _root_size(plan: CallPlan, root: str) -> int:
    spec = plan.specs.get(root)
    return spec.storage_size() if spec is not None else 0


def _arg_source(plan: CallPlan, a: Arg) -> str:
    if a.root:
        spec = arg_spec(plan, a)
        assert spec is not None
        return f"_view(b[{a.root!r}], {spec.shape!r}, {spec.stride!r}, {spec.offset})"
    if a.value is not None:
        return repr(a.value)
    return a.text  # a literal of the output code (True, None, a list of ints, a string)


HELPERS = '''\
def _storage(size, dtype, device):
    if dtype.is_floating_point:
        return torch.randn(max(size, 1), device=device).to(dtype)
    return torch.zeros(max(size, 1), dtype=dtype, device=device)


def _view(storage, size, stride, offset):
    return torch.as_strided(storage, size, stride, offset)


def time_us(fn, sync=lambda: None):
    """Median of 5 timed loops, each long enough (>= 20 ms) for the clock to resolve it."""
    for _ in range(3):
        fn()
    sync()
    n = 1
    while n < (1 << 20):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        if time.perf_counter() - start >= 0.02:
            break
        n *= 2
    loops = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        loops.append((time.perf_counter() - start) / n)
    return sorted(loops)[2] * 1e6, n
'''


def why_not_runnable(plan: CallPlan | None, launch: Launch | None) -> str:
    """Why the launch cannot be rebuilt from what the session records ("" when it can)."""
    if plan is None:
        return "the output code's call() could not be read"
    if launch is None:
        return "the output code never launches this kernel"
    missing = missing_inputs(plan, launch)
    if missing:
        return f"no recorded shape or dtype for {', '.join(missing[:3])}"
    return ""


def not_runnable(why: str) -> str:
    """The body of a file whose launch cannot be rebuilt: it says so and exits non-zero."""
    return f"print({('not runnable: ' + one_line(why))!r})\nsys.exit({NOT_RUNNABLE_EXIT})\n"
