"""`--nproc N`: the script under `torch.distributed.run --standalone`, each rank recorded, one session.

Each rank is `python -m compiler_core.run --rank-child ...` started by torchrun (so RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT are torchrun's own), recording into
`TRACE_DIR/dedicated_log_torch_trace_rank_R.log`, the names TORCH_TRACE gives, and appending
its events (tagged `data.rank`) to one shared events file. Lines under PIPE_BUF written with
O_APPEND do not interleave, so the file needs no lock. The launcher tails that file and passes
every event on, so ranks appear (`rank` started) and their compiles and step times stream in
as they happen. When torchrun exits, the launcher merges the rank logs with the importer's own
multi-rank path and saves one session whose timeline holds every rank's callables (`r0:Net`,
`r1:Net`).

The ranks run user code, so their lines are not trusted as written: each rank signs with a key
of its own, read from a file in a private directory and deleted before the script runs, in its
own sequence space (event_auth.RankVerifier). The launcher passes on only authentic lines (its
own channel signs them again with the run key) and fails the run, whatever torchrun's exit code,
when a line was forged or a rank never reported an authentic `finished` with exit code 0 (a rank
that called `os._exit(0)` or closed its channel).

Stop (SIGUSR1 to the launcher) is forwarded to every rank that reported its pid. Ranks die with
torchrun (PR_SET_PDEATHSIG, script_worker.py), and torchrun is in the launcher's process group,
which the client kills on Cancel or timeout.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compiler_core.run.spec import ScriptSpec
from compiler_core.session.model import Diagnostic, ModeStats, StepSample, TimelineEvent
from compiler_core.timeline.records import EVENT, SAMPLE, STATS, from_record
from compiler_core.worker import event_auth, protocol
from compiler_core.worker.launch import EventTail
from compiler_core.worker.protocol import Event

Emit = Callable[[Event], None]
TAIL_POLL_S = 0.05


class RankLauncher:
    def __init__(self, spec: ScriptSpec, emit: Emit) -> None:
        self.spec = spec
        self._emit = emit
        self._t0 = time.monotonic()
        self.rank_pids: dict[int, int] = {}
        self.rank_exits: dict[int, int | None] = {}
        self.errors: list[Event] = []
        self.samples: list[StepSample] = []
        self.clocks: dict[str, str] = {}  # callable -> the clock its steps were timed with (ranks' reports)
        self.events: list[TimelineEvent] = []
        self.stats: list[ModeStats] = []
        self._verifier = event_auth.RankVerifier({})

    def clock(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def torchrun_argv(self, events_file: str, keys_dir: str = "") -> list[str]:
        child = ["--rank-child", "--events-file", events_file, "--rank-keys", keys_dir,
                 "--out", self.spec.out_path, "--device", self.spec.device,
                 "--trace", self.spec.resolved_trace_path]
        if self.spec.cwd:
            child += ["--cwd", self.spec.cwd]
        if self.spec.max_steps is not None:
            child += ["--max-steps", str(self.spec.max_steps)]
        if self.spec.max_memory_mb is not None:
            child += ["--max-memory-mb", str(self.spec.max_memory_mb)]
        return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc-per-node={self.spec.nproc}", "-m", "compiler_core.run",
                self.spec.model_path, *child, "--", *self.spec.script_args]

    def run(self) -> int:
        trace_dir = Path(self.spec.resolved_trace_path)
        trace_dir.mkdir(parents=True, exist_ok=True)
        for old in trace_dir.glob("dedicated_log_torch_trace*"):
            old.unlink()  # a previous run's ranks must not merge into this one
        events_file = Path(tempfile.mkdtemp(prefix="compilescope-ranks-")) / "events.jsonl"
        events_file.touch()
        keys_dir = tempfile.mkdtemp(prefix="compilescope-rank-keys-")  # 0700
        self._verifier = event_auth.RankVerifier(event_auth.write_rank_keys(keys_dir, self.spec.nproc))
        self._emit(Event("stage", t=self.clock(), stage="run", state="started",
                         data={"nproc": self.spec.nproc}))
        previous = signal.signal(signal.SIGUSR1, self._forward_stop)
        proc = subprocess.Popen(self.torchrun_argv(str(events_file), keys_dir), cwd=self.spec.cwd or None,
                                stdin=subprocess.DEVNULL)
        done = threading.Event()
        tail = threading.Thread(target=self._tail, args=(events_file, done), daemon=True)
        tail.start()
        code = proc.wait()
        done.set()
        tail.join()
        signal.signal(signal.SIGUSR1, previous)
        import shutil

        shutil.rmtree(keys_dir, ignore_errors=True)  # keys of ranks that never started
        untrusted = self.channel_problems() if code == 0 else []
        state = "finished" if code == 0 and not untrusted else "failed"
        self._emit(Event("stage", t=self.clock(), stage="run", state=state, elapsed_s=self.clock()))
        if untrusted:
            self._emit(Event("error", t=self.clock(), stage="run", message="; ".join(untrusted)))
            return self._save(protocol.EXIT_USER_ERROR, untrusted)
        return self._save(protocol.EXIT_OK if code == 0 else protocol.EXIT_USER_ERROR)

    def channel_problems(self) -> list[str]:
        """Why a run torchrun calls a success is none: forged lines, or a rank without an
        authentic `finished` event with exit code 0."""
        out = []
        if self._verifier.forged:
            out.append(f"{self._verifier.forged} line(s) on the ranks' event channel were not written by "
                       "CompileScope (the script wrote to the channel)")  # fmt: skip
        missing = [r for r in range(self.spec.nproc) if self.rank_exits.get(r) != protocol.EXIT_OK]
        if missing:
            out.append(f"rank(s) {missing} ended without finishing CompileScope's protocol (os._exit in "
                       "the script, or it closed CompileScope's event channel)")  # fmt: skip
        return out

    def _forward_stop(self, _signum: int, _frame: Any) -> None:
        for pid in self.rank_pids.values():
            try:
                os.kill(pid, signal.SIGUSR1)
            except (ProcessLookupError, PermissionError):
                continue

    def _tail(self, path: Path, done: threading.Event) -> None:
        """Pass on each complete line of the ranks' events file until torchrun has exited (the
        launcher's own bounded tail, compiler_core/worker/launch.py)."""
        tail = EventTail(str(path))
        while not done.is_set():
            lines = tail.read()
            for line in lines:
                self._on_line(line)
            if not lines:
                time.sleep(TAIL_POLL_S)
        for line in tail.read_rest():  # read once more after the process ended
            self._on_line(line)

    def _on_line(self, line: str) -> None:
        checked = self._verifier.check(line)
        if checked is None:
            return  # forged, replayed or torn: counted, fails the run
        signer_rank, body = checked
        try:
            event = Event.from_json(body)
        except (ValueError, TypeError):
            return
        rank = event.data.get("rank")
        if rank != signer_rank:  # a rank's untagged event (a warning, an internal error): the key says whose
            rank = signer_rank
            event = dataclasses.replace(event, data={**event.data, "rank": rank})
        if event.kind == "rank" and isinstance(rank, int):
            if event.data.get("state") == "started" and event.pid:
                self.rank_pids[rank] = event.pid
            else:
                self.rank_exits[rank] = event.exit_code
        elif event.kind == "error":
            self.errors.append(event)
        elif event.kind == "timeline":
            self._keep_record(event.data)
        elif event.kind == "stage" and isinstance(event.data.get("clocks"), dict):
            # the clock each rank's callables were timed with: the session says which device ran
            self.clocks.update({str(k): str(v) for k, v in event.data["clocks"].items()})
        self._emit(event)

    def _keep_record(self, record: dict[str, Any]) -> None:
        kind = record.get("event")
        if kind == SAMPLE:
            self.samples.append(from_record(record, StepSample))
        elif kind == EVENT:
            self.events.append(from_record(record, TimelineEvent))
        elif kind == STATS:
            self.stats.append(from_record(record, ModeStats))

    def _save(self, code: int, problems: list[str] | None = None) -> int:
        from compiler_core.run.script_session import save_script_session

        diagnostics = [Diagnostic("error", f"rank {e.data.get('rank')}: {e.message}\n{e.traceback}",
                                  self.spec.model_path, stage=e.stage or "run") for e in self.errors]
        lost = sorted(r for r in self.rank_pids if r not in self.rank_exits)
        if lost:
            diagnostics.append(Diagnostic("error", f"rank(s) {lost} died without reporting (killed?)",
                                          self.spec.model_path, stage="run"))
        diagnostics += [Diagnostic("error", why, self.spec.model_path, stage="run") for why in problems or []]
        if code != protocol.EXIT_OK and self.errors and not problems:
            first = self.errors[0]
            self._emit(Event("error", t=self.clock(), stage="run",
                             message=f"rank {first.data.get('rank')}: {first.message}",
                             traceback=first.traceback))
        return save_script_session(self.spec, self._emit, self.clock, code, None, diagnostics,
                                   (self.samples, self.events, self.stats), clocks=self.clocks)
