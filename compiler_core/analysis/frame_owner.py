"""Whose code a traceback frame is: torch's, the standard library's, CompileScope's own, or the
user's (their script and the libraries they call).

A break or crash is placed at the deepest frame the user could change. Torch's frames are never
that, nor the standard library's (`contextlib.py:105` is where a `with` of the user's entered,
not what to fix), nor CompileScope's: a script run puts its launcher (runpy, the worker) above
the user's script and its step timer between the script's call and the compiled module, and
newer torch prints those outer frames in a break's "User code traceback". A user running
`python train.py` never sees them, so neither does a user of the app.
"""

from __future__ import annotations

import re
import sysconfig

# A frame inside torch itself: torch installed as a package, or a source checkout's torch/ tree.
_TORCH_FILE = re.compile(
    r"[/\\]torch[/\\](?:_|nn[/\\]|utils[/\\]|autograd[/\\]|fx[/\\]|distributed[/\\]|amp[/\\]|"
    r"cuda[/\\]|optim[/\\]|functional\.py|overrides\.py|random\.py)"
    r"|-packages[/\\]torch[/\\]"
)
# CompileScope's modules that can sit on a user's stack: the launcher, the run and capture
# workers, the step timer and the compile hook.
_OWN_FILE = re.compile(
    r"[/\\]compiler_core[/\\](?:__main__\.py|(?:run|worker|timeline|capture|cli)[/\\][\w/\\]*\.py)$"
)
_STDLIB_FILE = re.compile(r"[/\\]lib[/\\]python3\.\d+[/\\](?!site-packages|dist-packages)[^/\\]+\.py$")
_LAUNCH = ("<frozen runpy>", "runpy.py")
_STDLIB = sysconfig.get_paths().get("stdlib") or ""  # this machine's, for logs written here


def is_torch_file(path: str) -> bool:
    """Whether a traceback frame belongs to torch rather than to the user or another library."""
    return bool(_TORCH_FILE.search(path))


def is_own_file(path: str) -> bool:
    """A frame of CompileScope's own code (wherever the log was written: matched by path shape)."""
    return bool(_OWN_FILE.search(path))


def is_stdlib_file(path: str) -> bool:
    if path.startswith("<frozen "):
        return True
    if _STDLIB_FILE.search(path):
        return True
    return bool(_STDLIB) and path.startswith(_STDLIB + "/") and "-packages" not in path[len(_STDLIB):]


def is_user_culprit(path: str) -> bool:
    """A frame a user would change: not torch, the standard library, CompileScope or `<string>`."""
    return not (path.startswith("<") or is_torch_file(path) or is_own_file(path) or is_stdlib_file(path))


def without_own_frames(files: list[str]) -> list[int]:
    """Indices of the frames to keep, outermost first: CompileScope's frames go, and so does the
    launch above the user's script (runpy and the worker that ran it), which a plain
    `python train.py` does not have."""
    start = 0
    for i, path in enumerate(files):
        if is_own_file(path):
            start = i + 1
        elif not path.endswith(_LAUNCH) and path not in _LAUNCH:
            break
    if start:
        while start < len(files) and (files[start] in _LAUNCH or files[start].endswith(_LAUNCH)):
            start += 1
    return [i for i in range(start, len(files)) if not is_own_file(files[i])]


__all__ = ["is_own_file", "is_stdlib_file", "is_torch_file", "is_user_culprit", "without_own_frames"]
