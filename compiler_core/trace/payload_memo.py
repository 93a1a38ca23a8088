"""What the rank logs of one job hold alike, read and decoded once for all of them.

A data-parallel job writes one log per rank, and the ranks log the same compile: the same graph
texts, output code and guards (most of a deep model's log) under the same record
headers. What differs is the envelope: the glog prefix (time, process id), which is no part of
a header's JSON, and the `"rank": r` field torch writes into every header of a compile once the
process group is up. Reading each rank's log on its own parses every header, scans every
payload line for the next header, counts its lines, copies it out of the read block, unescapes
its lines and decodes it once per rank: most of the import of a many-rank job.

Everything here is keyed on content with the rank field cut out, never on where it came from:

- a header's JSON, less its `"rank": N` (`header_key`), gives the metadata parsed before, with
  this record's own rank put back in the same place (the dict is copied: records own theirs);
- after such a header, the payload another rank logged there is compared byte for byte where it
  lies in the read block (`bytes.startswith` at its offset, no copy), and when it is whole (the
  next line starts a header, or the block ends) the reader steps over it without scanning it;
- any other payload of 1 KiB or more is looked up by its length and the hash of its bytes,
  hashed in place (a memoryview) and compared in place (a memoryview's own `==` compares a
  byte at a time, far slower); copied out only the first time;
- a payload's text is decoded once per distinct payload, so what later hashes or compares it
  (the parse memo keys graphs on their text) finds one object.

A rank whose header or payload differs by a byte simply misses and is read in full. One memo
serves one import (analysis/session_builder.py makes it for a folder of several logs) and holds
what it has read until the import ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Shorter payloads are counted and copied as usual: hashing a chromium event's few bytes costs
# what counting them does, and their timestamps differ between ranks anyway.
MIN_SHARED = 1024
_RANK = b'"rank": '
_CANDIDATES = 2  # payloads remembered per header key: a header repeated with other payloads


class PayloadMemo:
    """Headers and payload lines already read from another log of the same import."""

    def __init__(self) -> None:
        # (length, hash) -> [(bytes, lines, tabbed)]: more than one only for a hash collision
        self._gaps: dict[tuple[int, int], list[tuple[bytes, int, int]]] = {}
        self._texts: dict[bytes, str] = {}
        self._headers: dict[bytes, tuple[str, dict[str, Any]]] = {}
        self._after: dict[bytes, list[tuple[bytes, int]]] = {}  # header key -> [(payload, lines)]
        self.hits = 0

    # ------------------------------------------------------------------------------- headers

    @staticmethod
    def header_key(meta_bytes: bytes) -> tuple[bytes, int | None]:
        """The header's bytes less its `"rank": N` (the rest of the field is left: a key, not
        JSON), and N (None when there is none)."""
        at = meta_bytes.find(_RANK)
        if at < 0:
            return meta_bytes, None
        start = end = at + len(_RANK)
        while end < len(meta_bytes) and 48 <= meta_bytes[end] <= 57:
            end += 1
        if end == start or end - start > 9 or meta_bytes.find(_RANK, end) >= 0:
            return meta_bytes, None  # a nested field of that name too: kept whole
        return meta_bytes[:at] + meta_bytes[end:], int(meta_bytes[start:end])

    def header(self, key: bytes, rank: int | None) -> tuple[str, dict[str, Any]] | None:
        """(kind, metadata) of a header read before under `key`, with `rank` as its rank."""
        found = self._headers.get(key)
        if found is None:
            return None
        meta = dict(found[1])
        if rank is not None:
            meta["rank"] = rank  # the key is there already: its place in the dict is kept
        return found[0], meta

    def keep_header(self, key: bytes, rank: int | None, kind: str, meta: dict[str, Any]) -> None:
        """Remember a parsed header, when the rank cut from its key is the record's own (not a
        field of the same name inside its value)."""
        if meta.get("rank") == rank and (rank is None or type(meta["rank"]) is int):
            self._headers[key] = (kind, meta)

    # ------------------------------------------------------------------------------ payloads

    def payload_after(self, key: bytes, block: bytes, pos: int,
                      next_header: Callable[[int], Any]) -> tuple[bytes, int, Any] | None:  # fmt: skip
        """The payload logged after header `key` before, if `block` holds it whole at `pos`:
        (its bytes, its line count, the next header's match or None at the block's end).
        `next_header(at)` matches a header line after the newline at `at`, or None."""
        for payload, lines in self._after.get(key, ()):
            end = pos + len(payload)
            if not block.startswith(payload, pos):
                continue
            if end == len(block):
                self.hits += 1
                return payload, lines, None
            following = next_header(end - 1)
            if following is not None:
                self.hits += 1
                return payload, lines, following
        return None

    def note_after(self, key: bytes, payload: bytes, lines: int, tabbed: int) -> None:
        """Remember a whole payload read after header `key`: every line tabbed, so no header
        can start inside it."""
        if len(payload) >= MIN_SHARED and lines == tabbed and payload.endswith(b"\n"):
            known = self._after.setdefault(key, [])
            if len(known) < _CANDIDATES and all(p is not payload for p, _ in known):
                known.append((payload, lines))

    def gap(self, block: bytes, pos: int, end: int) -> tuple[bytes, int, int] | None:
        """`block[pos:end]` (payload lines), its newline count and its count of lines that
        start with a tab, as records.py counts them; None for a gap too short to share."""
        if end - pos < MIN_SHARED:
            return None
        with memoryview(block) as whole, whole[pos:end] as view:
            key = (end - pos, hash(view))
        same = self._gaps.setdefault(key, [])
        for found in same:
            if block.startswith(found[0], pos):
                self.hits += 1
                return found
        gap = block[pos:end]
        found = (gap, gap.count(b"\n"), gap.count(b"\n\t") + (gap[0] == 9))
        same.append(found)
        return found

    def text(self, raw: bytes, decode: Callable[[bytes], str]) -> str:
        """`decode(raw)`, once per distinct payload."""
        found = self._texts.get(raw)
        if found is None:
            found = self._texts[raw] = decode(raw)
        return found
