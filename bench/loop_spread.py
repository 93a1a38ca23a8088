"""How far apart do a user's own loops of one model read, run after run, free and pinned?

    python bench/loop_spread.py --device cuda --models hf_qwen2_infer,tv_convnext_t_infer --runs 5 --json

Timeline truth (bench/timeline_truth.py) can only judge a figure when the user's own loops agree
with each other within the ±5 % target; on lent GPU hosts they often did not (5-74 % between
fresh processes). This bench asks whether that disagreement is the scheduler's: per model, it
runs `bench/scripts/plain_loop.py` `--runs` times in fresh processes under each placement,
placements interleaved run by run so drift hits each alike:

- free: wherever the kernel schedules it (what timeline_truth did on one GPU);
- pinned: confined to `--cores` cores next to the GPU (sched_setaffinity, inherited by the
  compile's worker pool), the same cores every run;
- seeded: a fixed `PYTHONHASHSEED` (every run's dicts and sets hash alike);
- fixed: pinned, seeded and without address-space randomisation (`setarch -R`'s personality
  flag), so two runs differ in nothing the process itself chooses.

`--placements` picks which (default: all four). `--from-raw F...` prints the figures of saved
runs (`--out`'s loop_spread.json) instead of running; a placement named again in a later file
(another machine session) keeps its own rows, marked "(session N)".

Per model, placement and figure it prints the runs and their spread ((max - min) / mean). A
placement whose spreads stay within the target can host a timeline-truth run that judges.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timeline_truth import MODELS, NO_ASLR_VAR, PIN_VAR, TARGET, model_file, pinned_cores, plain_run, spread


def figures_of(run: dict[str, Any], modes: str) -> dict[str, float]:
    out = {"eager median": run["eager_ms"]}
    for mode in modes.split(","):
        row = run["modes"][mode]
        out[f"{mode} median"] = row["median_ms"]
        out[f"{mode} speedup"] = row["speedup"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda")
    p.add_argument("--models", default="hf_qwen2_infer,tv_convnext_t_infer")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cores", type=int, default=4)
    p.add_argument("--placements", default="free,pinned,seeded,fixed")
    p.add_argument("--out", type=Path)
    p.add_argument("--from-raw", type=Path, nargs="*", default=[])
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.from_raw:
        report(merged(args.from_raw), args.json)
        return
    cores = pinned_cores(args.cores, args.device)
    every = {"free": None, "pinned": {**os.environ, PIN_VAR: cores},
             "seeded": {**os.environ, "PYTHONHASHSEED": "0"},
             "fixed": {**os.environ, PIN_VAR: cores, "PYTHONHASHSEED": "0", NO_ASLR_VAR: "1"}}
    placements = {k: every[k] for k in args.placements.split(",")}
    print(f"# pinned cores: {cores}", flush=True)
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in args.models.split(","):
        modes = MODELS.get(name, "default")
        raw[name] = {label: [] for label in placements}
        for k in range(args.runs):
            for label, env in placements.items():
                raw[name][label].append(plain_run(model_file(name), args.device, args.steps, modes, env))
                print(f"# {name} run {k} {label}: {json.dumps(raw[name][label][-1])[:300]}", flush=True)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "loop_spread.json").write_text(json.dumps(raw, indent=1))
    report(raw, args.json)


def merged(files: list[Path]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for k, path in enumerate(files, start=1):
        for name, by_placement in json.loads(path.read_text()).items():
            into = raw.setdefault(name, {})
            for label, runs in by_placement.items():
                into[label if label not in into else f"{label} (session {k})"] = runs
    return raw


def report(raw: dict[str, dict[str, list[dict[str, Any]]]], as_json: bool) -> None:
    figures: list[dict[str, Any]] = []
    for name, by_placement in raw.items():
        modes = MODELS.get(name, "default")
        for label, runs in by_placement.items():
            good = [figures_of(r, modes) for r in runs if "error" not in r]
            if not good:
                print(f"{name:20} {label:14} FAILED")
                continue
            for figure in good[0]:
                values = [g[figure] for g in good]
                s = spread(values)
                print(f"{name:20} {label:14} {figure:26} spread {s * 100:5.1f} %  "
                      f"[{' '.join(f'{v:.3f}' for v in values)}]")
                figures.append({"name": f"{name} {label} {figure} spread", "value": round(s * 100, 2),
                                "unit": "%", "target": f"<= {TARGET * 100:.0f} %", "ok": s <= TARGET})
    if as_json:
        print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
