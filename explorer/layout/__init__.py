"""Qt-free graph layout: layered DAG layout, module groups and nested (compound) layout.

`layered_layout` places a plain DAG; `build_groups` turns module paths into a group tree;
`CompoundLayout(arrays, tree).scene(expanded)` gives absolute geometry with groups as boxes.
No Qt here, so layouts run in worker threads and in tests without a display.
"""

from explorer.layout.compound import CompoundLayout
from explorer.layout.graph_arrays import GraphArrays, from_graph, from_sections
from explorer.layout.layered import LayeredLayout, layered_layout
from explorer.layout.module_groups import ROOT, GroupTree, build_groups
from explorer.layout.scene_assembly import Scene

__all__ = [
    "ROOT",
    "CompoundLayout",
    "GraphArrays",
    "GroupTree",
    "LayeredLayout",
    "Scene",
    "build_groups",
    "from_graph",
    "from_sections",
    "layered_layout",
]
