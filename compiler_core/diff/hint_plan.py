"""A mechanical hint as a change to how the worker runs the same model file, never to the file.

The hints a user can apply without editing code, and how each reaches the compile:

- `capture_scalar_outputs=True` (the fix a `.item()` break names): torch reads
  `TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` from the environment when `torch._dynamo.config` loads.
- `mark_dynamic(x, dim)` (the fix a recompile on a size names): `TORCH_COMPILE_DYNAMIC_SOURCES`
  (`torch.compiler.config.dynamic_sources`), whose entries are Dynamo source names with an
  optional `:dim`, as in `L['x']:0`; the same as calling mark_dynamic before each call.
- `dynamic=True` and a compile mode: the capture's own `dynamic` and `mode` options.
- another `torch._dynamo.config` flag: `TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS=">=0:name=value"`,
  torch's per-graph config override applied to every graph (torch 2.13 and later have it).

So a re-run is an environment and two capture options: nothing patches torch, and the worker
needs no new protocol. Hints that need a code change (a data-dependent branch, a print) have no
plan (`plan_for` returns None); the GUI shows the line and the suggested edit instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compiler_core.session.model import GraphBreak

ENV_SCALARS = "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS"
ENV_DYNAMIC_SOURCES = "TORCH_COMPILE_DYNAMIC_SOURCES"
ENV_DYNAMO_CONFIGS = "TORCH_COMPILE_OVERRIDE_DYNAMO_CONFIGS"
KINDS = ("capture_scalar_outputs", "mark_dynamic", "dynamic", "mode", "dynamo_config")
_INPUT_DIM = re.compile(r"^input (.+) dim (\d+)$")
_FLAG = re.compile(r"^\w+$")
_VALUE = re.compile(r"^(True|False|-?\d+(\.\d+)?|'[^',;]*')$")


@dataclass(frozen=True)
class Hint:
    """One mechanical change: `kind` is one of KINDS; `source`/`dim` name the input for
    mark_dynamic (`x` or a Dynamo source such as `L['x']`), `value` the mode or `flag=value`."""

    kind: str
    source: str = ""
    dim: int | None = None
    value: str = ""

    def as_arg(self) -> str:
        """The hint as `diff MODEL.py --apply` takes it (`parse_hint`'s forms)."""
        if self.kind == "mark_dynamic":
            return f"mark_dynamic:{self.source}:{self.dim}"
        if self.kind == "mode":
            return f"mode:{self.value}"
        if self.kind == "dynamo_config":
            return f"config:{self.value}"
        return self.kind

    def in_words(self) -> str:
        if self.kind == "capture_scalar_outputs":
            return "torch._dynamo.config.capture_scalar_outputs = True"
        if self.kind == "mark_dynamic":
            return f"torch._dynamo.mark_dynamic({self.source}, {self.dim})"
        if self.kind == "dynamic":
            return "torch.compile(..., dynamic=True)"
        if self.kind == "mode":
            return f'torch.compile(..., mode="{self.value}")'
        return f"torch._dynamo.config.{self.value}"


@dataclass(frozen=True)
class RerunPlan:
    """How the worker runs the file with the hint: its environment additions and the capture's
    `mode`/`dynamic` (None: as the first run had them)."""

    hint: Hint
    env: dict[str, str] = field(default_factory=dict)
    mode: str | None = None
    dynamic: bool | None = None


def dynamo_source(name: str) -> str:
    """`x` → `L['x']` (a local of the compiled frame, as Dynamo names it); a name already in
    Dynamo's form is kept."""
    return name if name.startswith(("L[", "G[")) else f"L['{name}']"


def plan_for(hint: Hint) -> RerunPlan | None:
    """The plan of a mechanical hint; None for a hint this module cannot apply safely (an
    unknown kind, a flag value that is not a plain literal, a mark_dynamic without a dim)."""
    if hint.kind == "capture_scalar_outputs":
        return RerunPlan(hint, env={ENV_SCALARS: "1"})
    if hint.kind == "mark_dynamic" and hint.source and hint.dim is not None and hint.dim >= 0:
        return RerunPlan(hint, env={ENV_DYNAMIC_SOURCES: f"{dynamo_source(hint.source)}:{hint.dim}"})
    if hint.kind == "dynamic":
        return RerunPlan(hint, dynamic=True)
    if hint.kind == "mode" and hint.value:
        return RerunPlan(hint, mode=hint.value)
    if hint.kind == "dynamo_config":
        name, _, value = hint.value.partition("=")
        if _FLAG.match(name.strip()) and _VALUE.match(value.strip()):
            return RerunPlan(hint, env={ENV_DYNAMO_CONFIGS: f">=0:{name.strip()}={value.strip()}"})
    return None


def hint_for_break(brk: GraphBreak) -> Hint | None:
    """The mechanical hint of a graph break, where it has one: Dynamo's own text names
    `capture_scalar_outputs` for `.item()` and `capture_dynamic_output_shape_ops` for ops whose
    output shape depends on data (nonzero, unique)."""
    text = " ".join((brk.reason, brk.explanation, *brk.hints))
    if "capture_scalar_outputs" in text:
        return Hint("capture_scalar_outputs")
    if "capture_dynamic_output_shape_ops" in text:
        return Hint("dynamo_config", value="capture_dynamic_output_shape_ops=True")
    return None


def hint_for_recompile(guard: str) -> Hint | None:
    """A recompile cause's guard in words (`RecompileCause.guard`, or `RecompileFact.guard` with
    its changes): `input x dim 0 changed 2 → 3` → mark_dynamic(x, 0). Other causes need a code
    change or a choice only the user can make (a dtype, an object's identity)."""
    guard = guard.split(" changed ", 1)[0]
    m = _INPUT_DIM.match(guard)
    if m is None:
        return None
    return Hint("mark_dynamic", source=m.group(1), dim=int(m.group(2)))


def parse_hint(text: str) -> Hint:
    """A hint as typed on a command line: `capture_scalar_outputs`, `mark_dynamic:x:0`,
    `dynamic`, `mode:max-autotune` or `config:name=value`. ValueError says the accepted forms."""
    kind, _, rest = text.strip().partition(":")
    if kind in ("capture_scalar_outputs", "dynamic") and not rest:
        return Hint(kind)
    if kind == "mark_dynamic":
        source, _, dim = rest.rpartition(":")
        if source and dim.isdigit():
            return Hint(kind, source=source, dim=int(dim))
    if kind == "mode" and rest:
        return Hint(kind, value=rest)
    if kind == "config" and "=" in rest:
        return Hint("dynamo_config", value=rest)
    raise ValueError(f"not a hint: {text!r}; one of capture_scalar_outputs, mark_dynamic:INPUT:DIM, dynamic, "
                     "mode:MODE, config:FLAG=VALUE")
