"""The source of every file the graphs came from, so the Source pane can show it.

A real model's ops mostly come from library files (270 of 347 Dynamo nodes of an HF Llama are in
`transformers/.../modeling_llama.py`), so the model file alone shows almost nothing. Every file
named by a node's `# File:` comment, a node stack, a break traceback or a compiled frame is
looked up, in order of the nodes it holds:

1. the file at the same path, when this machine has it (a capture, or a log made here);
2. else, for `.../site-packages/pkg/...`, the same file of this machine's install of `pkg` (a log
   made on a GPU box whose venv lives elsewhere);
3. else the lines the log itself quotes (`code: ...` of `# File:` comments, traceback lines),
   at their line numbers, the other lines left blank.

A local file is used only when it agrees with the lines the log quotes (another transformers
version shifts every line number; showing shifted code is worse than showing less). Texts are
capped in total (`MAX_TOTAL_BYTES`); a file that does not fit keeps only its quoted lines, and
`Session.source_notes` says so, as it says where each non-verbatim text came from.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import site
import sys
from collections import Counter
from collections.abc import Iterable

from compiler_core.session.model import Compile, SourceLoc

MAX_BYTES = 2 << 20  # one file
MAX_TOTAL_BYTES = 24 << 20  # all files of a session (a 32-layer HF model needs ~1.5 MB)
MIN_AGREEMENT = 0.9  # share of quoted lines a local file must reproduce to be trusted
DEF = "\0def "  # marks a quoted line known only to start a function (see quoted_lines)
_DEF_LINE = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
_OWN_CODE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PACKAGES = re.compile(r"[/\\](?:site|dist)-packages[/\\](.+)$")


def _locs(c: Compile) -> Iterable[tuple[SourceLoc, bool]]:
    """Every location of a compile, with whether it is a graph node's own line."""
    if c.code is not None:
        yield c.code, False
    if c.dynamo_graph is not None:
        for n in c.dynamo_graph.nodes:
            if n.source is not None:
                yield n.source, True
            for s in n.stack:
                yield s, False
    for gb in c.graph_breaks:
        if gb.location is not None:
            yield gb.location, False
        for s in gb.user_stack:
            yield s, False


def node_counts(compiles: Iterable[Compile]) -> Counter[str]:
    """Dynamo nodes per file (the Source pane lists files in this order)."""
    counts: Counter[str] = Counter()
    for c in compiles:
        if c.dynamo_graph is not None:
            for n in c.dynamo_graph.nodes:
                if n.source is not None:
                    counts[n.source.file] += 1
    return counts


def mentioned_files(compiles: list[Compile]) -> list[str]:
    """Files the compiles name, most Dynamo nodes first, then in order of first mention."""
    order: dict[str, None] = {}
    for c in compiles:
        for loc, _ in _locs(c):
            if loc.file and not loc.file.startswith("<"):
                order.setdefault(loc.file, None)
    counts = node_counts(compiles)
    first = {f: i for i, f in enumerate(order)}
    return sorted(order, key=lambda f: (-counts.get(f, 0), first[f]))


def quoted_lines(compiles: list[Compile]) -> dict[str, dict[int, str]]:
    """file -> line -> the code the log quotes for it (stripped of indentation).

    A compiled frame quotes no code, but its first line is known to start the function (its
    `def`, or the first decorator above it): that is recorded as `DEF + name`, so a file that
    only frames name (transformers' `generic.py` wrapper) can still be checked and aligned."""
    out: dict[str, dict[int, str]] = {}
    for c in compiles:
        for loc, _ in _locs(c):
            if loc.code and loc.line > 0:
                out.setdefault(loc.file, {}).setdefault(loc.line, loc.code.strip())
        code = c.code
        if code is not None and code.line > 0 and code.function.isidentifier() \
                and not code.function.startswith("torch_dynamo_resume"):
            out.setdefault(code.file, {}).setdefault(code.line, DEF + code.function)
    _quote_guards(compiles, out)
    return out


def _quote_guards(compiles: list[Compile], out: dict[str, dict[int, str]]) -> None:
    """Guards quote the line that installed them (`# x = self.layer1(x)  # torchvision/models/
    resnet.py:273`) under a path relative to its package: matched to a known file by suffix."""
    by_suffix: dict[str, str | None] = {}
    for c in compiles:
        for g in c.guards:
            src = g.source
            if src is None or not src.code or src.line <= 0 or src.file.startswith("<"):
                continue
            if src.file not in by_suffix:
                hits = [f for f in out if f == src.file or f.endswith("/" + src.file)]
                by_suffix[src.file] = hits[0] if len(hits) == 1 else None
            path = by_suffix[src.file]
            if path is not None:
                out[path].setdefault(src.line, src.code.strip())


def _function_starts(lines: list[str]) -> dict[str, list[int]]:
    """`DEF + name` -> 1-based lines where that function starts (its first decorator or def)."""
    out: dict[str, list[int]] = {}
    for i, ln in enumerate(lines, 1):
        m = _DEF_LINE.match(ln) if "def" in ln else None  # (the pattern needs `def`: skip the regex)
        if m:
            start = i
            while start > 1 and lines[start - 2].lstrip().startswith("@"):
                start -= 1
            out.setdefault(DEF + m.group(1), []).append(start)
    return out


def site_dirs() -> list[str]:
    """This interpreter's package directories (site-packages of the venv, user site, sys.path)."""
    dirs: list[str] = []
    with contextlib.suppress(AttributeError):  # virtualenv's old site.py lacks it
        dirs.extend(site.getsitepackages())
    user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else ""
    dirs.extend([user] if isinstance(user, str) else [])
    dirs.extend(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return [d for d in dict.fromkeys(dirs) if d and os.path.isdir(d)]


def local_candidates(path: str, dirs: list[str]) -> list[str]:
    """Where this machine may hold `path`: itself, then the same file of a local package."""
    out = [path]
    m = _PACKAGES.search(path)
    if m:
        out.extend(os.path.join(d, m.group(1)) for d in dirs)
    return list(dict.fromkeys(out))


def _read(path: str) -> str | None:
    try:
        if os.path.isfile(path) and os.path.getsize(path) <= MAX_BYTES:
            from compiler_core.trace.read_limits import open_regular

            # a path named by a log: never block on a FIFO swapped in after the check
            with open(open_regular(path), encoding="utf-8", errors="replace") as fh:
                return fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    return None


def agreement(text: str, quoted: dict[int, str]) -> float:
    """Share of quoted lines that `text` has at the same line number (1.0 when none are quoted)."""
    if not quoted:
        return 1.0
    lines = text.splitlines()
    starts = _function_starts(lines) if any(c.startswith(DEF) for c in quoted.values()) else {}
    same = sum(
        1 for n, code in quoted.items()
        if (n in starts.get(code, ()) if code.startswith(DEF)
            else 0 < n <= len(lines) and lines[n - 1].strip() == code)
    )  # fmt: skip
    return same / len(quoted)


def rebuild(quoted: dict[int, str]) -> str:
    """The quoted lines at their numbers; the lines in between blank."""
    if not quoted:
        return ""
    last = max(quoted)
    return "\n".join(_shown(quoted.get(i, "")) for i in range(1, last + 1)) + "\n"


def _shown(code: str) -> str:
    return f"def {code[len(DEF):]}(...):  # (signature not in the log)" if code.startswith(DEF) else code


def realign(local: str, quoted: dict[int, str], context: int = 12) -> tuple[str, int]:
    """Quoted lines, plus the local file's lines around them where they still line up.

    Another version of a library shifts line numbers but keeps most code: each quoted line is
    found in `local` (the match nearest the previous anchor's offset); between two anchors with
    the same offset the local lines fill the gap, and `context` lines around each anchor too.
    Returns the text and how many lines it holds."""
    lines = local.splitlines()
    where: dict[str, list[int]] = _function_starts(lines)
    for i, ln in enumerate(lines, 1):
        where.setdefault(ln.strip(), []).append(i)
    anchors: list[tuple[int, int]] = []
    offset = 0
    for n in sorted(quoted):
        found = where.get(quoted[n], [])
        if found:
            m = min(found, key=lambda k: abs(k - n - offset))
            anchors.append((n, m))
            offset = m - n
    out: dict[int, str] = {n: _shown(code) for n, code in quoted.items()}
    for n, m in anchors:
        out[n] = lines[m - 1]
        for d in range(-context, context + 1):
            if n + d > 0 and 0 < m + d <= len(lines):
                out.setdefault(n + d, lines[m + d - 1])
    for (n1, m1), (n2, m2) in itertools.pairwise(anchors):
        if m1 - n1 == m2 - n2:
            for n in range(n1 + 1, n2):
                out.setdefault(n, lines[m1 + n - n1 - 1])
    last = max(out) if out else 0
    return "\n".join(out.get(i, "") for i in range(1, last + 1)) + "\n", sum(1 for v in out.values() if v)


def collect_sources(
    compiles: list[Compile], given: dict[str, str] | None = None, total_cap: int = MAX_TOTAL_BYTES
) -> tuple[dict[str, str], dict[str, str]]:
    """(path -> text, path -> note) for every mentioned file; `given` texts (a capture's model
    file) are kept verbatim and count towards the cap first."""
    sources = dict(given or {})
    notes: dict[str, str] = {}
    used = sum(len(t) for t in sources.values())
    quotes = quoted_lines(compiles)
    dirs = site_dirs()
    for path in mentioned_files(compiles):
        if path in sources or path.startswith(_OWN_CODE):
            continue  # CompileScope's own worker frames sit above the user's in tracebacks
        quoted = quotes.get(path, {})
        text, note, other = _local_text(path, quoted, dirs)
        if text is not None and used + len(text) > total_cap:
            cap = f"{total_cap >> 20} MB" if total_cap >= 1 << 20 else f"{total_cap >> 10} kB"
            text, note = None, f"left out: over the {cap} cap on stored sources"
        if text is None:
            if not quoted:
                if note:
                    notes[path] = note
                continue
            if other is not None and used + len(other) <= total_cap:
                text, held = realign(other, quoted)
                note = (f"{note}; rebuilt from the {len(quoted)} lines the log quotes, with {held} lines "
                        "of the local version aligned on them (others blank)")
            else:
                text = rebuild(quoted)
                rebuilt = f"rebuilt from the log: {len(quoted)} quoted lines, the rest blank"
                note = f"{note}; {rebuilt}" if note else rebuilt
        sources[path] = text
        used += len(text)
        if note:
            notes[path] = note
    return sources, notes


def _local_text(path: str, quoted: dict[int, str], dirs: list[str]) -> tuple[str | None, str, str | None]:
    """(a trusted local text of `path` or None, a note on where it came from or why not, the
    untrusted local text of another version when that is all there is)."""
    why, other = "", None
    for cand in local_candidates(path, dirs):
        text = _read(cand)
        if text is None:
            continue
        share = agreement(text, quoted)
        if share >= MIN_AGREEMENT:
            return text, "" if cand == path else f"read from the local install: {cand}", None
        if other is None:
            why = f"the local {cand} is another version ({share:.0%} of the lines the log quotes match)"
            other = text
    return None, why, other
