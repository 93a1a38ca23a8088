"""Text from sessions, logs and models is shown as text, never as markup.

Qt guesses: a QLabel, a QMessageBox and every tooltip render their string as HTML when it *looks*
like HTML (`Qt::mightBeRichText`). A session naming a device `<img src="/dev/zero">` would make the
GUI thread read /dev/zero until memory ran out, and `<a href=file:///etc/passwd>` would render as
a link. So the GUI never lets Qt guess about data:

- `plain_label()` is the only way the explorer makes a QLabel: its format is `PlainText`, fixed
  before any text is set. (`tests/security/test_plain_text.py` walks every QLabel of the real
  window and fails on any other.)
- `tip()` is the only way data reaches a tooltip: it escapes and wraps the text itself (as Qt's
  `convertFromPlainText` does), so the tooltip is rich text whose only markup is ours.
- `rich()` builds a label's markup from a template of ours with every data value escaped, for
  the few labels that want bold.
- `show_problem()` reports an error in a plain-text, non-modal message box, clipped by `clip()`:
  an exception message can be 300 MB.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

MAX_SHOWN = 2000  # characters of one message / tooltip; the rest is cut with a note
MAX_LINES = 40


def clip(text: object, limit: int = MAX_SHOWN, max_lines: int = MAX_LINES) -> str:
    """`str(text)` cut to `limit` characters and `max_lines` lines, saying how much was cut."""
    try:
        s = str(text)
    except Exception as exc:  # an exception whose __str__ raises
        s = f"<unprintable {type(text).__name__}: str() raised {type(exc).__name__}>"
    cut = s[:limit]
    lines = cut.split("\n")
    if len(lines) > max_lines:
        cut = "\n".join(lines[:max_lines])
    if len(cut) < len(s):
        cut += f"\n… ({len(s) - len(cut):,} more characters not shown)"
    return cut


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel that shows its text verbatim, whatever the text looks like."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def tip(text: object) -> str:
    """A tooltip string that shows `text` verbatim (escaped; line breaks and spacing kept)."""
    s = clip(text)
    return f"<p style='white-space:pre'>{escape(s, quote=False).replace(chr(10), '<br>')}</p>" if s else ""


def rich(template: str, **values: object) -> str:
    """`template` (our markup) with every value HTML-escaped: `rich("<b>{op}</b>", op=data)`."""
    return template.format(**{k: escape(clip(v, 500), quote=True) for k, v in values.items()})


def rich_label(parent: QWidget | None = None) -> QLabel:
    """A label for `rich()` text only; marked so the plain-text test knows the markup is ours."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setProperty("escapedRichText", True)
    label.setOpenExternalLinks(False)
    return label


def show_problem(parent: QWidget, title: str, text: str) -> QMessageBox:
    """A non-modal warning whose text is shown verbatim (clipped); the window stays usable."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, "", QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(clip(text))
    box.setObjectName("problemBox")
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
