"""`python -m compiler_core.run SCRIPT --out S.json --events-file PATH -- ARGS`: see spec.py.

Same start as the model-file worker (worker_main.py): the events channel first, `hello` with
our pid (the Stop signal's target), faulthandler on stderr, the memory cap, warnings forwarded.
Three roles: a plain run (`ScriptJob`), a `--nproc` launcher (`RankLauncher`, which starts the
ranks under torch.distributed.run) and, inside such a run, one rank (`--rank-child`, started by
torchrun, whose `RANK` it reads). Ends with `os._exit`, like the model-file worker, so threads
or pools the script left running cannot hang the teardown.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
import time
from collections.abc import Callable

from compiler_core.run.spec import ScriptSpec
from compiler_core.worker import protocol
from compiler_core.worker.protocol import Event
from compiler_core.worker.worker_main import EventChannel, _forward_warnings, _read_key


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compiler_core.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script")
    p.add_argument("--out", required=True)
    p.add_argument("--events-fd", type=int)
    p.add_argument("--events-file")
    p.add_argument("--device", default="cpu")
    p.add_argument("--cwd", default="")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--nproc", type=int, default=1)
    p.add_argument("--trace", default="")
    p.add_argument("--max-memory-mb", type=int, default=None)
    p.add_argument("--rank-child", action="store_true", help="internal: one rank of a --nproc run")
    p.add_argument("--auth-stdin", action="store_true",
                   help="read a hex key from stdin first and sign every event line with it")
    p.add_argument("--rank-keys", default="", help="internal: the directory of the ranks' own keys")
    return p


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """Our options before the first `--`, the script's arguments after it."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def spec_from_args(args: argparse.Namespace, script_args: list[str]) -> ScriptSpec:
    return ScriptSpec(
        model_path=os.path.abspath(args.script), out_path=os.path.abspath(args.out), device=args.device,
        trace_path=os.path.abspath(args.trace) if args.trace else "", max_memory_mb=args.max_memory_mb,
        script_args=tuple(script_args), cwd=args.cwd, max_steps=args.max_steps, nproc=args.nproc,
    )


def main(argv: list[str] | None = None) -> int:
    ours, script_args = split_argv(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(ours)
    spec = spec_from_args(args, script_args)
    channel = EventChannel.open(args.events_fd, args.events_file, _signer(args))
    # Stop (SIGUSR1) would kill us by default until the job's handler is in place, during
    # torch's import; ignored until then (the run has recorded nothing a Stop could keep).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    t0 = time.monotonic()
    rank = int(os.environ.get("RANK", "0")) if args.rank_child else None
    if rank is None:
        channel.send(Event("hello", pid=os.getpid(),
                           data={"python": sys.version.split()[0], "protocol": protocol.PROTOCOL_VERSION,
                                 "script": spec.model_path}))
    else:
        _die_with_parent()
        channel.send(Event("rank", pid=os.getpid(), data={"rank": rank, "state": "started"}))
    faulthandler.enable(file=sys.stderr, all_threads=False)
    from compiler_core.worker.memory_limit import apply_memory_limit

    apply_memory_limit(args.device, args.max_memory_mb)
    _forward_warnings(channel, lambda: round(time.monotonic() - t0, 4))
    try:
        code = _run(spec, channel, rank)
    except Exception as exc:  # a CompileScope bug: say so on the channel, not only stderr
        import traceback

        channel.send(Event("error", stage="internal", message=f"internal error: {type(exc).__name__}: {exc}",
                           traceback=traceback.format_exc()))
        code = protocol.EXIT_INTERNAL
    if rank is None:
        channel.send(Event("done", t=round(time.monotonic() - t0, 4), exit_code=code))
    else:
        channel.send(Event("rank", pid=os.getpid(), exit_code=code, data={"rank": rank, "state": "finished"}))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _signer(args: argparse.Namespace) -> Callable[[str], str] | None:
    """Sign with the run key from stdin, or in a rank with that rank's own key (read from its
    file, which is deleted at once): both before the script's code runs (event_auth.py)."""
    from compiler_core.worker import event_auth

    if args.rank_child and args.rank_keys:
        rank = int(os.environ.get("RANK", "0"))
        return event_auth.rank_signer(event_auth.read_rank_key(args.rank_keys, rank), rank)
    if args.auth_stdin:
        return event_auth.signer(_read_key())
    return None


def _run(spec: ScriptSpec, channel: EventChannel, rank: int | None) -> int:
    if spec.nproc > 1 and rank is None:
        from compiler_core.run.rank_launcher import RankLauncher

        return RankLauncher(spec, channel.send).run()
    from compiler_core.run.script_job import ScriptJob

    return ScriptJob(spec, channel.send, rank=rank).run()


def _die_with_parent() -> None:
    """A rank dies with torchrun: torchrun starts ranks in their own sessions, out of reach of
    the client's process-group kill, so a cancelled or crashed run would leave them behind.
    Linux only (prctl PR_SET_PDEATHSIG); elsewhere torchrun's own shutdown has to do."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
