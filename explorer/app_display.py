"""Where the GUI can draw, decided before a QApplication exists.

Qt picks its platform plugin inside QApplication's constructor and, when that plugin finds no
display (over SSH without X forwarding), aborts the process there (SIGABRT, exit 134): nothing
after the constructor can catch it. So every entry point asks `check_display` first. A start that
needs no window (`--screenshot`) renders offscreen on its own; a window with nowhere to go gets a
one-line hint and exit status 2 instead of Qt's abort.

Kept free of Qt so the answer costs no Qt import, and `python -m explorer.app_display` lets the
shell launcher ask the same question (exit 0: a window can open; 2: it cannot).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import MutableMapping

NO_DISPLAY_EXIT = 2
NO_DISPLAY_HINT = (
    "compilescope: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset): "
    "connect with `ssh -X` to forward X, or save the window as a PNG with "
    "`QT_QPA_PLATFORM=offscreen compilescope [PATH] --screenshot OUT.png`"
)
DEAD_DISPLAY_HINT = (
    "compilescope: DISPLAY={display} is set but no X server answers there (an ended `ssh -X` "
    "session leaves it behind): reconnect with `ssh -X`, or save the window as a PNG with "
    "`QT_QPA_PLATFORM=offscreen compilescope [PATH] --screenshot OUT.png`"
)
# Platforms whose window system needs no environment variable to be found.
_ALWAYS_A_DISPLAY = ("darwin", "win32", "cygwin")


def check_display(needs_window: bool, env: MutableMapping[str, str] | None = None,
                  platform: str = sys.platform) -> str | None:  # fmt: skip
    """None when a QApplication may be created now, else the hint to print before exiting 2.

    A platform the user chose in QT_QPA_PLATFORM is theirs and is left alone. Otherwise a start
    that needs no window gets the offscreen platform written into `env` (os.environ by default,
    so Qt reads it), on every machine: a screenshot then looks the same whatever screen it was
    taken on, and no window flashes up. Only X11 and Wayland announce a display through the
    environment; macOS and Windows always have one.
    """
    env = os.environ if env is None else env
    if env.get("QT_QPA_PLATFORM"):
        return None
    if not needs_window:
        env["QT_QPA_PLATFORM"] = "offscreen"
        return None
    if platform.startswith(_ALWAYS_A_DISPLAY) or env.get("WAYLAND_DISPLAY"):
        return None
    display = env.get("DISPLAY")
    if not display:
        return NO_DISPLAY_HINT
    if not x_server_answers(display):  # a stale DISPLAY (the ssh -X session that set it is gone)
        return DEAD_DISPLAY_HINT.format(display=display)
    return None


def x_server_answers(display: str, timeout_s: float = 1.0) -> bool:
    """Whether something accepts connections where `display` points: the X server's socket
    (`:N` and `unix:N`: /tmp/.X11-unix/XN, or the same name in Linux's abstract namespace) or
    `HOST:N`'s TCP port 6000+N. Qt's xcb plugin aborts the process when nothing does, so this is
    asked first. A name this cannot parse is given the benefit of the doubt."""
    host, sep, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not sep or not number.isdigit() or host.startswith("/"):  # launchd's socket path (macOS)
        return True
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        return any(_connects(socket.AF_UNIX, address, timeout_s) for address in (path, "\0" + path))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return _connects(family, (host, 6000 + int(number)), timeout_s)


def _connects(family: int, address: object, timeout_s: float) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(address)  # type: ignore[arg-type]
        return True
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    raise SystemExit(0 if check_display(needs_window=True) is None else NO_DISPLAY_EXIT)
