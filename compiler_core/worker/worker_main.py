"""The worker process's entry: parse the command line, open the events channel, run the job.

The channel is opened before anything else (and before torch is imported) so even a model file
that fails at import is reported as an event. With `--auth-stdin` the per-run key is read from
stdin first and every line is signed (event_auth.py); the channel's fd is moved to a high,
non-inheritable number so the user's children never get it and stray writes to low fds miss it.
Python warnings are forwarded as events as well as printed.
`faulthandler` writes a native traceback to stderr if the process crashes, which
the client keeps for its error message.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import IO, Any

from compiler_core.worker import protocol
from compiler_core.worker.protocol import CaptureSpec, Event
from compiler_core.worker.timeline_job import TIMELINE_FLAG, TimelineJob, exec_timeline, read_key_fd


class EventChannel:
    """Writes protocol lines to a dedicated fd or file; thread-safe, one flush per event.

    Only the process that opened the channel writes to it. A child forked by the user's code
    (DataLoader workers, multiprocessing, Inductor's compile pool) inherits the stream and the
    signer with its sequence counter; its lines would repeat sequence numbers the parent then
    counts as forged, failing an honest run. A forked child's events (a `warnings.warn` in a
    DataLoader worker) are its own business: they still reach its stderr, never the channel."""

    def __init__(self, stream: IO[str], sign: Callable[[str], str] | None = None) -> None:
        self._stream = stream
        self._sign = sign or (lambda body: body)
        self._lock = threading.Lock()
        self._owner = os.getpid()
        self.signed = 0  # lines signed so far: a fresh image continues the sequence after it
        self.broken = False

    @staticmethod
    def open(events_fd: int | None, events_file: str | None,
             sign: Callable[[str], str] | None = None) -> EventChannel:  # fmt: skip
        if events_fd is not None:
            fd = _hide(events_fd)
        elif events_file is not None:
            fd = _hide(os.open(events_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600))
        else:
            return EventChannel(open(os.devnull, "w", encoding="utf-8"))
        return EventChannel(os.fdopen(fd, "w", encoding="utf-8", buffering=1, closefd=True), sign)

    def fileno(self) -> int | None:
        try:
            return self._stream.fileno()
        except (OSError, ValueError):
            return None

    def send(self, event: Event) -> None:
        if self.broken or os.getpid() != self._owner:
            return
        with self._lock:
            try:
                # lone surrogates (undecodable file names) would break the UTF-8 stream and the MAC
                body = event.to_json().encode("utf-8", "replace").decode("utf-8")
                line = self._sign(body)
                self.signed += 1
                self._stream.write(line + "\n")
                self._stream.flush()
            except (BrokenPipeError, OSError):
                self.broken = True  # the parent went away; keep going so the session is saved


def _hide(fd: int) -> int:
    """Move `fd` to a high number, close-on-exec: children never inherit it, writes to low fds
    (a model "writing fake events to fds 1-63") miss it."""
    import fcntl
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    floor = max(min(soft if soft != resource.RLIM_INFINITY else 1024, 1024) - 64, 64)
    try:
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
    except OSError:
        os.set_inheritable(fd, False)
        return fd
    os.close(fd)
    return high


def _read_key() -> bytes:
    """The per-run key from stdin (the parent writes one hex line and closes it); stdin then
    becomes /dev/null so user code reading it gets EOF, not the key."""
    from compiler_core.worker.event_auth import KEY_BYTES

    line = sys.stdin.buffer.readline(4 * KEY_BYTES)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        return bytes.fromhex(line.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        return b""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compiler_core.worker", description=protocol.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--out", required=True)
    p.add_argument("--events-fd", type=int)
    p.add_argument("--events-file")
    p.add_argument("--auth-stdin", action="store_true",
                   help="read a hex key from stdin first and sign every event line with it")
    p.add_argument("--device", default="cpu")
    p.add_argument("--mode", choices=protocol.MODES)
    p.add_argument("--dynamic", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--input-steps", type=int, default=4)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--modes", default="default")
    p.add_argument("--shape-change-step", type=int, default=None)
    p.add_argument("--max-memory-mb", type=int, default=None,
                   help="cap on the worker's memory (0 = none; default: 75%% of RAM on CPU)")
    p.add_argument("--trace", default="")
    p.add_argument("--train", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--budgets", default="", help="a memory-budget sweep at these values instead of a capture")
    p.add_argument(TIMELINE_FLAG, dest="timeline_only", action="store_true",
                   help="(internal) time the model in this fresh process and add the timeline to --out")
    p.add_argument("--key-fd", type=int, help="(internal) the run's key and next sequence number")
    return p


def spec_from_args(args: argparse.Namespace) -> CaptureSpec:
    return CaptureSpec(
        model_path=os.path.abspath(args.model), out_path=os.path.abspath(args.out), device=args.device,
        mode=args.mode, dynamic=args.dynamic, input_steps=args.input_steps, steps=args.steps,
        modes=args.modes, trace_path=os.path.abspath(args.trace) if args.trace else "",
        shape_change_step=args.shape_change_step, train=args.train, budgets=args.budgets,
    )


MAX_WARNING_CHARS = 8_000


def _forward_warnings(channel: EventChannel, clock: Any) -> None:
    original = warnings.showwarning

    def show(message: Any, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        text = str(message)
        if len(text) > MAX_WARNING_CHARS:  # an event line stays far under launch.MAX_LINE_BYTES
            text = f"{text[:MAX_WARNING_CHARS]}... [{len(text) - MAX_WARNING_CHARS} characters cut]"
        channel.send(Event("warning", t=clock(), message=text,
                           data={"category": category.__name__, "file": filename, "line": lineno}))
        original(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def _cap_refused_loading(exc: BaseException) -> bool:
    """A shared library refused by the address-space cap: the loader cannot map its segments
    (`failed to map segment from shared object`), which no model code is involved in."""
    return isinstance(exc, ImportError | OSError) and "failed to map segment" in str(exc)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    key, first_seq = b"", 0
    if args.key_fd is not None:
        key, first_seq = read_key_fd(args.key_fd)
    elif args.auth_stdin:
        key = _read_key()
    sign = None
    if key or args.auth_stdin:
        from compiler_core.worker.event_auth import signer

        sign = signer(key, start=first_seq)
    channel = EventChannel.open(args.events_fd, args.events_file, sign)
    channel.signed = first_seq
    del sign
    t0 = time.monotonic()
    if not args.timeline_only:
        channel.send(Event("hello", pid=os.getpid(),
                           data={"python": sys.version.split()[0], "protocol": protocol.PROTOCOL_VERSION}))
    faulthandler.enable(file=sys.stderr, all_threads=False)
    memory_note = ""
    if not args.timeline_only:  # rlimits survive the exec into the timeline's image
        from compiler_core.worker.memory_limit import apply_memory_limit

        memory_note = apply_memory_limit(args.device, args.max_memory_mb)
        channel.send(Event("warning", message=f"memory cap: {memory_note}", data={"category": "memory_cap"}))
    _forward_warnings(channel, lambda: round(time.monotonic() - t0, 4))
    try:
        if args.timeline_only:
            code = TimelineJob(spec_from_args(args), channel.send).run()
        elif args.budgets:
            from compiler_core.worker.budget_job import run_budget_job

            code = run_budget_job(spec_from_args(args), channel.send)
        else:
            from compiler_core.worker.capture_job import CaptureJob

            job = CaptureJob(spec_from_args(args), channel.send, memory_note)
            code = job.run()
            fd = channel.fileno()
            if job.timeline_pending and fd is not None and not channel.broken:
                exec_timeline(sys.argv[1:] if argv is None else argv, fd, key, channel.signed)
    except Exception as exc:  # a CompileScope bug: say so on the channel, not only stderr
        import traceback

        from compiler_core.capture.user_errors import safe_str

        cap = memory_note.split(" per ")[0] if memory_note[:1].isdigit() else ""  # "2048 MiB"
        if cap and _cap_refused_loading(exc):
            channel.send(Event("error", stage="memory", message=(
                f"torch could not be loaded under the memory cap ({cap}): "
                f"{type(exc).__name__}: {safe_str(exc)[:300]}. Its libraries need more address space "
                "(a CUDA build maps several GiB); raise --max-memory-mb, or 0 for no cap")))
            code = protocol.EXIT_USAGE
        else:
            channel.send(Event("error", stage="internal",
                               message=f"internal error: {type(exc).__name__}: {safe_str(exc)[:2000]}",
                               traceback=traceback.format_exc()[-20_000:]))
            code = protocol.EXIT_INTERNAL
    channel.send(Event("done", t=round(time.monotonic() - t0, 4), exit_code=code))
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: user threads or pools (Inductor's compile workers) can hang it.
    os._exit(code)
