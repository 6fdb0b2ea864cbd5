"""Line breaking for mixed Chinese and Latin text, as the reader draws it.

Where a line may end comes from the Unicode line-breaking algorithm (UAX #14, "Unicode Line
Breaking Algorithm", https://www.unicode.org/reports/tr14/), computed by the ``uniseg`` library,
and tailored (UAX #14 §8 allows tailoring) by one rule of ours:

- no break inside a run of Latin letters, digits and the joiners inside identifiers (``-``, ``/``,
  ``.``, ``_``) unless the run is wider than the line: ``reduce-scatter``, ``FSDP/ZeRO``,
  ``T_comm_unhidden`` and ``7.5B`` stay whole, although UAX #14 allows a break after ``-`` and
  ``/``. "Latin" here means any letter or digit that is not East Asian wide (Greek ``Ψ`` and
  Cyrillic too), with its combining marks. A URL (``https://dlsyscourse.org/lectures/``, RFC 3986
  characters after ``scheme://``, without the punctuation that ends a sentence after it) is one
  run too, its ``:``, ``?``, ``=`` and ``&`` included;
- no line starts with closing punctuation (``。，、；：！？）」』``, UAX #14 classes CL, CP, EX, IS,
  NS, and closing quotes) or ends with opening punctuation (class OP and opening quotes).
  UAX #14 already forbids most of these breaks; the rule also holds where a run wider than the
  line has to be split between two characters;
- no line starts with the separator ``·`` between the parts of a line (``start not rated · end
  not rated``): it stays at the end of the line with the word before it (UAX #14 gives it class
  AI, read as a letter, after which a space allows a break);
- no break inside a Chinese word of two characters set apart by a space on at least one side
  (and on the other a space, punctuation or Latin text: ``未评`` in ``开始 未评 · 结束 未评`` and in
  ``：未评 -> 未评；``, ``练习 4-5``), where it fits: UAX #14 allows a break between any two
  ideographs, which split such a word (a mark, a label) in two. Running Chinese text
  (``、参数、``) breaks between any two characters, as Chinese is set;
- a break before an opening quotation mark ``“`` or ``‘`` right after an East Asian character,
  and after a closing one ``”`` or ``’`` right before one, whatever is inside the quotes
  (``、“hidden 维度 h”、“head 数 a”``): UAX #14 gives the quotes class QU, and from Unicode 15.1
  (UAX #14 revision 51, rule LB19a) allows a break beside one only where East Asian characters
  are on both sides of it, so a quoted label starting or ending with a Latin word glued the
  whole list to the line before, with half a line empty. Chinese uses ``“ ”`` as opening and
  closing punctuation only; ICU tailors line breaking for zh and ja the same way (its
  ``line_cj`` rules: "allows breaking before 201C and after 201D");
- no break between a reference word and its number (``Figure 1``, ``Table 2``, ``Eq. 7``,
  ``Sec. 7``, ``App. B``), where it fits: the number alone at the start of a line reads as a new
  figure;
- no break between a number and its unit (``50 GB/s``, ``80 GiB``, ``8 GPUs``, ``8 张 GPU``,
  ``12 ms``) or between a one-letter symbol and its value (``h 2048``, ``p 4``), where it fits:
  the unit or the value alone at the start of a line reads as a new quantity.

Lines are filled greedily. A piece between two break opportunities that is wider than the line
by itself is split between grapheme clusters (never inside one), so every line fits except one
made of a single character wider than the line (a wide character on a one-column line).

Widths are terminal cells as ``rich.cells.cell_len`` counts them: that is the measure Textual
lays out and crops with, so a line measured to fit here is never cut when drawn. (Rich is a
dependency of the app; this module imports nothing from Textual.) Spaces at the end of a line
hang: they do not count towards its width, and they stay on the line, so joining the lines gives
back the text exactly.
"""

from __future__ import annotations

import bisect
import contextlib
import importlib.util
import itertools
import json
import os
import re
import string
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final

from rich.cells import cell_len

from engine.paths import cache_dir, content_key

JOINERS: Final = frozenset("-/._")
# UAX #14 class GL ("glue"): no break before or after it (LB12, LB12a).
NO_BREAK_SPACE: Final = "\u00a0"
# Words (any script's letters and digits, with the joiners) glued by NO-BREAK SPACEs: a name such
# as a field's label with its symbol, kept on one line like a word run (see :func:`unbreakable`).
# An arrow's ``->`` is a word here, so that two values glued around it stay whole: in F11's
# ``还不能 -> 部分能`` each is a word of three ideographs, which UAX #14 would break anywhere.
# So is the mark ``▸`` on a focused rating's phase word (``▸结束 部分能``): never alone at a
# line's end.
# A match starts where a word starts (the look-behind): the same matches, found in time that grows
# with the text, not with the square of its longest word.
_GLUED: Final = re.compile(r"(?<![\w\-/.>▸])(?:[\w\-/.>▸]+\u00a0)+[\w\-/.>▸]+")
# The separator between the parts of a line: never the first character of one.
SEPARATOR: Final = "·"
# CJK unified ideographs (and their extension A and compatibility block).
_IDEOGRAPH: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


# A word of two ideographs with none beside it, and a space (or the text's edge) on one side.
# Compiled when an analysis first needs it: its ranges of ideographs take about 5 ms to compile,
# and with the analysis cache warm the first frame needs none.
@lru_cache(maxsize=1)
def _two_ideographs() -> re.Pattern[str]:
    return re.compile(
        rf"(?:(?<![^ ])[{_IDEOGRAPH}]{{2}}(?![{_IDEOGRAPH}])"
        rf"|(?<![{_IDEOGRAPH}])[{_IDEOGRAPH}]{{2}}(?![^ ]))"
    )


# A reference word of a paper and its number or letter (Figure 1, Table 2, Eq. 7, App. B);
# compiled when an analysis first needs it, as the pattern above.
@lru_cache(maxsize=1)
def _reference() -> re.Pattern[str]:
    return re.compile(
        r"\b(?:Figure|Fig\.|Table|Eq\.|Eqs\.|Equation|Section|Sec\.|Appendix|App\.|Algorithm) "
        r"(?:[0-9][0-9.]*[0-9]|[0-9]|[A-Z]\b)"
    )


# A number and its unit (50 GB/s, 80 GiB, 8 GPUs, 8 张 GPU, 12 ms), or a one-letter symbol and
# its value (h 2048); compiled when an analysis first needs it, as the patterns above.
@lru_cache(maxsize=1)
def _quantity() -> re.Pattern[str]:
    number = r"[0-9](?:[0-9.,]*[0-9])?(?:[eE][+-]?[0-9]+)?"
    unit = r"(?:[KMGTP]i?B(?:/s)?|[KMGT]b/s|B|FLOP/s|ms|us|µs|ns|s|GPUs?|张 GPU|张|倍)"
    return re.compile(rf"(?<![\w.]){number} {unit}(?![\w/])|(?<![\w.])[A-Za-z] {number}(?![\w.])")


# A URL: a scheme, ``://``, then RFC 3986's characters (brackets, parentheses, quotes and commas
# left out: they close a sentence around a link more often than they belong to it), not ending
# with the punctuation that ends a sentence.
# Found from each ``://`` (:func:`_url_spans`): a pattern that looks for the scheme first tries
# every letter of a long word as a scheme's start, in time that grows with the word's square.
_SCHEME_LETTERS: Final = frozenset(string.ascii_letters)
_SCHEME_CHARACTERS: Final = _SCHEME_LETTERS | frozenset(string.digits + "+.-")
_URL_AFTER_SCHEME: Final = re.compile(r"://[A-Za-z0-9\-._~:/?#@!$&*+;=%]*[A-Za-z0-9\-_~/#=&%+]")


def _url_spans(text: str) -> list[tuple[int, int, int]]:
    """Each URL of ``text`` as ``(start, separator, end)``: its scheme starts at ``start``, its
    ``://`` at ``separator``, and it ends before ``end``. The scheme is the longest run of
    letters, digits, ``+``, ``.`` and ``-`` before the ``://`` that starts with a letter (RFC
    3986, section 3.1), within the text after the URL before it."""
    spans: list[tuple[int, int, int]] = []
    searched = 0  # where the next URL may start: after the last one
    while (separator := text.find("://", searched)) >= 0:
        start = separator
        while start > searched and text[start - 1] in _SCHEME_CHARACTERS:
            start -= 1
        while start < separator and text[start] not in _SCHEME_LETTERS:
            start += 1
        tail = _URL_AFTER_SCHEME.match(text, separator)
        if start == separator or tail is None:
            searched = separator + 1
            continue
        spans.append((start, separator, tail.end()))
        searched = tail.end()
    return spans


@lru_cache(maxsize=1)
def _punctuation_classes() -> tuple[frozenset[Any], frozenset[Any]]:
    """UAX #14 classes that may not start a line (§6.1, LB13 and LB21) and that may not end one
    (LB14). uniseg is imported on first use: with the analysis cache warm, the first frame does
    not need it."""
    from uniseg.linebreak import LineBreak

    closing = frozenset({LineBreak.CL, LineBreak.CP, LineBreak.EX, LineBreak.IS, LineBreak.NS})
    return closing, frozenset({LineBreak.OP})


def is_closing(char: str) -> bool:
    """Whether ``char`` is closing punctuation: a line may not start with it (``。``, ``，``,
    ``）``, ``」``, ``：``, ``！``, ``,``, ``)``, a closing quote ``”``)."""
    from uniseg.linebreak import line_break

    closing = _punctuation_classes()[0]
    return line_break(char) in closing or unicodedata.category(char) in ("Pe", "Pf")


def is_opening(char: str) -> bool:
    """Whether ``char`` is opening punctuation: a line may not end with it (``（``, ``「``,
    ``(``, an opening quote ``“``)."""
    from uniseg.linebreak import line_break

    opening = _punctuation_classes()[1]
    return line_break(char) in opening or unicodedata.category(char) in ("Ps", "Pi")


def _ends_opening(text: str, end: int) -> bool:
    """Whether ``text[:end]``, spaces at its end aside (they hang), ends with opening
    punctuation."""
    visible = text[:end].rstrip(" ")
    return bool(visible) and is_opening(visible[-1])


def _is_word_char(char: str) -> bool:
    if char in JOINERS:
        return True
    if unicodedata.category(char).startswith("M"):
        return True  # a combining mark belongs to the letter before it
    return char.isalnum() and unicodedata.east_asian_width(char) not in ("W", "F")


def word_runs(text: str) -> list[tuple[int, int]]:
    """The runs of Latin letters, digits and joiners in ``text``, and its URLs, as
    ``(start, end)`` indices (end exclusive), in order. A run may start or end with a joiner
    (``rank.``)."""
    in_url = {index for start, _separator, end in _url_spans(text) for index in range(start, end)}
    runs: list[tuple[int, int]] = []
    start = -1
    for index, char in enumerate(text):
        if index in in_url or _is_word_char(char):
            if start < 0:
                start = index
        elif start >= 0:
            runs.append((start, index))
            start = -1
    if start >= 0:
        runs.append((start, len(text)))
    return runs


Analysis = tuple[tuple[int, ...], tuple[tuple[int, int, int], ...]]

# The analyses on disk (ANALYSIS_CACHE_FILE in engine.paths.cache_dir()), keyed by a hash of the
# text: UAX #14 in pure Python takes about 0.1 ms a character, and the first frame breaks the
# lesson's first section (tens of ms, and uniseg's import). Bump the version when what
# _analysis returns changes; a new uniseg (its file's size and mtime) empties the cache too.
ANALYSIS_CACHE_FILE: Final = "linebreak.json"
ANALYSIS_CACHE_VERSION: Final = 9
ANALYSIS_CACHE_ENTRIES: Final = 20_000
_disk: dict[str, Any] | None = None
_disk_changed = False


def _library_stamp() -> list[int]:
    spec = importlib.util.find_spec("uniseg")
    if spec is None or spec.origin is None:
        return []
    info = os.stat(spec.origin)
    return [info.st_mtime_ns, info.st_size]


def _disk_cache() -> dict[str, Any]:
    global _disk
    if _disk is None:
        _disk = {}
        with contextlib.suppress(OSError, ValueError):
            data = json.loads((cache_dir() / ANALYSIS_CACHE_FILE).read_text(encoding="utf-8"))
            if (
                isinstance(data, dict)
                and data.get("version") == ANALYSIS_CACHE_VERSION
                and data.get("library") == _library_stamp()
                and isinstance(data.get("entries"), dict)
            ):
                _disk = data["entries"]
    return _disk


def _from_disk(entry: object) -> Analysis | None:
    """A cached entry as :func:`_analysis` returns it; None when its shape is wrong."""
    if not isinstance(entry, list) or len(entry) != 2:
        return None
    positions, runs = entry
    try:
        result = (
            tuple(int(position) for position in positions),
            tuple((int(start), int(end), int(width)) for start, end, width in runs),
        )
    except (TypeError, ValueError):
        return None
    return result


def save_analysis_cache() -> None:
    """Write the analyses computed since the cache was read (atomically; the newest
    :data:`ANALYSIS_CACHE_ENTRIES` are kept). A cache that cannot be written costs the next
    start its analyses, nothing else."""
    global _disk_changed
    if _disk is None or not _disk_changed:
        return
    _disk_changed = False
    entries = dict(list(_disk.items())[-ANALYSIS_CACHE_ENTRIES:])
    data = {"version": ANALYSIS_CACHE_VERSION, "library": _library_stamp(), "entries": entries}
    path = cache_dir() / ANALYSIS_CACHE_FILE
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


@lru_cache(maxsize=4096)
def _analysis(text: str) -> Analysis:
    """UAX #14 break positions of ``text`` (with the punctuation rule applied) and its word runs
    with their widths. Cached in memory (the reader breaks the same paragraphs again on every
    resize) and on disk (:func:`save_analysis_cache`)."""
    global _disk_changed
    key = content_key(text.encode("utf-8", "surrogatepass"))
    disk = _disk_cache()
    cached = _from_disk(disk.get(key))
    if cached is not None:
        return cached
    result = _analyse(text)
    disk[key] = [list(result[0]), [list(run) for run in result[1]]]
    _disk_changed = True
    return result


# Quotation marks (UAX #14 class QU) that open and close a quote in Chinese text.
_OPENING_QUOTES: Final = frozenset("\u201c\u2018")
_CLOSING_QUOTES: Final = frozenset("\u201d\u2019")


def _east_asian(char: str) -> bool:
    """UAX #14's $EastAsian (revision 51, LB19a): East Asian Width F, W or H."""
    return unicodedata.east_asian_width(char) in ("F", "W", "H")


def _quote_break(text: str, index: int) -> bool:
    """The East Asian tailoring of LB19/LB19a (module docstring): a break before ``text[index]``
    when it is an opening quote after an East Asian character, or when ``text[index - 1]`` is a
    closing quote and ``text[index]`` an East Asian character."""
    before, after = text[index - 1], text[index]
    return (after in _OPENING_QUOTES and _east_asian(before)) or (
        before in _CLOSING_QUOTES and _east_asian(after)
    )


def _analyse(text: str) -> Analysis:
    from uniseg.linebreak import line_break_breakables

    breakables = list(line_break_breakables(text))
    positions: list[int] = []
    opening_before = False  # the last character before here that is not a space is opening
    for index in range(1, len(text)):
        if text[index - 1] != " ":
            opening_before = is_opening(text[index - 1])
        if (
            (breakables[index] or _quote_break(text, index))
            and not is_closing(text[index])
            and not opening_before
            and text[index] != SEPARATOR
        ):
            positions.append(index)
    glued = [
        *_GLUED.finditer(text),
        *_two_ideographs().finditer(text),
        *_reference().finditer(text),
        *_quantity().finditer(text),
    ]
    spans = sorted([*word_runs(text), *(match.span() for match in glued)])
    runs = tuple((start, end, cell_len(text[start:end])) for start, end in spans)
    return tuple(positions), runs


def _url_heads(text: str) -> set[int]:
    """Positions inside each URL's ``scheme://`` and right after it: never a line's end."""
    heads: set[int] = set()
    for start, separator, _end in _url_spans(text):
        heads.update(range(start + 1, separator + 4))
    return heads


def _inside_fitting_runs(text: str, width: int) -> set[int]:
    inside: set[int] = set()
    for start, end, run_width in _analysis(text)[1]:
        if run_width <= width:
            inside.update(range(start + 1, end))
    return inside


def break_positions(text: str, width: int) -> list[int]:
    """Indices where a line may end in ``text`` on a line ``width`` cells wide: UAX #14's
    opportunities, less those inside a word run that fits the line and those that would start a
    line with closing punctuation or end one with opening punctuation (see module docstring)."""
    inside = _inside_fitting_runs(text, width) | _url_heads(text)
    return [position for position in _analysis(text)[0] if position not in inside]


def _visible_width(text: str) -> int:
    return cell_len(text.rstrip(" "))


def _force_split(
    piece: str, width: int, opportunities: set[int], in_runs: set[int], heads: set[int]
) -> list[str]:
    """``piece`` (a line begun, then a part with no allowed break that is wider than ``width``
    by itself) cut into lines that fit. Each cut is the farthest that fits outside the word runs
    that fit the line (in ``in_runs``); inside them, at ``opportunities`` (UAX #14 breaks, such
    as after the ``-`` of ``all-reduce`` when ``all-reduce、`` is too wide); else between any
    grapheme clusters. Never before closing punctuation or a space, nor after opening
    punctuation, nor inside a URL's ``scheme://`` (``heads``, found in the whole text: the piece
    alone may show a URL that is only the tail of a longer one), where another cut fits."""
    from uniseg.graphemecluster import grapheme_cluster_boundaries

    clusters = [0, *grapheme_cluster_boundaries(piece)]  # where each grapheme cluster ends
    lines: list[str] = []
    start = 0
    while True:
        # The cuts after ``start`` that fit, in order: a line's visible width only grows with
        # its end, so the first cut too wide ends them. Looking no further keeps a line's cost
        # to its own length (over the whole piece, a 20,000-character word took minutes).
        first = bisect.bisect_right(clusters, start)
        fitting = []
        for cut in itertools.islice(clusters, first, None):
            if _visible_width(piece[start:cut]) > width:
                break
            fitting.append(cut)
        else:  # the rest of the piece fits
            break
        if not fitting:  # one cluster wider than the line: it gets a line of its own
            fitting = [clusters[first]]
        punctuation_kept = [
            cut
            for cut in fitting
            if cut == len(piece)
            or (piece[cut] != " " and not is_closing(piece[cut]) and not _ends_opening(piece, cut))
        ]
        # A URL's scheme and ``://`` stay together, unless they alone are wider than the line.
        allowed = [cut for cut in punctuation_kept if cut not in heads]
        outside = [cut for cut in allowed if cut not in in_runs]
        in_opportunities = [cut for cut in allowed if cut in opportunities]
        choices = (outside, in_opportunities, allowed, punctuation_kept, fitting)
        cut = next(choice for choice in choices if choice)[-1]
        while cut < len(piece) and piece[cut] == " ":  # spaces hang at the end of the line
            cut += 1
        lines.append(piece[start:cut])
        start = cut
        if start == len(piece):
            return lines
    lines.append(piece[start:])
    return lines


def break_paragraph(text: str, width: int) -> list[str]:
    """``text`` (one paragraph, no line break in it) as lines of at most ``width`` cells.

    ``"".join(result) == text``; spaces where a line ends stay at its end and do not count
    towards its width. An empty text is one empty line.

    Raises:
        ValueError: ``text`` holds a line break (use :func:`break_text`), or ``width`` < 1.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1 cell, not {width}")
    if "\n" in text or "\r" in text:
        raise ValueError("break_paragraph takes one paragraph; use break_text for line breaks")
    if _visible_width(text) <= width:
        return [text]
    bounds = [0, *break_positions(text, width), len(text)]
    opportunities = _analysis(text)[0]
    in_runs = _inside_fitting_runs(text, width)
    heads = _url_heads(text)
    lines: list[str] = []
    line = ""
    for start, end in itertools.pairwise(bounds):
        piece = text[start:end]
        if _visible_width(line + piece) <= width:
            line += piece
        elif _visible_width(piece) <= width:
            lines.append(line)
            line = piece
        else:
            # Wider than a line by itself: cut it, filling the line begun before it first.
            begin = start - len(line)
            *full, line = _force_split(
                text[begin:end],
                width,
                {cut - begin for cut in opportunities if begin < cut < end} | {start - begin},
                {cut - begin for cut in in_runs if begin < cut < end},
                {cut - begin for cut in heads if begin < cut < end},
            )
            lines.extend(full)
    lines.append(line)
    return lines


def break_text(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` cells: each of its own lines (split at ``\\n``,
    ``\\r\\n`` or ``\\r``) broken by :func:`break_paragraph`; an empty line stays empty.

    Raises:
        ValueError: ``width`` < 1.
    """
    lines: list[str] = []
    for paragraph in normalize_newlines(text).split("\n"):
        lines.extend(break_paragraph(paragraph, width))
    return lines


def normalize_newlines(text: str) -> str:
    """``text`` with each ``\\r\\n`` and ``\\r`` written ``\\n``: the text the offsets of
    :func:`line_spans` and :func:`hanging_spans` count in."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def line_spans(text: str, width: int) -> list[tuple[int, int]]:
    """The lines of :func:`break_text` as ``(start, end)`` offsets into
    ``normalize_newlines(text)``, the spaces that hang at a line's end left out.

    Raises:
        ValueError: ``width`` < 1.
    """
    spans: list[tuple[int, int]] = []
    offset = 0
    for paragraph in normalize_newlines(text).split("\n"):
        for line in break_paragraph(paragraph, width):
            spans.append((offset, offset + len(line.rstrip(" "))))
            offset += len(line)
        offset += 1  # the line break
    return spans


def hanging_spans(
    text: str, width: int, first: str = "", rest: str | None = None
) -> list[tuple[str, int, int]]:
    """The lines of :func:`hanging_lines` as ``(prefix, start, end)``: each line is ``prefix``
    (the marker, an indent, or nothing) followed by ``normalize_newlines(text)[start:end]``.
    The first line has the room ``first`` leaves, each line after it the room ``rest`` leaves.
    Where either leaves no room, the marker stands alone on the first line, ``(first, 0, 0)``."""
    indent = " " * cell_len(first) if rest is None else rest
    first_room = width - cell_len(first)
    rest_room = width - cell_len(indent)
    if min(first_room, rest_room) < 1:
        return [
            (first.rstrip(" "), 0, 0),
            *(("", start, end) for start, end in line_spans(text, max(width, 1))),
        ]
    spans = line_spans(text, first_room)
    if len(spans) > 1 and rest_room != first_room:
        # The lines after the first have their own room: broken again from the second on.
        second = spans[1][0]
        rest_spans = line_spans(normalize_newlines(text)[second:], rest_room)
        spans = [spans[0], *((second + start, second + end) for start, end in rest_spans)]
    return [
        (first if index == 0 else indent, start, end) for index, (start, end) in enumerate(spans)
    ]


def hanging_lines(text: str, width: int, first: str = "", rest: str | None = None) -> list[str]:
    """``text`` broken to ``width`` cells behind a marker: the first line starts with ``first``
    (a list marker such as ``"1. "`` or ``"• "``), the lines after it with ``rest`` (by default
    as many spaces as ``first`` is wide), so a list item's continuation lines line up under its
    text and never look like items of their own.

    Where the marker leaves less than one cell, the text is broken to ``width`` and the marker
    stands on the first line alone. Lines are returned without the spaces that hang at their
    end.
    """
    normalized = normalize_newlines(text)
    return [
        prefix + normalized[start:end]
        for prefix, start, end in hanging_spans(text, width, first, rest)
    ]


def unbreakable(text: str) -> str:
    """``text`` with each space a NO-BREAK SPACE, so that no line is broken inside it while it
    fits the line: a name set into a sentence, such as a form field's label with its symbol
    (``参数量 N``), which a break at its space (or between its Chinese characters, which UAX #14
    allows) would part from the symbol. It looks the same on screen."""
    return text.replace(" ", NO_BREAK_SPACE)


def cell_width(text: str) -> int:
    """The width of ``text`` in terminal cells (a Chinese character takes two)."""
    return cell_len(text)


def pad_cells(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` cells: on the right (left-aligned text) or, with
    ``right``, on the left; a wider text is returned as it is."""
    room = " " * max(0, width - cell_len(text))
    return room + text if right else text + room


def widest(lines: Iterable[str]) -> int:
    """The width in cells of the widest of ``lines``, trailing spaces not counted."""
    return max((_visible_width(line) for line in lines), default=0)
