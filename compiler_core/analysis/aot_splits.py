"""How many graphs DDPOptimizer split a compile into, for the AOT view to say which one it shows.

Under `torch.compile(DDP(model))` Dynamo's DDPOptimizer cuts the frame's graph at gradient-bucket
boundaries and AOTAutograd and Inductor compile each piece under the frame's one compile id.
Inductor's outputs are kept per piece (each forward or inference output is one), but a compile
holds one AOTAutograd joint / forward / backward: the last piece compiled, the last graph the
log records under that id (which need not be the last piece of the forward: in a Llama job it
was the one holding the embedding). Shown alone it reads as the whole frame's graph; the view
says which it is.
"""

from __future__ import annotations

from compiler_core.session.model import Compile, Partition


def ddp_pieces(c: Compile) -> int:
    """Graphs Inductor compiled for this compile's forward (or inference): above 1, DDPOptimizer
    split the frame and the AOT graphs are the last piece's."""
    return sum(1 for o in c.inductor if o.graph != Partition.BACKWARD)


def aot_pieces_note(c: Compile) -> str:
    """"" for a compile of one graph; else what the AOT view shows of it."""
    n = ddp_pieces(c)
    if n <= 1:
        return ""
    return (f"DDPOptimizer split this frame into {n} graphs: the AOTAutograd graphs shown are the "
            f"last one compiled, not the whole frame (the Inductor view lists all {n})")
