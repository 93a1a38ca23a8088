"""Streaming reader for structured-trace logs (TORCH_TRACE / `torch.__trace`, what tlparse reads).

A log is glog-prefixed header lines carrying one JSON object each, optionally followed by payload
lines that start with a TAB. Speed comes from doing almost no per-line Python work: the file is
read in large binary blocks, header lines are found with one multiline regex over the block, and a
payload stays as the raw bytes between two headers until someone asks for its text. Only the small
metadata JSON is decoded eagerly. Damage (a bad JSON header, a stray line) becomes a `Diagnostic`
with path and line number and reading goes on. Bounds on line length and decompression, and
the refusal of anything but regular files, are in read_limits.py.
"""

from __future__ import annotations

import lzma
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import Any, BinaryIO

from compiler_core.session.model import Diagnostic
from compiler_core.trace.json_payload import JsonPayloadError, parse_json
from compiler_core.trace.payload_memo import PayloadMemo
from compiler_core.trace.read_limits import ReadLimits, open_regular

BLOCK_SIZE = 1 << 22
# Blocks of a job's rank logs (`shared`): a deep model's log is one block. Kept under glibc's
# largest mmap threshold (32 MiB): a freed block is then reused from the heap, while a 32 MiB block
# would be a fresh mapping for every log, its pages faulted in again.
SHARED_BLOCK_SIZE = 1 << 24
NOT_A_TRACE = ("not a TORCH_TRACE log: no trace record in it (a log is what `TORCH_TRACE=DIR` writes: "
               "glog-prefixed lines such as `V1123 10:00:00.000000 123 torch/_dynamo/...] "
               '{"dynamo_start": ...}`)')
EMPTY_LOG = ("the log is empty (0 bytes): the run wrote no trace record to it (did it compile anything, "
             "with TORCH_TRACE set?)")
_BAD = "\0bad"  # placeholder kind for a damaged header; never yielded

# glog prefix: level letter, MMDD, time, thread id, file:line, then "] " and the metadata JSON.
# Searched as "\n" + prefix (not `^` under re.M): a literal first byte lets the regex engine skip
# ahead with memchr, much faster over payload-heavy logs; a block's first line is matched apart.
_HEADER = re.compile(rb"\n[VIWEC]\d{4} [^\]\n]*\] ?([^\n]*)")
_HEADER_AT = re.compile(rb"[VIWEC]\d{4} [^\]\n]*\] ?([^\n]*)")

# Keys every record may carry beside its one kind key.
ENVELOPE_KEYS = frozenset(
    {"has_payload", "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank", "stack"}
)


@dataclass(slots=True)
class Record:
    """One structured-trace record: its kind, metadata and (lazily decoded) payload."""

    kind: str
    meta: dict[str, Any]
    line: int
    raw_payload: bytes = b""
    pid: int | None = None  # the writing process, read from the prefix of `dynamo_start` only
    # other logs of the import: a payload they hold is decoded once (no part of the record's value)
    shared: PayloadMemo | None = field(default=None, compare=False, repr=False)

    @property
    def value(self) -> Any:
        """The kind's own metadata value, e.g. `{"name": ..., "encoding": ...}` for artifacts."""
        return self.meta.get(self.kind)

    @property
    def payload(self) -> str:
        raw = self.raw_payload
        if not raw:
            return ""
        if self.shared is not None:
            return self.shared.text(raw, _payload_text)
        return _payload_text(raw)

    def payload_json(self) -> Any:
        return parse_json(self.payload)


def _payload_text(raw: bytes) -> str:
    """Payload lines as text: each line's leading TAB and the final newline dropped."""
    if raw.startswith(b"\t"):
        raw = raw[1:]
    text = raw.replace(b"\n\t", b"\n").decode("utf-8", errors="replace")
    return text[:-1] if text.endswith("\n") else text


def record_kind(meta: dict[str, Any]) -> str:
    for key in meta:
        if key not in ENVELOPE_KEYS:
            return key
    return "stack" if "stack" in meta else "unknown"


@dataclass
class RecordReader:
    """Iterates the records of one log file; collects diagnostics as it goes.

    `payload_kinds` limits which records keep their payload bytes (None keeps all): skipping
    payloads nobody reads saves memory and copying on large logs. `shared` is given when several
    logs of one job are read (payload_memo.py): what they hold alike is counted and decoded once.
    """

    path: str
    payload_kinds: frozenset[str] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    max_diagnostics: int = 200
    limits: ReadLimits = field(default_factory=ReadLimits)
    shared: PayloadMemo | None = None

    def __iter__(self) -> Iterator[Record]:
        self._cap = self.limits.line_cap
        records = 0
        with open(open_regular(self.path), "rb") as fh:
            # a line over the cap always spans two chunks; a job's rank logs are read in larger
            # blocks: a log read whole is never joined from pieces (a copy of every block) nor
            # cuts a payload in two (a payload another rank logged is then stepped over whole)
            size = min(BLOCK_SIZE if self.shared is None else SHARED_BLOCK_SIZE, self._cap)
            if self.path.endswith(".gz"):
                chunks = _gunzip(fh, self._read_failed, self.limits, size)
            elif self.path.endswith(".xz"):
                chunks = _unxz(fh, self._read_failed, self.limits, size)
            else:
                chunks = _raw(fh, size)
            for record in self._read(chunks):
                records += 1
                yield record
            read_any = fh.tell() > 0
        if not records:
            # A model file, a saved session or any text opened as a log: say so once, not only
            # as a "not a trace line" per line (the CLI exits non-zero on it, while the GUI
            # still opens whatever it can). An empty file says it is empty: a run that wrote
            # nothing, not a file of another kind.
            if read_any:
                self.diagnostics.insert(0, Diagnostic("error", NOT_A_TRACE, path=self.path, stage="trace"))
            else:
                self.diagnostics.insert(0, Diagnostic("warning", EMPTY_LOG, path=self.path, stage="trace"))

    def _warn(self, message: str, line: int | None) -> None:
        if len(self.diagnostics) < self.max_diagnostics:
            self.diagnostics.append(Diagnostic("warning", message, path=self.path, line=line, stage="trace"))
        elif len(self.diagnostics) == self.max_diagnostics:
            self.diagnostics.append(
                Diagnostic("warning", "further problems in this file not listed", path=self.path)
            )

    def _read(self, chunks: Iterator[bytes]) -> Iterator[Record]:
        pending: Record | None = None  # the record whose payload lines we are inside
        parts: list[bytes] = []
        line_at = 1  # line number at `pos`
        self._kept = 0  # payload bytes kept for `pending`
        self._key = b""  # `pending`'s header less its rank (with `shared` only)
        tail = [b"\n"]  # last byte read: a log cut short ends mid-line, which is reported
        for block in _blocks(_last_byte(chunks, tail), self._cap):
            if isinstance(block, _Overlong):
                if block.first == b"\t" and pending is not None:  # a payload line: drop its record
                    if self._keeps(pending):  # (a payload nobody reads is skipped anyway)
                        self._warn(f"payload line longer than {self._cap} bytes; record at line "
                                   f"{pending.line} skipped", line_at)  # fmt: skip
                        pending.kind = _BAD
                else:  # a header (or stray) line: whatever record it starts is skipped
                    if pending is not None and pending.kind != _BAD:
                        yield _finish(pending, parts)
                    self._warn(f"line longer than {self._cap} bytes; record skipped", line_at)
                    pending = Record(_BAD, {}, line_at)
                parts = []
                line_at += 1
                continue
            pos = 0
            self._payload_at = -1  # where the payload of the last header of this block starts
            first = _HEADER_AT.match(block)
            matches = chain((first,), _HEADER.finditer(block)) if first else _HEADER.finditer(block)
            while (m := next(matches, None)) is not None:
                start = m.start()
                if block[start] == 10:  # `\n` that precedes a header inside the block
                    start += 1
                if start > pos:
                    line_at += self._gap(block, pos, start, line_at, pending, parts)
                if pending is not None and pending.kind != _BAD:
                    yield _finish(pending, parts)
                parts = []
                self._kept = 0
                pending = self._parse_header(m.group(1), line_at)
                if pending.kind == "dynamo_start":  # where a second process's run starts
                    pending.pid = _pid(block, start)
                pos = self._payload_at = m.end() + 1
                line_at += 1
                if self.shared is not None and self._keeps(pending):
                    known = self.shared.payload_after(self._key, block, pos, _next_header(block))
                    if known is not None:  # another rank's payload, whole: not scanned again
                        gap, lines, following = known
                        self._take(gap, pending, parts)
                        line_at += lines
                        pos += len(gap)
                        matches = chain((following,), _HEADER.finditer(block, following.end())) \
                            if following is not None else iter(())  # fmt: skip
            if pos < len(block):
                line_at += self._gap(block, pos, len(block), line_at, pending, parts)
        if tail[0] not in (b"\n", b"}", b"]"):  # some tlparse test logs end on `}` with no newline
            self._warn("the file ends mid-line: it was cut short (truncated?)", line_at)
        if pending is not None and pending.kind != _BAD:
            yield _finish(pending, parts)

    def _gap(self, block: bytes, pos: int, end: int, line_at: int, pending: Record | None,
             parts: list[bytes]) -> int:  # fmt: skip
        """Keep the payload lines `block[pos:end]` if `pending` wants them; return their count.

        Counting in place (no slice) is what keeps skipped payloads nearly free."""
        keep = pending is not None and self._keeps(pending)
        known = self.shared.gap(block, pos, end) if keep and self.shared is not None else None
        if known is not None:
            gap, lines, tabbed = known
        else:
            gap = block[pos:end] if keep else b""
            lines = block.count(b"\n", pos, end)
            tabbed = block.count(b"\n\t", pos, end) + (block[pos] == 9)
        if keep:
            assert pending is not None
            if self.shared is not None and not parts and pos == self._payload_at:
                self.shared.note_after(self._key, gap, lines, tabbed)
            self._take(gap, pending, parts)
        if pending is None or lines != tabbed:
            self._check_gap(block[pos:end], line_at, pending)
        return lines

    def _take(self, gap: bytes, pending: Record, parts: list[bytes]) -> None:
        """Keep payload lines for `pending`, unless its payload outgrows the cap."""
        self._kept += len(gap)
        if self._kept > self._cap:
            self._warn(f"payload over {self._cap} bytes; record skipped", pending.line)
            pending.kind = _BAD
            parts.clear()
        else:
            parts.append(gap)

    def _read_failed(self, why: str) -> None:
        self._warn(f"{why}; records read so far are kept", None)

    def _keeps(self, record: Record) -> bool:
        return (
            record.kind != _BAD
            and "has_payload" in record.meta
            and (self.payload_kinds is None or record.kind in self.payload_kinds)
        )

    def _check_gap(self, gap: bytes, first_line: int, pending: Record | None) -> None:
        """Payload lines must start with TAB; anything else is a stray line."""
        all_tabbed = gap.count(b"\n") == gap.count(b"\n\t") + (1 if gap.startswith(b"\t") else 0)
        if all_tabbed and (pending is not None or not gap.strip()):
            return
        for offset, text in enumerate(gap.split(b"\n")):
            if not text.strip() or (text.startswith(b"\t") and pending is not None):
                continue
            self._warn(f"not a trace line: {text[:80].decode('utf-8', 'replace')!r}", first_line + offset)

    def _parse_header(self, meta_bytes: bytes, line: int) -> Record:
        """Parse a header; a damaged one becomes a placeholder that swallows its payload lines."""
        shared = self.shared
        if shared is not None:
            self._key, rank = shared.header_key(meta_bytes)
            known = shared.header(self._key, rank)
            if known is not None:
                return Record(known[0], known[1], line, shared=shared)
        try:
            meta = parse_json(meta_bytes.decode())  # str input skips json's encoding sniffing
        except (JsonPayloadError, UnicodeDecodeError):
            self._warn("malformed JSON in trace header; record skipped", line)
            return Record(_BAD, {}, line)
        if not isinstance(meta, dict):
            self._warn("trace header is not a JSON object; record skipped", line)
            return Record(_BAD, {}, line)
        kind = record_kind(meta)
        if shared is not None:
            shared.keep_header(self._key, rank, kind, meta)
        return Record(kind, meta, line, shared=shared)


_PID = re.compile(rb"[VIWEC]\d{4} \S+ +(\d+) ")


def _pid(block: bytes, start: int) -> int | None:
    """The process id glog writes after the time (`V1127 10:47:51.727000 4159 file.py:28]`)."""
    m = _PID.match(block, start)
    return int(m.group(1)) if m else None


def _next_header(block: bytes) -> Callable[[int], re.Match[bytes] | None]:
    """Matches a header line after the newline at a given offset of `block`."""
    return partial(_HEADER.match, block)


def _raw(fh: BinaryIO, size: int) -> Iterator[bytes]:
    while chunk := fh.read(size):
        yield chunk


def _gunzip(fh: BinaryIO, on_error: Callable[[str], None], limits: ReadLimits, size: int) -> Iterator[bytes]:
    """Decompress a `.gz` log as a stream (clusters often keep per-rank traces gzipped).

    zlib directly rather than `gzip.open`: a damaged file still yields every byte decoded before
    the damage (`_decompressed`), concatenated members (appended logs) are read one after
    another, and zero bytes after a member are padding, as gzip(1) reads them."""
    return _decompressed(fh, "gzip", lambda: zlib.decompressobj(wbits=47), zlib.error, on_error, limits, size)


def _unxz(fh: BinaryIO, on_error: Callable[[str], None], limits: ReadLimits, size: int) -> Iterator[bytes]:
    """`_gunzip` for an `.xz` log (how this project keeps its bench logs): concatenated streams,
    and the stream padding (zero bytes in fours) the xz format allows between them."""
    return _decompressed(fh, "xz", lzma.LZMADecompressor, lzma.LZMAError, on_error, limits, size)


Decompressor = Any  # zlib's Decompress or lzma.LZMADecompressor: decompress(data, max_length), eof


def _decompressed(fh: BinaryIO, kind: str, new: Callable[[], Decompressor], error: type[Exception],
                  on_error: Callable[[str], None], limits: ReadLimits,
                  size: int) -> Iterator[bytes]:  # fmt: skip
    """The decompressed bytes of `fh`, member after member, in chunks of at most `size` bytes.

    Bounded: output stops once it outgrows `limits.max_gzip_ratio` times the input read (a bomb).
    Damage: a decompressor that raises loses the output of the call that raised (up to `size`
    bytes: a small log's whole text, once said "not a TORCH_TRACE log"), so the member is decoded
    again from its start up to the piece that failed and that piece a byte at a time
    (`_salvage`): every byte decoded before the damage is kept. Damage costs one more pass over
    the damaged member; an intact file costs nothing more."""
    dec, fed = new(), False
    lo = 0  # start of the input that may hold damage (it ends at `offset`)
    member_at = member_out = 0  # where the current member starts in the file; bytes of it yielded
    offset = out_total = 0  # bytes read from the file; bytes yielded
    while raw := fh.read(BLOCK_SIZE >> 2):
        offset += len(raw)
        while raw or (fed and not dec.eof and not getattr(dec, "needs_input", True)):
            if not fed:
                raw = _after_padding(raw)
                if not raw:
                    break
                member_at, member_out = offset - len(raw), 0
            if raw:  # the input that may hold the damage: this call's (lzma's calls on b"" decode
                lo = offset - len(raw)  # the last input given); zlib may have read a few bits
                lo = max(member_at, lo - 4096)  # of the bytes before `raw` already
            try:
                out = dec.decompress(raw, size)
            except error as exc:
                yield from _salvage(fh, new, error, member_at, lo, offset, member_out, size)
                on_error(f"log ends early ({type(exc).__name__}: {exc})")
                return
            fed = True
            raw = getattr(dec, "unconsumed_tail", b"")  # what zlib held back for max_length (lzma keeps it)
            if out:
                out_total += len(out)
                member_out += len(out)
                if _too_expanded(kind, out_total, offset, limits, on_error):
                    return
                yield out
            if dec.eof:
                raw, dec, fed = dec.unused_data, new(), False
    if fed and not dec.eof:
        on_error("log ends early (EOFError: compressed stream ends before its end marker)")


def _after_padding(raw: bytes) -> bytes:
    """`raw` without the zero bytes that may pad a compressed stream's end (xz stream padding,
    zeros gzip(1) ignores after a member)."""
    return raw.lstrip(b"\0") if raw[:1] == b"\0" else raw


def _salvage(fh: BinaryIO, new: Callable[[], Decompressor], error: type[Exception], member_at: int,
             lo: int, hi: int, skip: int, size: int) -> Iterator[bytes]:  # fmt: skip
    """The member starting at `member_at` decoded again: its input before `lo` in blocks (output
    counted, not kept: `skip` bytes were yielded already), then `lo:hi`, where it failed, a byte at
    a time, yielding what comes after the first `skip` bytes until the decompressor raises."""
    dec = new()
    fh.seek(member_at)
    todo, seen = lo - member_at, 0
    try:
        while todo > 0:
            raw = fh.read(min(todo, BLOCK_SIZE >> 2))
            if not raw:
                return
            todo -= len(raw)
            while raw or not getattr(dec, "needs_input", True):
                out = dec.decompress(raw, size)
                raw = getattr(dec, "unconsumed_tail", b"")
                seen += len(out)
                if seen > skip:  # the failed call's own earlier output
                    yield out[len(out) - (seen - skip):]
                    skip = seen
        for _ in range(hi - lo):
            byte = fh.read(1)
            while byte or not getattr(dec, "needs_input", True):
                out = dec.decompress(byte, size)
                byte = getattr(dec, "unconsumed_tail", b"")
                seen += len(out)
                if seen > skip:
                    yield out[len(out) - (seen - skip):]
                    skip = seen
                if dec.eof:
                    return
    except (error, EOFError, OSError):
        return


def _too_expanded(kind: str, out_total: int, read_in: int, limits: ReadLimits,
                  on_error: Callable[[str], None]) -> bool:  # fmt: skip
    """A compressed log that outgrows `limits.max_gzip_ratio` times its input (a bomb): said, and
    reading stops."""
    if out_total > limits.gzip_ratio_floor and out_total > limits.max_gzip_ratio * read_in:
        on_error(f"{kind} data expands more than {limits.max_gzip_ratio:g}x (a {kind} bomb?); "
                 f"stopped after {out_total >> 20} MiB")  # fmt: skip
        return True
    return False


def _finish(record: Record, parts: list[bytes]) -> Record:
    if parts:
        record.raw_payload = parts[0] if len(parts) == 1 else b"".join(parts)
    return record


def _last_byte(chunks: Iterator[bytes], last: list[bytes]) -> Iterator[bytes]:
    """Pass `chunks` through, keeping the final byte seen in `last[0]`."""
    for chunk in chunks:
        if chunk:
            last[0] = chunk[-1:]
        yield chunk


@dataclass(frozen=True, slots=True)
class _Overlong:
    """Stands for one line over the cap, dropped unread; `first` is its first byte."""

    first: bytes


def _blocks(chunks: Iterator[bytes], cap: int) -> Iterator[bytes | _Overlong]:
    """Yield blocks that end on a line boundary (a long line is joined once, not repeatedly).

    A line longer than `cap` is never held whole: once the carried part passes the cap it is
    dropped and the rest of the line skipped up to its newline, then `_Overlong` takes its place.
    Chunks are at most `cap` bytes, so a line within one chunk is within the cap."""
    carry: list[bytes] = []
    carried = 0
    skipping = b""  # first byte of the over-long line being skipped
    for chunk in chunks:
        if skipping:
            cut = chunk.find(b"\n")
            if cut < 0:
                continue
            yield _Overlong(skipping)
            skipping, chunk = b"", chunk[cut + 1 :]
        cut = chunk.rfind(b"\n")
        if cut < 0:
            carry.append(chunk)
            carried += len(chunk)
            if carried > cap:
                skipping, carry, carried = carry[0][:1] or b" ", [], 0
            continue
        head, tail = chunk[: cut + 1], chunk[cut + 1 :]
        if carry:
            first_end = head.find(b"\n")
            if carried + first_end > cap:
                yield _Overlong(carry[0][:1] or b" ")
                head = head[first_end + 1 :]
            else:
                carry.append(head)
                head = b"".join(carry)
            carry, carried = [], 0
        if head:
            yield head
        if tail:
            carry, carried = [tail], len(tail)
    if skipping:
        yield _Overlong(skipping)
    elif carry:
        yield b"".join(carry) + b"\n"


def read_records(path: str, payload_kinds: frozenset[str] | None = None,
                 limits: ReadLimits | None = None) -> Iterator[Record]:  # fmt: skip
    """Convenience: iterate records of `path`, dropping diagnostics."""
    return iter(RecordReader(path, payload_kinds, limits=limits or ReadLimits()))
