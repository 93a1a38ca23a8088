"""Module groups (Model Explorer namespaces) built from `Node.module_path`.

Group 0 is the root. With several sections (graphs or bands) the root's children are one
*section* group each, always expanded. Below that, each module call is a group: a module that is
entered again after other code ran (`mlp/act` called twice) becomes a second group labelled
`act (2)`, which keeps the group-level graph acyclic for ordinary FX graphs. Nodes with an empty
module path do not break a call. Placeholders and `get_attr` nodes without a module path join
the group of their first consumer, so parameters sit inside the module that uses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from explorer.layout.graph_arrays import GraphArrays
from explorer.layout.ragged import Ragged

ROOT = 0
_ADOPTABLE = ("placeholder", "get_attr")


def _one_empty_row() -> list[list[int]]:
    return [[]]


@dataclass
class GroupTree:
    parent: list[int] = field(default_factory=lambda: [-1])
    label: list[str] = field(default_factory=lambda: [""])
    path: list[str] = field(default_factory=lambda: [""])
    depth: list[int] = field(default_factory=lambda: [0])
    is_section: list[bool] = field(default_factory=lambda: [False])
    # lists while the tree is built, `Ragged` once sealed (kept out of the collector's passes)
    children: list[list[int]] | Ragged = field(default_factory=_one_empty_row)
    members: list[list[int]] | Ragged = field(default_factory=_one_empty_row)
    node_group: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    size: list[int] = field(default_factory=list)  # nodes in the whole subtree
    fold: list[int] = field(default_factory=list)  # groups standing for N identical siblings (repeats.py)
    # each node's place in grouping order (adopted parameters just before their consumer): the
    # order hint for layout; raw FX order would put every module with a parameter at the top
    order_rank: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def count(self) -> int:
        return len(self.parent)

    def add(self, parent: int, label: str, path: str, section: bool = False) -> int:
        children, members = self.children, self.members
        if isinstance(children, Ragged) or isinstance(members, Ragged):
            raise TypeError("a sealed group tree is read-only")
        g = self.count
        self.parent.append(parent)
        self.label.append(label)
        self.path.append(path)
        self.depth.append(self.depth[parent] + 1)
        self.is_section.append(section)
        children.append([])
        members.append([])
        children[parent].append(g)
        return g

    def seal(self) -> GroupTree:
        """Done building: the per-group tables become arrays (see ragged.py for why)."""
        self.children, self.members = Ragged(self.children), Ragged(self.members)
        return self

    def ancestors(self, g: int) -> list[int]:
        """`g`'s ancestors, nearest first, root last (excluding `g`)."""
        out = []
        while self.parent[g] >= 0:
            g = self.parent[g]
            out.append(g)
        return out

    def subtree_nodes(self, g: int) -> list[int]:
        out: list[int] = []
        stack = [g]
        while stack:
            h = stack.pop()
            out.extend(self.members[h])
            stack.extend(self.children[h])
        return sorted(out)

    def default_expanded(self, limit: int = 300) -> set[int]:
        """Expand groups breadth-first while the visible item count stays within `limit`.

        Folded repeats stay closed: one block `layers.0–31 × 32` says more than 32 boxes."""
        folds = set(self.fold)
        expanded = {ROOT} | {g for g in range(self.count) if self.is_section[g]}
        visible = sum(len(self.members[g]) + len(self.children[g]) for g in expanded) - (len(expanded) - 1)
        queue = [c for g in sorted(expanded) for c in self.children[g] if not self.is_section[c]]
        while queue:
            g = queue.pop(0)
            if g in folds:
                continue
            grow = len(self.members[g]) + len(self.children[g]) - 1
            if visible + grow <= limit:
                expanded.add(g)
                visible += grow
                queue.extend(self.children[g])
        return expanded


def _adopted_paths(arrays: GraphArrays) -> tuple[list[str], list[int]]:
    """Module path per node, with placeholders moved to their first consumer's path, and the
    order to group nodes in: each adopted placeholder just before that consumer (Dynamo lists
    all parameters first; grouped in that order they would open every module once up front)."""
    n = arrays.n
    first = np.full(n, n, dtype=np.int64)
    if len(arrays.src):
        np.minimum.at(first, arrays.src, arrays.dst)
    paths = list(arrays.module_paths)
    at = [float(i) for i in range(n)]
    for i in range(n - 1, -1, -1):  # reverse, so chains of views of a parameter adopt too
        if arrays.nodes[i].op in _ADOPTABLE and first[i] < n and (paths[int(first[i])] or not paths[i]):
            paths[i] = paths[int(first[i])]
            at[i] = at[int(first[i])] - 0.5 / (1 + i)
    return paths, sorted(range(n), key=at.__getitem__)


def build_groups(arrays: GraphArrays, *, fold: bool = True) -> GroupTree:
    """The module group tree; with `fold`, identical numbered siblings are folded (repeats.py)."""
    tree = GroupTree()
    members: list[list[int]] = [[]]  # grows with the tree: add() appends one per group
    tree.members = members
    n = arrays.n
    node_group = np.zeros(n, dtype=np.int64)
    sections = [ROOT] * len(arrays.section_labels)
    if len(arrays.section_labels) > 1:
        sections = [tree.add(ROOT, lab, f"#{s}", True) for s, lab in enumerate(arrays.section_labels)]
    paths, order = _adopted_paths(arrays)
    seen: dict[tuple[int, str], int] = {}
    prev: dict[int, list[int]] = {}  # section -> group chain of the previous module-path node
    for i in order:
        s = int(arrays.section[i])
        top = sections[s]
        parts = [p for p in paths[i].split("/") if p]
        if not parts:
            node_group[i] = top
            members[top].append(i)
            continue
        chain = prev.get(s, [])
        g = top
        new_chain = []
        for k, part in enumerate(parts):
            if k < len(chain) and tree.parent[chain[k]] == g and tree.path[chain[k]].endswith("/" + part):
                g = chain[k]
            else:
                calls = seen.get((g, part), 0) + 1
                seen[(g, part)] = calls
                label = part if calls == 1 else f"{part} ({calls})"
                g = tree.add(g, label, f"{tree.path[g]}/{part}")
            new_chain.append(g)
        prev[s] = new_chain
        node_group[i] = g
        members[g].append(i)
    tree.node_group = node_group
    tree.size = _subtree_sizes(tree)
    tree.order_rank = np.empty(n, dtype=np.int64)
    tree.order_rank[np.asarray(order, dtype=np.int64)] = np.arange(n)
    if fold:
        from explorer.layout.repeats import fold_repeats

        tree = fold_repeats(tree, arrays)
    return tree.seal()


def _subtree_sizes(tree: GroupTree) -> list[int]:
    size = [len(m) for m in tree.members]
    for g in range(tree.count - 1, 0, -1):  # children always have larger ids than parents
        size[tree.parent[g]] += size[g]
    return size
