"""64 ranks of a 32-layer model's logs: open them, compare them, write their one trace.

    python bench/rank_compare.py [--ranks 64] [--json]

The ranks are copies of a real rank log, the 32-layer HF Llama training log recorded on an
H200 (bench/data/hf_llama_train.log.xz, 14 MB). Each copy is written as a rank of a torchrun
job writes its log: its process id in every glog prefix and `"rank": r` in every record header
of a compile (tests/data/ranks holds such logs), so what the importer shares between ranks must
be keyed on what the ranks logged alike, not on whole lines. Some copies are perturbed as real
jobs go wrong:

- rank 7 traces another graph (`silu` became `gelu` in its log);
- rank 33 compiled under another global state (`num_threads` in its guards);
- ranks 40-47 hit the FX-graph cache where the others missed (an artifact record added);
- ranks 60-63 stopped before their backward was compiled (the log cut there).

Step times come from a recorded two-rank run (tests/data/ranks/slow_rank: rank 1 sleeps 40 ms a
step), copied to every rank, rank 13 getting the slow rank's: so the straggler, too, must be
found among 64. The bench checks that the groups and the straggler are the ones planted, then
times each part in this process: `open` (the importer, `import_trace` of the folder), `compare`
(`ranks_summary`: rank_divergence, groups, stragglers), `trace` (the rank logs' compile phases
read and every rank's trace written), and, without a target, what the GUI's loader does after
the import before it shows the session (explorer/actions/loading.py `prepare`: the link index
over every rank's refs and the Source panes' line facts of the first eight ranks).

Targets: compare ≤ 1 s; open and compare ≤ 5 s of CPU ("a few seconds"). The
open is the importer's (compiler_core/analysis), 64 x 14 MB of log.
"""

from __future__ import annotations

import argparse
import dataclasses
import lzma
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_figures import decompressed, figure, report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.ranks.rank_facts import ranks_summary  # noqa: E402
from compiler_core.ranks.rank_trace import compile_phases, multi_rank_trace  # noqa: E402
from compiler_core.session.codec import loads  # noqa: E402
from compiler_core.session.model import Session, StepSample  # noqa: E402

LOG = "hf_llama_train"
STEPS = ROOT / "tests" / "data" / "ranks" / "slow_rank" / "session.json.xz"
GRAPH_RANK, GUARD_RANK, SLOW_RANK = 7, 33, 13
CACHE_RANKS, CUT_RANKS = range(40, 48), range(60, 64)
CACHE_HIT = ('V1123 16:55:00.000000 452 torch/_inductor/codecache.py:1] {"artifact": {"name": '
             '"fx_graph_cache_hit", "encoding": "json"}, "frame_id": 0, "frame_compile_id": 0, '
             '"attempt": 0, "has_payload": "0"}\n\t{}\n')  # fmt: skip


RANK, PID = "\0rank", "\0pid"  # placeholders in the template every rank's log is written from


def rank_template(text: str) -> str:
    """`text` with each glog prefix's process id and, in each header of a record logged within a
    compile (one with `frame_id`), the rank as placeholders, where torch writes them:
    `V1127 16:26:07.156000 25838 file.py:2350] {"chromium_event": {}, "rank": 1, "frame_id": 0,`."""
    out = []
    for line in text.split("\n"):
        if line[:1] in ("V", "I", "W", "E", "C") and "] {" in line:
            level, clock, _pid, rest = line.split(" ", 3)
            rest = rest.replace(', "frame_id": ', f', "rank": {RANK}, "frame_id": ', 1)
            line = f"{level} {clock} {PID} {rest}"
        out.append(line)
    return "\n".join(out)


def make_ranks(base: Path, folder: Path, ranks: int) -> None:
    """`ranks` rank logs in `folder`, each with its own rank and process id, the perturbed ones
    perturbed."""
    text = rank_template(base.read_text())
    cut = text.index('{"aot_backward_graph"')
    cut = text.rindex("\n", 0, cut) + 1
    for r in range(ranks):
        if r == GRAPH_RANK:
            log = text.replace("torch.nn.functional.silu(", "torch.nn.functional.gelu(")
        elif r == GUARD_RANK:
            log = text.replace('"num_threads":16', '"num_threads":8')
        elif r in CACHE_RANKS:
            log = text + rank_template(CACHE_HIT)
        elif r in CUT_RANKS:
            log = text[:cut]
        else:
            log = text
        log = log.replace(RANK, str(r)).replace(PID, str(1000 + r))
        (folder / f"dedicated_log_torch_trace_rank_{r}.log").write_text(log)


def with_steps(session: Session, ranks: int) -> Session:
    """Every rank's step times from the recorded two-rank run: rank 1's for SLOW_RANK, rank
    0's for the others, shifted by a few µs per rank so no two are equal."""
    recorded = loads(lzma.decompress(STEPS.read_bytes())).timeline
    timeline = []
    for r in range(ranks):
        source = "r1:" if r == SLOW_RANK else "r0:"
        for s in recorded:
            if s.mode.startswith(source):
                timeline.append(StepSample(f"r{r}:step", s.step, s.ms + r * 0.001, s.warmup,
                                           start_ms=s.start_ms))  # fmt: skip
    return dataclasses.replace(session, timeline=tuple(timeline))


def check(summary: dict[str, Any], ranks: int) -> list[str]:
    """Whether each planted fault (on the ranks there are) is found on exactly its ranks, and
    the straggler named; the problems found ([] when all are there)."""
    found = {(d["aspect"], tuple(d["ranks"])) for d in summary["rank_divergence"]}
    differing = {r for d in summary["rank_divergence"] for r in d["ranks"]}
    cache = tuple(r for r in CACHE_RANKS if r < ranks)
    expected = [(a, rs) for a, rs in (("graph", (GRAPH_RANK,)), ("cache", cache)) if rs and rs[0] < ranks]
    problems = [f"missing: {aspect} on ranks {ranks}" for aspect, ranks in expected
                if (aspect, ranks) not in found]  # fmt: skip
    problems += [f"rank {r} not among the differing ranks" for r in (GUARD_RANK, *CUT_RANKS)
                 if r < ranks and r not in differing]  # fmt: skip
    unplanted = differing - {GRAPH_RANK, GUARD_RANK, *CACHE_RANKS, *CUT_RANKS}
    if unplanted:
        problems.append(f"ranks {sorted(unplanted)} differ but were copied unchanged")
    stragglers = summary["stragglers"]
    if [s["rank"] for s in stragglers] != ([SLOW_RANK] if ranks > SLOW_RANK else []):
        problems.append(f"straggler: expected rank {SLOW_RANK}, got {stragglers}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rank-compare-") as tmp:
        base = decompressed(LOG, Path(tmp))
        folder = Path(tmp) / "ranks"
        folder.mkdir()
        make_ranks(base, folder, args.ranks)
        size_mb = (base.stat().st_size * args.ranks) / 1e6
        wall, cpu = time.perf_counter(), time.process_time()
        session = import_trace(folder)
        open_s, open_cpu = time.perf_counter() - wall, time.process_time() - cpu
        session = with_steps(session, args.ranks)
        wall, cpu = time.perf_counter(), time.process_time()
        summary = ranks_summary(session)
        compare_s, compare_cpu = time.perf_counter() - wall, time.process_time() - cpu
        wall = time.perf_counter()
        trace = multi_rank_trace(session, compile_phases(folder))
        trace_s = time.perf_counter() - wall
    from explorer.actions.loading import prepare  # the GUI's own step after the import

    cpu = time.process_time()
    prepare(session)
    loader_cpu = time.process_time() - cpu
    problems = check(summary, args.ranks)
    print(f"{args.ranks} ranks, {size_mb:.0f} MB of logs; {len(summary['rank_divergence'])} differences "
          f"({summary['rank_groups']}); {len(trace['traceEvents']):,} trace events")
    for p in problems:
        print(f"PROBLEM: {p}")
    figures = [
        figure(f"rank compare: open {args.ranks} ranks (wall)", open_s, "s", None),
        figure(f"rank compare: open {args.ranks} ranks (CPU)", open_cpu, "s", None),
        figure(f"rank compare: compare {args.ranks} ranks (wall)", compare_s, "s", 1.0),
        figure(f"rank compare: open and compare {args.ranks} ranks (CPU)", open_cpu + compare_cpu, "s", 5.0),
        figure(f"rank compare: trace of {args.ranks} ranks with compile phases (wall)", trace_s, "s", None),
        figure(f"rank compare: GUI loader after the open of {args.ranks} ranks: link index, line facts (CPU)",
               loader_cpu, "s", None),
        figure("rank compare: planted faults missed", float(len(problems)), "count", 0.0),
    ]
    report(figures, args.json)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
