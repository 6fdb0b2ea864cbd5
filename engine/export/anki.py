"""The lesson's quiz items as an Anki deck (genanki): stable deck, model and note ids, so a newer
export updates the same cards.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import itertools
import random
import sqlite3
import tempfile
import zipfile
import zlib
from pathlib import Path

from engine.export.notes import APKG_OWNER_PREFIX, now_utc
from engine.i18n import gettext as _
from engine.lesson import Lesson


def _stable_id(name: str) -> int:
    """An id for an Anki model or deck that is the same in every export (genanki asks for ids
    between 2^30 and 2^31)."""
    return (1 << 30) + zlib.crc32(name.encode("utf-8")) % (1 << 30)


ANKI_MODEL_ID = _stable_id("shardbook/quiz-card/1")


ANKI_FIELDS = ("Question", "Answer", "Sources", "Item")


_CARD_STYLE = (
    ".card { font-family: system-ui, sans-serif; font-size: 18px; text-align: left; "
    "color: #1d1d1f; background: #fff; } .sources { font-size: 13px; color: #666; }"
)


def anki_deck_id(lesson_id: str) -> int:
    """The deck id of lesson ``lesson_id``'s cards (the same in every export)."""
    return _stable_id(f"shardbook/deck/{lesson_id}")


def _card_html(text: str) -> str:
    return html.escape(text).replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def anki_cards(lesson: Lesson) -> list[dict[str, str]]:
    """The lesson's quiz items as cards: ``id`` (the quiz item id), ``kind``, ``question`` and
    ``answer`` (plain text), ``sources``. A drill is asked with fixed numbers (seeded by its id),
    so the card is the same in every export; the app's quiz draws new numbers each time."""
    from engine.quiz import ask, lesson_items  # fsrs loads only for this format

    cards: list[dict[str, str]] = []
    for item in lesson_items(lesson):
        question = ask(item, lesson, random.Random(f"{lesson.id}/{item.id}"))
        prompt = question.prompt
        if question.answer_kind == "choice":
            options = "\n".join(
                f"{'abcd'[index]}) {option}" for index, option in enumerate(question.options)
            )
            prompt = f"{prompt}\n{options}"
        elif question.answer_kind == "true-false":
            prompt = f"{prompt}\n\n" + _("True or false?")
        elif question.answer_kind == "number":
            prompt = f"{prompt}\n\n" + _(
                "(Fixed numbers; the app's quiz draws new ones each time.)"
            )
        expected = question.expected_text()
        answer = f"{expected}\n\n{question.solution}" if expected else question.solution
        cards.append(
            {
                "id": item.id,
                "kind": item.kind,
                "question": prompt,
                "answer": answer,
                # As the quiz shows them: a work's description in the language, its
                # separator the language's.
                "sources": _("; ").join(_(source) for source in question.sources),
            }
        )
    return cards


def export_anki(lesson: Lesson, now: dt.datetime | None = None) -> bytes:
    """The lesson's quiz items as an Anki package (``.apkg``: a zip holding the SQLite
    collection ``collection.anki2`` and a ``media`` map), built with genanki; the zip comment
    names the lesson (:func:`notes_owner`)."""
    import genanki  # loaded only for this format

    model = genanki.Model(
        ANKI_MODEL_ID,
        "shardbook quiz card",
        fields=[{"name": name} for name in ANKI_FIELDS],
        templates=[
            {
                "name": "Card 1",
                "qfmt": "{{Question}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Answer}}'
                '<div class="sources">{{Sources}}</div>',
            }
        ],
        css=_CARD_STYLE,
    )
    deck = genanki.Deck(anki_deck_id(lesson.id), f"shardbook::{lesson.id} {lesson.title}")
    for card in anki_cards(lesson):
        deck.add_note(
            genanki.Note(
                model=model,
                fields=[
                    _card_html(card["question"]),
                    _card_html(card["answer"]),
                    _card_html(card["sources"]),
                    html.escape(card["id"]),
                ],
                tags=[lesson.id, card["kind"]],
                guid=genanki.guid_for("shardbook", lesson.id, card["id"]),
            )
        )
    timestamp = now_utc(now).timestamp()
    # genanki's own write_to_file leaves its temporary database behind; this one is removed.
    with tempfile.TemporaryDirectory(prefix="shardbook-anki-") as folder:
        database = Path(folder) / "collection.anki2"
        connection = sqlite3.connect(database)
        try:
            genanki.Package(deck).write_to_db(
                connection.cursor(), timestamp, itertools.count(int(timestamp * 1000))
            )
            connection.commit()
        finally:
            connection.close()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
            package.write(database, "collection.anki2")
            package.writestr("media", "{}")
            package.comment = APKG_OWNER_PREFIX + lesson.id.encode("utf-8")
    return buffer.getvalue()
