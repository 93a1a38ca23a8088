"""Text from a log or a session, made safe to print on a terminal.

A rank file's name, a log line or a diagnostic quoting one can hold control characters: an ANSI
escape sequence (`\\x1b[2J` clears the screen, `\\x1b]8;;` makes a link, some terminals answer
queries with keystrokes), a carriage return that writes over the line before, Unicode's bidi
overrides that show text in another order. The CLI prints such text through `shown`: each of
those characters is written as its escape (`\\x1b`, `\\u202e`), so what is printed is what the
file holds and nothing acts on the terminal. Newlines and tabs stay.
"""

from __future__ import annotations

import re

# C0 controls but \t and \n, DEL, C1 controls; line/paragraph separators; bidi embeddings,
# overrides and isolates
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: object) -> str:
    """`text` as printable: control characters written as escapes."""
    return _UNSAFE.sub(_escape, str(text))
