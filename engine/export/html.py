"""The notes as one web page: the Markdown rendered by markdown-it-py (CommonMark), the learner's
text HTML-escaped, an inline style sheet, no script or external file.

A control character pasted into an answer (ESC from a terminal's colour codes, a stray BEL) is
written as its Unicode control picture, U+2400 + its code (ESC is U+241B; DEL, U+2421): HTML
forbids those characters (the parse error control-character-in-input-stream, WHATWG HTML,
"Preprocessing the input stream") and a browser draws nothing for them, so the learner could
not see what was pasted. Tab and newline stay; the Markdown, JSON and YAML exports keep the text
byte for byte.
"""

from __future__ import annotations

import datetime as dt
import html

from engine.export.markdown import notes_body
from engine.export.notes import now_utc
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.progress import (
    LessonProgress,
)
from engine.timefmt import utc_iso

# Every C0 control but tab and newline, and DEL, to its control picture (see module docstring).
_CONTROL_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\t\n"},
    0x7F: 0x2421,
}

_PAGE_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #1d1d1f; background: #fff; }
blockquote { margin: 0.5rem 0; padding: 0.25rem 1rem; border-left: 4px solid #5b8def;
             background: #f3f6fd; }
blockquote p { white-space: pre-wrap; margin: 0.25rem 0; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #c8c8cc; padding: 0.2rem 0.6rem; }
td { font-variant-numeric: tabular-nums; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ddd; margin-top: 2rem; }
"""


def export_html(lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None) -> str:
    """The notes as one self-contained HTML page: :func:`notes_body` rendered by markdown-it-py
    (CommonMark plus tables; raw HTML is not passed through, so every ``<`` of the learner's is
    escaped), with an inline style sheet and no script or external resource. A C0 control
    character other than tab and newline is shown as its control picture (module docstring)."""
    from markdown_it import MarkdownIt  # loaded only for this format

    moment = now_utc(now)
    body = (
        MarkdownIt("commonmark", {"html": False})
        .enable("table")
        .render(notes_body(lesson, progress, moment))
    )
    # The learner's spaces are kept (white-space: pre-wrap), so a line break is the <br> alone.
    body = body.replace("<br />\n", "<br />")
    # As the notes' first heading says it, in the interface language.
    title = html.escape(
        " ".join(_("{lesson} notes: {title}").format(lesson=lesson.id, title=lesson.title).split())
    )
    owner = html.escape(lesson.id)
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="zh">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="shardbook-lesson" content="{owner}">\n'
        f'<meta name="shardbook-exported" content="{utc_iso(moment)}">\n'
        f"<title>{title}</title>\n<style>{_PAGE_STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )
    return page.translate(_CONTROL_PICTURES)
