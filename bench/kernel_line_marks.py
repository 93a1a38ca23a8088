"""Share of kernel-line marks that agree with Inductor's own record of each kernel, per real log.

Each log of bench/data is imported as the app imports it; every mark on a generated kernel's
line is checked by the test oracle (`tests/compiler_core/analysis/kernel_line_oracle.py`) against
the kernel's `# Graph fragment:` comment (the nodes Inductor lowered into it, what it reads and
what it returns) and against what the line spells (a `tl.sum` goes to a reduction node, ` * ` to
a `mul`, a store to a returned value). Prints, per log, the share of checked marks that pass and
the share of computing lines (loads, ops, reductions, stores) that carry a mark, then the first
failures.

`--unmarked N` prints the N commonest shapes of the computing lines left unmarked (tmps, numbers
and index variables folded: `T * T`, `tl.load`, `tl.where(T, T, T)`), with one example each.

    python bench/kernel_line_marks.py [--json] [--failures N] [--unmarked N] [name ...]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_figures import decompressed, figure, report

from compiler_core.analysis import import_trace
from tests.compiler_core.analysis.kernel_line_oracle import LineCheck, check_kernels

LOGS = ("hf_llama_train", "hf_bert_train", "hf_gpt2_train", "tv_resnet_breaks")


def check_log(log: Path) -> LineCheck:
    """Every Inductor output of every compile of one log."""
    total = LineCheck()
    for c in import_trace(log).compiles:
        for out in c.inductor:
            total.add(check_kernels(out.output_code, out.kernels, out.post_grad))
    return total


def line_shape(text: str) -> str:
    """`tmp45 = tmp39 * tmp44` -> `T * T`; a load/store -> `tl.load` (`indirect` when a tmp indexes)."""
    if "store(" in text or "load(" in text:
        call = "tl.store" if "store(" in text else "tl.load"
        return call + (" indirect" if re.search(r"ptr\d+ \+ \(.*tmp", text) else "")
    expr = text.split("=", 1)[-1].strip()
    expr = re.sub(r"\b_?tmp\d+\b", "T", expr)
    expr = re.sub(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\b", "N", expr)
    return re.sub(r"\b(?:x|y|r0_)\w*\b", "I", expr)[:60]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=list(LOGS))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--failures", type=int, default=5, help="failures to print per log")
    ap.add_argument("--unmarked", type=int, default=0, help="shapes of unmarked lines to print per log")
    args = ap.parse_args()
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            t0 = time.perf_counter()
            r = check_log(decompressed(name, Path(tmp)))
            took = time.perf_counter() - t0
            print(f"{name}: {r.passed}/{r.checked} marks pass ({r.share:.1%}), {r.unchecked} unchecked, "
                  f"{r.marked}/{r.lines} computing lines marked, {took:.1f} s")  # fmt: skip
            for k, ln, text, node, rule in r.failures[: args.failures]:
                print(f"  {k}:{ln} {text[:70]!r} -> {node}: {rule}")
            shapes = Counter(line_shape(t) for _, _, t in r.unmarked)
            examples = {line_shape(t): f"{k}:{ln} {t[:60]!r}" for k, ln, t in reversed(r.unmarked)}
            for shape, n in shapes.most_common(args.unmarked):
                print(f"  unmarked {n:4d} x {shape!r}  e.g. {examples[shape]}")
            # Upper bound: at most 5 % of checked marks fail (what is left: marks made at another call of
            # a deduplicated kernel than the one its Graph fragment describes, see docs/benchmarks.md).
            figures.append(
                figure(f"{name} kernel-line marks failing the check", 100 * (1 - r.share), "%", 5.0)
            )
            figures.append(figure(f"{name} computing lines unmarked", 100 * (1 - r.marked / max(r.lines, 1)),
                                  "%", None))  # fmt: skip
    report(figures, args.json)
    return 0 if all(f["ok"] is not False for f in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
