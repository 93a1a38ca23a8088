"""Authenticated event lines: the parent believes only what the worker itself wrote (issue 12, row 6).

The worker runs the user's code in its own process, so no channel is truly out of that code's
reach: it can close, write to or find any descriptor (/proc/self/fd). What we can do is make a
forged or replayed line detectable, and never let an event decide success on its own:

- The parent makes a 32-byte key per run and writes it to the worker's **stdin**, then closes
  it. The worker reads it before any user code runs and rebinds fd 0 to /dev/null; the key is
  never in argv, the environment or a file, so `ps`, /proc/PID/environ, inherited fds and
  child processes do not see it. Code in the worker process could still dig it out of memory
  (gc, ctypes); that is not "trivial", and the verdict does not rest on events anyway (below).
  stdin, not an extra pipe, because QProcess (the GUI) can write a child's stdin but cannot
  pass it other descriptors.
- Each line is `MAC SEQ JSON`: HMAC-SHA256 over `SEQ JSON` with SEQ counting from 1. The
  parent drops lines that fail the MAC or come out of order and counts them as forged.
- Success is decided by the parent (client.py, explorer/worker_process.py): exit code 0, an
  authenticated `done` with exit code 0, no forged lines, and the session file at the path the
  parent chose exists, is new and decodes. `os._exit(0)` in a model, a closed event fd, or fake
  events on inherited fds each miss one of these and are reported as failures.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable

KEY_BYTES = 32


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def signer(key: bytes) -> Callable[[str], str]:
    """A function that frames one JSON body as an authenticated line (no trailing newline).

    The key lives only in this closure (not a module global or an attribute user code would
    find by name)."""
    seq = 0

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
