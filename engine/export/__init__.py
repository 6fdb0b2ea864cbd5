"""Export the learner's filled-in notes for a lesson: Markdown, JSON, HTML, or an Anki deck.

The notes follow the lesson's order: its exercises (exercise 1's memory ledger as a table, the notes
of exercises 2 to 5 beside the engine's answers), the self-check answers with the key points the
learner revealed, the reflection fields, then a summary of the spaced review. Each section of the
lesson that has notes is rendered by one function of :data:`engine.export.markdown._SECTION_NOTES`,
keyed by the section id or kind; a section without one is left out. The learning objectives appear
with the learner's ratings once any is rated; the readings (items with links, such as the course
alignment) with their links. Each exercise note the engine has an answer to says whether it was
written before looking at that answer or after the learner chose to look first.

- Markdown (``md``) starts with YAML front matter written by the safe YAML dumper (so a title with
  a colon, or a value such as ``no``, round-trips). The learner's text is rendered literally by
  any CommonMark renderer: each answer is a blockquote whose Markdown characters are
  backslash-escaped and whose line breaks are hard breaks (:func:`engine.lesson.escape_markdown`),
  so a line ``---`` or ``# x`` stays a line of text, never a rule, a heading or a list.
- JSON (``json``): the same notes as one object (:func:`export_data`), sizes in bytes.
- HTML (``html``): the Markdown body rendered by markdown-it-py (CommonMark, raw HTML off, so the
  learner's ``<`` is escaped) into one self-contained page (no script, no external file).
- Anki (``anki``): the lesson's quiz items (:func:`engine.quiz.lesson_items`) as an ``.apkg``
  deck written with genanki. Model and deck ids and each note's GUID are derived from the lesson
  and item ids, so importing a newer export updates the cards instead of adding copies.

The package, one format a module: :mod:`~engine.export.notes` (what an export holds),
:mod:`~engine.export.markdown`, :mod:`~engine.export.html`, :mod:`~engine.export.anki` and
:mod:`~engine.export.files` (writing them). genanki and markdown-it-py load with the package,
which the app imports only when the learner exports.
"""

from engine.export.anki import (
    ANKI_FIELDS,
    ANKI_MODEL_ID,
    anki_cards,
    anki_deck_id,
    export_anki,
)
from engine.export.files import (
    NotesConflict,
    export_bytes,
    export_path,
    export_text,
    notes_owner,
    safe_file_name,
    write_export,
)
from engine.export.html import (
    export_html,
)
from engine.export.markdown import (
    QUIZ_HEADING,
    export_markdown,
    learner_markdown,
    notes_body,
    split_front_matter,
)
from engine.export.notes import (
    EXERCISE1_COLUMNS,
    EXTENSIONS,
    FORMAT_DESCRIPTIONS,
    FORMATS,
    LEDGER_INPUTS,
    NOT_ANSWERED,
    exercise1_figures,
    export_data,
    ledger_inputs,
    quiz_summary,
)

__all__ = [
    "ANKI_FIELDS",
    "ANKI_MODEL_ID",
    "EXERCISE1_COLUMNS",
    "EXTENSIONS",
    "FORMATS",
    "FORMAT_DESCRIPTIONS",
    "LEDGER_INPUTS",
    "NOT_ANSWERED",
    "QUIZ_HEADING",
    "NotesConflict",
    "anki_cards",
    "anki_deck_id",
    "exercise1_figures",
    "export_anki",
    "export_bytes",
    "export_data",
    "export_html",
    "export_markdown",
    "export_path",
    "export_text",
    "learner_markdown",
    "ledger_inputs",
    "notes_body",
    "notes_owner",
    "quiz_summary",
    "safe_file_name",
    "split_front_matter",
    "write_export",
]
