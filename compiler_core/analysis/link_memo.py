"""Links of a compile that another rank logged identically: computed once, renamed per rank.

A data-parallel job leaves one log per rank, and each rank logs the same compile: the same graph
text, output code and guards. The parse memo (parse_memo.py) already shares the parsed graphs and
kernels between them, so such compiles hold the *same* graph and kernel objects. Their links are
then the same up to the rank written in every ref (`kind|rank|compile|key`), and linking every
rank of a deep model from scratch repeats the same work per rank. Here the first rank is linked
normally and the others get its links with the rank prefix swapped.

The first rank's link set is laid out once for renaming (`_Template`): its refs as runs of one
prefix (the key text after the prefix kept), and each ref's targets as positions among those
refs. Renaming for another rank is then one string concatenation per ref and one C-level
`itemgetter` call per ref for its targets: no dict lookup per target, no sorting (a prefix swap
keeps the order of the refs of one compile). Sixty ranks of a 32-layer Llama hold 2.1M refs and
9.9M targets; looking every target up by name was most of their import.

What `link_compile` reads besides the shared objects (pre-to-post provenance, break and guard
locations) is compared by value before a link set is reused; anything unexpected (a ref whose
prefix is not one of the compile's own) falls back to linking the compile normally.
"""

from __future__ import annotations

import bisect
import operator
from collections import Counter
from collections.abc import Callable, Hashable
from itertools import chain, repeat

from compiler_core.analysis.linking import link_compile
from compiler_core.session.links import LinkBuilder
from compiler_core.session.model import Compile
from compiler_core.session.refs import Ref, RefKind, split_prefix

Adjacency = dict[str, tuple[str, ...]]
Getter = Callable[[tuple[str, ...]], tuple[str, ...]]
# A link set cut at its prefix runs: (prefix, its refs -> their targets), refs sorted in a run.
Runs = list[tuple[str, Adjacency]]


def shape_key(c: Compile) -> Hashable:
    """What makes two compiles' links equal up to the rank, by identity of the shared parsed
    objects (AOT partners, saved tensors and recomputed nodes are derived from the graphs)."""
    aot = c.aot
    graphs = (c.dynamo_graph, *((aot.joint, aot.forward, aot.backward, aot.inference) if aot else ()))
    parts = tuple((o.graph, id(o.post_grad), id(o.kernels)) for o in c.inductor)
    breaks = tuple((b.location.file, b.location.line) if b.location else None for b in c.graph_breaks)
    guards = tuple((g.source.file, g.source.line) if g.source else None for g in c.guards)
    return (c.compile_id, tuple(id(g) for g in graphs), parts, breaks, guards)


class LinkMemo:
    """Links `compiles` into `lb`, reusing the links of an identical compile of another rank."""

    def __init__(self, lb: LinkBuilder, compiles: list[Compile], user_files: set[str]) -> None:
        self.lb = lb
        self.user_files = user_files
        self.keys = [shape_key(c) for c in compiles]
        self.repeated = {k for k, n in Counter(self.keys).items() if n > 1}
        self.done: dict[Hashable, tuple[Compile, dict[str, list[str]], Adjacency]] = {}
        self.templates: dict[Hashable, _Template | None] = {}
        self.parts: list[Runs] = []  # link sets of memoised compiles, joined at `freeze`
        # compile index -> index of the compile of another rank whose links it got, renamed: what
        # is derived from a compile's objects and links alone is the same for both (decompositions)
        self.same_as: dict[int, int] = {}
        self._index: dict[Hashable, int] = {}

    def link(self, i: int, c: Compile, pre_to_post: dict[str, list[str]]) -> None:
        key = self.keys[i]
        if key not in self.repeated:
            link_compile(self.lb, c, pre_to_post, self.user_files)
            return
        seen = self.done.get(key)
        if seen is not None and seen[0].rank != c.rank and seen[1] == pre_to_post:
            if key not in self.templates:
                self.templates[key] = _Template.of(seen[2])
            template = self.templates[key]
            renamed = template.renamed(_prefix_map(c.compile_id, seen[0].rank, c.rank)) if template else None
            if renamed is not None:
                self.parts.append(renamed)
                self.same_as[i] = self._index[key]
                return
        own = LinkBuilder()
        link_compile(own, c, pre_to_post, self.user_files)
        adjacency = own.freeze()
        self.parts.append(_runs(adjacency))
        if seen is None:
            self.done[key] = (c, pre_to_post, adjacency)
            self._index[key] = i

    def freeze(self) -> Adjacency:
        """`lb.freeze()` with the memoised link sets joined in: the session's `links`, sorted as
        `LinkBuilder.freeze` sorts them. Link sets of different ranks share no ref; a ref two
        sets (or the builder) share, a source line two compiles of one rank link to, takes the
        union of its targets.

        Refs of one prefix sort together and prefixes sort as their refs do (a prefix ends at
        its third `|`, so none is the start of another), so the joined links are the runs in
        the order of their prefixes: no sort of the 2M refs of 64 ranks."""
        links = self.lb.freeze()
        if not self.parts:
            return links
        by_prefix: dict[str, list[Adjacency]] = {}
        for prefix, run in chain(_runs(links), *self.parts):
            by_prefix.setdefault(prefix, []).append(run)
        out: Adjacency = {}
        for prefix in sorted(by_prefix):
            pieces = by_prefix[prefix]
            if len(pieces) == 1:
                out.update(pieces[0])  # from a dict: the hashes are its own, no key is hashed again
                continue
            joined: dict[str, tuple[str, ...]] = {}
            for run in pieces:
                for ref, these in run.items():
                    had = joined.get(ref)
                    joined[ref] = these if had is None else tuple(sorted(set(had).union(these)))
            out.update((ref, joined[ref]) for ref in sorted(joined))
        return out


class _Template:
    """One compile's frozen link set laid out for renaming to another rank (module docstring)."""

    def __init__(self, runs: list[tuple[str, list[str]]], getters: list[Getter]) -> None:
        self.runs = runs  # (prefix, key texts after it), in ref order
        self.getters = getters  # per ref: its targets, from the tuple of all refs

    @staticmethod
    def of(adjacency: Adjacency) -> _Template | None:
        """None when a ref has no prefix or links to a ref that is no key (not a set we made)."""
        refs = list(adjacency)
        if refs != sorted(refs):
            refs.sort()
        at = {ref: i for i, ref in enumerate(refs)}
        getters: list[Getter] = []
        for targets in map(adjacency.__getitem__, refs):
            try:
                places = [at[t] for t in targets]
            except KeyError:  # a one-sided link
                return None
            first = places[0] if places else 0
            if places == list(range(first, first + len(places))):  # a run (or one): a slice is a tuple
                getters.append(operator.itemgetter(slice(first, first + len(places))))
            else:
                getters.append(operator.itemgetter(*places))
        runs = []
        for prefix, start, end in _prefix_runs(refs):
            if not prefix.endswith("|"):  # no `kind|rank|compile|` prefix
                return None
            runs.append((prefix, [r[len(prefix) :] for r in refs[start:end]]))
        return _Template(runs, getters)

    def renamed(self, prefixes: dict[str, str]) -> Runs | None:
        """The link set with every prefix swapped by `prefixes`; None if one is not in it."""
        new: list[str] = []
        for prefix, _ in self.runs:
            swapped = prefixes.get(prefix)
            if swapped is None:
                return None
            new.append(swapped)
        cut = [list(map(p.__add__, keys)) for p, (_, keys) in zip(new, self.runs, strict=True)]
        names = tuple(chain.from_iterable(cut))
        targets = list(map(operator.call, self.getters, repeat(names)))
        out: Runs = []
        start = 0
        for prefix, refs in zip(new, cut, strict=True):  # a run's dict is made while its refs are
            end = start + len(refs)  # in cache: `freeze` then takes their hashes from it
            out.append((prefix, dict(zip(refs, targets[start:end], strict=True))))
            start = end
        return out


def _runs(adjacency: Adjacency) -> Runs:
    """A frozen (sorted) adjacency as its prefix runs."""
    refs = list(adjacency)
    targets = list(adjacency.values())
    return [(prefix, dict(zip(refs[a:b], targets[a:b], strict=True))) for prefix, a, b in _prefix_runs(refs)]


def _prefix_runs(refs: list[str]) -> list[tuple[str, int, int]]:
    """(prefix, start, end) of each run of sorted `refs` that share a `kind|rank|compile|`
    prefix; a ref without one is a run of its own, its prefix itself."""
    out = []
    i, n = 0, len(refs)
    while i < n:
        cut = _prefix_end(refs[i])
        if not cut:
            out.append((refs[i], i, i + 1))
            i += 1
            continue
        prefix = refs[i][:cut]
        j = bisect.bisect_left(refs, prefix[:-1] + chr(ord(prefix[-1]) + 1), i + 1)
        out.append((prefix, i, j))
        i = j
    return out


def _prefix_map(compile_id: str, old: int | None, new: int | None) -> dict[str, str]:
    """Each ref prefix of a compile of rank `old` -> the same prefix for rank `new`."""
    out = {Ref.prefix(kind, compile_id, old): Ref.prefix(kind, compile_id, new) for kind in RefKind}
    out[Ref.prefix(RefKind.SOURCE_LINE, "", old)] = Ref.prefix(RefKind.SOURCE_LINE, "", new)
    return out


def _renamed(adjacency: Adjacency, prefixes: dict[str, str]) -> Adjacency | None:
    """`adjacency` with every ref's prefix swapped; None if a ref has a prefix not in `prefixes`
    or links to a ref that is no key."""
    template = _Template.of(adjacency)
    runs = template.renamed(prefixes) if template is not None else None
    if runs is None:
        return None
    return {ref: these for _, run in runs for ref, these in run.items()}


def _prefix_end(ref: str) -> int:
    """Length of `kind|rank|compile|` at the start of `ref` (0 when it has fewer fields)."""
    return len(split_prefix(ref)[0])
