"""The fixed vocabularies of the session model: partitions, graph kinds, compile statuses, where a
source text came from.

They are `StrEnum`s, so a member *is* its string: JSON, the packed codec and every comparison
with a plain string (`kernel.graph == "forward"`) behave exactly as before they were enums, and
`f"{member}"` gives the value (a plain `(str, Enum)` would print `Partition.FORWARD` there, which
would silently corrupt every encoded ref key built with an f-string).

Decoding is lenient on purpose (`partition_of`...): a session or log written by a later version,
or a damaged one, may hold a word we do not know; it must still open, so unknown words stay
plain strings rather than raising.
"""

from __future__ import annotations

from enum import StrEnum


class Partition(StrEnum):
    """Which graph of a compile's AOT/Inductor stack a node or kernel belongs to.

    `joint` is AOT's unpartitioned forward+backward graph; the partitioner splits it into
    `forward` and `backward`; a compile without autograd has one `inference` graph.
    """

    JOINT = "joint"
    FORWARD = "forward"
    BACKWARD = "backward"
    INFERENCE = "inference"


class GraphKind(StrEnum):
    """The pipeline stage a `Graph` was captured at (`Graph.kind`)."""

    DYNAMO = "dynamo"
    AOT_JOINT = "aot_joint"
    AOT_FORWARD = "aot_forward"
    AOT_BACKWARD = "aot_backward"
    AOT_INFERENCE = "aot_inference"
    PRE_GRAD = "pre_grad"
    POST_GRAD = "post_grad"


class CompileStatus(StrEnum):
    """How one `[frame/compile]` attempt ended (`Compile.status`)."""

    OK = "ok"
    FAILED = "failed"
    CACHE_HIT = "cache_hit"
    SKIPPED = "skipped"
    EMPTY = "empty"


class SourceOrigin(StrEnum):
    """Where a text in `Session.sources` came from (`Session.source_origins`).

    Only `LOOKUP` texts are read from this machine for a log made elsewhere; they are left out of
    a saved session unless the user includes them (codec.save)."""

    CAPTURE = "capture"  # the app's own run of the user's code read it (or was handed it)
    LOOKUP = "local lookup"  # read from this machine, on the user's request, and its lines match the log's
    QUOTE = "log quote"  # only the lines the log quotes, at their numbers; the lines between are gaps


_PARTITIONS: dict[str, Partition] = {p.value: p for p in Partition}


def partition_of(text: str) -> Partition | None:
    """The partition named `text`, or None for a word that names none (O(1): refs decode it)."""
    return _PARTITIONS.get(text)
