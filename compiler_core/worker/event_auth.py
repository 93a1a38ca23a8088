"""Authenticated event lines: the parent believes only what the worker itself wrote.

The worker runs the user's code in its own process, so no channel is truly out of that code's
reach: it can close, write to or find any descriptor (/proc/self/fd). What we can do is make a
forged or replayed line detectable, and never let an event decide success on its own:

- The parent makes a 32-byte key per run and writes it to the worker's **stdin**, then closes
  it. The worker reads it before any user code runs and rebinds fd 0 to /dev/null; the key is
  never in argv, the environment or a file, so `ps`, /proc/PID/environ, inherited fds and
  child processes do not see it. Code in the worker process can still find it in memory (three
  lines through `gc.get_objects()`) and forge an authentic stream: a model that sets out to fool
  its own recorder can (docs/reliability.md, threat model). The signature keeps out accidents and
  other processes, not the code under test.
  stdin, not an extra pipe, because QProcess (the GUI) can write a child's stdin but cannot
  pass it other descriptors.
- Each line is `MAC SEQ JSON`: HMAC-SHA256 over `SEQ JSON` with SEQ counting from 1. The
  parent drops lines that fail the MAC or come out of order and counts them as forged.
- Success is decided by the parent (client.py, explorer/worker_process.py): exit code 0, an
  authenticated `done` with exit code 0, no forged lines, and the session file at the path the
  parent chose exists, is new and decodes. `os._exit(0)` in a model, a closed event fd, or fake
  events on inherited fds each miss one of these and are reported as failures.

Script runs (compiler_core/run) are signed the same way. A `--nproc N` run has N rank processes
that share one append-only events file: each rank gets its **own** random key (a file in a 0700
directory that the rank reads and deletes before the script runs, see `write_rank_keys` and
`read_rank_key`), frames its lines `RANK MAC SEQ JSON` with its own sequence space, and the
launcher (CompileScope code, no user code runs there) checks them with one `Verifier` per rank
(`RankVerifier`) before it passes them on, re-signed with the run key, to the parent.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable

KEY_BYTES = 32


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def signer(key: bytes, start: int = 0) -> Callable[[str], str]:
    """A function that frames one JSON body as an authenticated line (no trailing newline);
    its first line is numbered `start + 1` (a worker's fresh image continues the sequence).

    The key lives only in this closure (not a module global or an attribute user code would
    find by name)."""
    seq = start

    def sign(body: str) -> str:
        nonlocal seq
        seq += 1
        head = f"{seq} {body}"
        mac = hmac.new(key, head.encode("utf-8"), hashlib.sha256).hexdigest()
        return f"{mac} {head}"

    return sign


class Verifier:
    """Checks lines in order; `forged` counts those that fail, `first_forged` keeps one example."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._next = 1
        self.forged = 0
        self.first_forged = ""

    def check(self, line: str) -> str | None:
        """The JSON body of an authentic next line, else None (counted as forged)."""
        mac, _, head = line.rstrip("\n").partition(" ")
        seq_text, _, body = head.partition(" ")
        want = hmac.new(self._key, head.encode("utf-8", "replace"), hashlib.sha256).hexdigest()
        if hmac.compare_digest(mac, want) and seq_text == str(self._next):
            self._next += 1
            return body
        self.forged += 1
        if not self.first_forged:
            self.first_forged = line[:200]
        return None


class RankVerifier:
    """One `Verifier` per rank over lines framed `RANK MAC SEQ JSON` (ranks share one file, each
    has its own key and sequence). A line for no known rank counts as forged too."""

    def __init__(self, keys: dict[int, bytes]) -> None:
        self._verifiers = {rank: Verifier(key) for rank, key in keys.items()}
        self._unknown = 0
        self._first_unknown = ""

    def check(self, line: str) -> tuple[int, str] | None:
        rank_text, _, rest = line.partition(" ")
        verifier = self._verifiers.get(int(rank_text)) if rank_text.isdigit() else None
        if verifier is None:
            self._unknown += 1
            self._first_unknown = self._first_unknown or line[:200]
            return None
        body = verifier.check(rest)
        return None if body is None else (int(rank_text), body)

    @property
    def forged(self) -> int:
        return self._unknown + sum(v.forged for v in self._verifiers.values())

    @property
    def first_forged(self) -> str:
        return self._first_unknown or next((v.first_forged for v in self._verifiers.values() if v.forged), "")


def rank_signer(key: bytes, rank: int) -> Callable[[str], str]:
    """`signer` for one rank, its lines prefixed with the rank (RankVerifier's framing)."""
    sign = signer(key)
    return lambda body: f"{rank} {sign(body)}"


def write_rank_keys(directory: str, nproc: int) -> dict[int, bytes]:
    """A fresh key per rank, each in `directory/rank_R` (mode 0600; the directory should be 0700)."""
    import os

    keys = {rank: new_key() for rank in range(nproc)}
    for rank, key in keys.items():
        fd = os.open(os.path.join(directory, f"rank_{rank}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key.hex())
    return keys


def read_rank_key(directory: str, rank: int) -> bytes:
    """This rank's key, its file deleted at once (before any user code runs); b"" if missing."""
    import os

    path = os.path.join(directory, f"rank_{rank}")
    try:
        with open(path) as handle:
            text = handle.read(4 * KEY_BYTES)
        os.unlink(path)
        return bytes.fromhex(text.strip())
    except (OSError, ValueError):
        return b""


def channel_problems(forged: int, finished: bool) -> list[str]:
    """Why a signed run that exited 0 is still no success, in the user's words. One text for the
    CLI (worker/client.py) and the GUI (explorer/worker_process.py), which verify the same way."""
    out = []
    if forged:
        out.append(f"{forged} line(s) on CompileScope's event channel were not written by it "
                   "(the model wrote to the channel)")  # fmt: skip
    if not finished:
        out.append("the worker ended without finishing its protocol (os._exit in the model, or the "
                   "model closed CompileScope's event channel)")  # fmt: skip
    return out
