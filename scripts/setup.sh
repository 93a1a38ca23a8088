#!/usr/bin/env bash
# Create .venv at the project root and install CompileScope into it (idempotent).
# Sourced by scripts/app and scripts/test. Extras to install come in $CS_EXTRAS (e.g. "test").
#
# torch: prefers the CPU wheel of torch 2.13.0 where pip can find it locally (no multi-GB CUDA
# download); otherwise the CPU build from download.pytorch.org. GPU users set
#   CS_TORCH="torch>=2.11,<2.16" CS_TORCH_INDEX=https://download.pytorch.org/whl/cu128
# (or install torch into .venv themselves first: an installed torch>=2.11 is kept; one newer than
# the hooks are tested on still captures, with a one-line notice).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
extras="${CS_EXTRAS:-}"

if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv"
    "$py" -m venv .venv || { echo "[setup] error: '$py -m venv' failed; on Debian: apt-get install python3-venv" >&2; exit 1; }
    .venv/bin/python -m pip install -q --upgrade pip
fi
pip=(.venv/bin/python -m pip install -q)

have_torch() { .venv/bin/python - <<'PY' 2>/dev/null
import torch, sys
major, minor = (int(p) for p in torch.__version__.split(".")[:2])
sys.exit(0 if (major, minor) >= (2, 11) else 1)
PY
}
if ! have_torch; then
    local_wheels="$(mktemp -d)"
    if [ -n "${CS_TORCH:-}" ]; then
        echo "[setup] installing ${CS_TORCH}"
        "${pip[@]}" "$CS_TORCH" ${CS_TORCH_INDEX:+--index-url "$CS_TORCH_INDEX"}
    # A local CPU wheel (pip's find-links): install that file; its own dependencies come from the
    # configured index. (`--no-index` for the whole install fails on a new venv, since torch's
    # dependencies are not local, and the fallback then spent a minute in network retries.)
    elif .venv/bin/python -m pip download -q --no-index --no-deps --only-binary=:all: torch==2.13.0 \
            -d "$local_wheels" >/dev/null 2>&1; then
        "${pip[@]}" "$local_wheels"/torch-*.whl
        echo "[setup] installed torch 2.13.0 (CPU) from the local wheel"
    else
        echo "[setup] installing the CPU build of torch from download.pytorch.org"
        "${pip[@]}" "torch>=2.11,<2.16" --index-url https://download.pytorch.org/whl/cpu \
            --extra-index-url https://pypi.org/simple
    fi
    rm -rf "$local_wheels"
fi

spec="."
[ -n "$extras" ] && spec=".[$extras]"
stamp=".venv/.compilescope-${extras:-base}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "[setup] installing compilescope${extras:+ [$extras]}"
    # -qq: setuptools' own notice that an editable install maps folders by name is no news to
    # us and ten lines of noise to a new user; errors still show
    "${pip[@]}" -q -e "$spec"
    touch "$stamp"
fi

# Qt needs a few system libraries even offscreen; the xcb platform (a real display) needs more.
if ! .venv/bin/python -c "import PySide6.QtWidgets" 2>/tmp/cs_qt_err.txt; then
    libs="libgl1 libegl1 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "[setup] installing Qt's system libraries: $libs"
        apt-get update -qq && apt-get install -y -qq $libs >/dev/null
    else
        echo "[setup] error: Qt cannot load: $(tail -1 /tmp/cs_qt_err.txt)" >&2
        echo "[setup] install its libraries: sudo apt-get install $libs" >&2
        exit 1
    fi
fi
if [ -n "${DISPLAY:-}" ]; then
    xcb="$(ldd .venv/lib/python3*/site-packages/PySide6/Qt/plugins/platforms/libqxcb.so 2>/dev/null | awk '/not found/{print $1}')"
    if [ -n "$xcb" ]; then
        pkgs="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0"
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "[setup] installing Qt's X11 (xcb) libraries"
            apt-get update -qq && apt-get install -y -qq $pkgs >/dev/null
        else
            echo "[setup] warning: Qt's X11 plugin lacks: $xcb" >&2
            echo "[setup] install them with: sudo apt-get install $pkgs" >&2
        fi
    fi
fi
