"""The source of every file the graphs came from, so the Source pane can show it.

A real model's ops mostly come from library files (270 of 347 Dynamo nodes of an HF Llama are in
`transformers/.../modeling_llama.py`), so the model file alone shows almost nothing. Every file
named by a node's `# File:` comment, a node stack, a break traceback or a compiled frame gets a
text, in order of the nodes it holds, and an origin (`Session.source_origins`):

- `capture`: a capture (the app's own run of the user's code) reads the file its run imported;
- `local lookup`: for a log, only when the user asks (source_lookup.py says where it may read),
  the file at the same path or this machine's install of the same package (a log made on a GPU
  box whose venv lives elsewhere);
- `log quote`: otherwise the lines the log itself quotes (`code: ...` of `# File:` comments,
  traceback lines), each at its line number, the lines between left blank. They are gaps: never
  filled with another version's code (that showed one view interleaving two transformers
  versions, with break marks on lines that never existed together).

A file on disk is accepted only when the lines the log quotes are in it, byte-equal after the
indentation the log strips, at their numbers: at least `MIN_MATCHES` code lines (a log quoting no
line, or one true line, proves nothing) and `MIN_AGREEMENT` of all it quotes. Matching is by
position: linear in the file and the quotes. Texts are capped in total (`MAX_TOTAL_BYTES`); a file
that does not fit keeps only its quoted lines, and `Session.source_notes` says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import site
import sys
from collections import Counter
from collections.abc import Iterable

from compiler_core.analysis.source_lookup import SourceLookup, read_source
from compiler_core.session.model import Compile, Session
from compiler_core.session.source_quotes import DEF, quote_text, quoted_lines, source_locations
from compiler_core.session.vocab import SourceOrigin

MAX_TOTAL_BYTES = 24 << 20  # all files of a session (a 32-layer HF model needs ~1.5 MB)
MIN_AGREEMENT = 0.9  # share of quoted lines a local file must reproduce to be trusted
MIN_MATCHES = 3  # quoted code lines a file from disk must hold, for a log from elsewhere
_DEF_LINE = re.compile(r"\s*(?:async\s+)?def\s+(\w+)\s*\(")
_OWN_CODE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PACKAGES = re.compile(r"[/\\](?:site|dist)-packages[/\\](.+)$")


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
        for loc, _ in source_locations(c):
            if loc.file and not loc.file.startswith("<"):
                order.setdefault(loc.file, None)
    counts = node_counts(compiles)
    first = {f: i for i, f in enumerate(order)}
    return sorted(order, key=lambda f: (-counts.get(f, 0), first[f]))


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


@dataclasses.dataclass(frozen=True)
class Agreement:
    """How a text agrees with what the log quotes of it."""

    quoted: int  # lines the log quotes (code, and function starts of compiled frames)
    matched: int  # of them, found in the text at their number
    code_matched: int  # quoted code lines found byte-equal (function starts not counted)

    @property
    def share(self) -> float:
        return self.matched / self.quoted if self.quoted else 0.0  # nothing quoted proves nothing

    def accepts(self, min_matches: int) -> bool:
        return self.matched >= max(1, min_matches) and self.code_matched >= min_matches \
            and self.share >= MIN_AGREEMENT


def agreement(text: str, quoted: dict[int, str]) -> Agreement:
    """How many quoted lines `text` has at the same line number (one pass over each)."""
    if not quoted:
        return Agreement(0, 0, 0)
    lines = text.splitlines()
    starts = _function_starts(lines) if any(c.startswith(DEF) for c in quoted.values()) else {}
    code = defs = 0
    for n, quote in quoted.items():
        if quote.startswith(DEF):
            defs += n in starts.get(quote, ())
        else:
            code += 0 < n <= len(lines) and lines[n - 1].strip() == quote
    return Agreement(len(quoted), code + defs, code)


def quote_lines(text: str) -> set[int]:
    """The 1-based lines of a `log quote` text that hold a quoted line (the others are gaps)."""
    return {i for i, ln in enumerate(text.splitlines(), 1) if ln}


def _over_cap(total_cap: int) -> str:
    cap = f"{total_cap >> 20} MB" if total_cap >= 1 << 20 else f"{total_cap >> 10} kB"
    return f"left out: over the {cap} cap on stored sources"


def site_dirs() -> list[str]:
    """This interpreter's package directories (site-packages of the venv, user site, sys.path)."""
    dirs: list[str] = []
    with contextlib.suppress(AttributeError):  # virtualenv's old site.py lacks it
        dirs.extend(site.getsitepackages())
    user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else ""
    dirs.extend([user] if isinstance(user, str) else [])
    dirs.extend(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return [d for d in dict.fromkeys(dirs) if d and os.path.isdir(d)]


def _package_dirs(lookup: SourceLookup) -> list[str]:
    """Folders that may hold a package a log names under another machine's site-packages: this
    interpreter's for a capture, the lookup's roots otherwise (nothing outside them is read)."""
    return site_dirs() if lookup.trusted else list(lookup.roots)


def local_candidates(path: str, dirs: list[str]) -> list[str]:
    """Where this machine may hold `path`: itself, then the same file of a local package."""
    out = [path]
    m = _PACKAGES.search(path)
    if m:
        out.extend(os.path.join(d, m.group(1)) for d in dirs)
    return list(dict.fromkeys(out))


@dataclasses.dataclass
class SourceTexts:
    """What `collect_sources` found: path -> text, -> note, -> origin."""

    sources: dict[str, str]
    notes: dict[str, str]
    origins: dict[str, SourceOrigin]


def collect_sources(
    compiles: list[Compile], given: dict[str, str] | None = None, lookup: SourceLookup | None = None,
    total_cap: int = MAX_TOTAL_BYTES,
) -> SourceTexts:
    """A text for every mentioned file that has one. `given` texts (a capture's model file) are
    kept verbatim and count towards the cap first; files are read from disk only under `lookup`
    (None: read nothing, show what the log quotes)."""
    out = SourceTexts(dict(given or {}), {}, dict.fromkeys(given or {}, SourceOrigin.CAPTURE))
    used = sum(len(t) for t in out.sources.values())
    quotes = quoted_lines(compiles)
    dirs = _package_dirs(lookup) if lookup is not None else []
    for path in mentioned_files(compiles):
        if path in out.sources or path.startswith(_OWN_CODE):
            continue  # CompileScope's own worker frames sit above the user's in tracebacks
        quoted = quotes.get(path, {})
        if not quoted:
            continue  # nothing to check a file against, nothing to show: never read
        text, note = (None, "source lookup on this machine is off") if lookup is None \
            else _local_text(path, quoted, lookup, dirs)
        if text is not None and used + len(text) > total_cap:
            text, note = None, _over_cap(total_cap)
        if text is None:
            text = quote_text(quoted)
            if not text:
                continue
            origin = SourceOrigin.QUOTE
        else:
            origin = SourceOrigin.CAPTURE if lookup is not None and lookup.trusted else SourceOrigin.LOOKUP
        out.sources[path] = text
        out.origins[path] = origin
        used += len(text)
        if note:
            out.notes[path] = note
    return out


def _local_text(path: str, quoted: dict[int, str], lookup: SourceLookup,
                dirs: list[str]) -> tuple[str | None, str]:  # fmt: skip
    """(the text of a local file that holds the quoted lines, or None; a note on where it came
    from, or why no file was used)."""
    min_matches = 0 if lookup.trusted else MIN_MATCHES
    code = sum(1 for q in quoted.values() if not q.startswith(DEF))
    if code < min_matches:  # no file could pass: none is opened
        return None, f"the log quotes {code} line{'s' * (code != 1)} of it, too few to check a local file by"
    why = "no readable file at this path (or this package's) under the lookup roots"
    for cand in local_candidates(path, dirs):
        text = read_source(cand, lookup)
        if text is None:
            continue
        found = agreement(text, quoted)
        if found.accepts(min_matches):
            return text, "" if cand == path else f"read from the local install: {cand}"
        if why.startswith("no readable file"):
            why = (f"the local {cand} does not hold them ({found.matched} of {found.quoted} quoted lines "
                   f"match; {max(1, min_matches)} and {MIN_AGREEMENT:.0%} of them needed)")
    return None, why


def with_local_sources(session: Session, lookup: SourceLookup, total_cap: int = MAX_TOTAL_BYTES) -> Session:
    """`session` with each `log quote` text replaced by the local file that holds its quoted
    lines, where `lookup` lets one be read (the Source pane's "Look up sources on this machine").
    The set of files is unchanged, so the session's links still hold."""
    quotes = quoted_lines(session.compiles)
    sources, notes = dict(session.sources), dict(session.source_notes)
    origins = dict(session.source_origins)
    used = sum(len(t) for t in sources.values())
    dirs = _package_dirs(lookup)
    for path, origin in session.source_origins.items():
        quoted = quotes.get(path, {})
        if origin != SourceOrigin.QUOTE or not quoted:
            continue
        text, note = _local_text(path, quoted, lookup, dirs)
        if text is not None and used - len(sources[path]) + len(text) > total_cap:
            text, note = None, _over_cap(total_cap)
        if text is None:
            notes[path] = note
            continue
        used += len(text) - len(sources[path])
        sources[path], origins[path] = text, SourceOrigin.LOOKUP
        notes[path] = note or "read from this machine: it holds the lines the log quotes"
    return dataclasses.replace(session, sources=sources, source_notes=notes, source_origins=origins)
