"""Pure-ASCII diagrams of the strategies and of the collectives' data flow.

Both are drawn from engine records, never typed by hand: a strategy diagram from its
:class:`~engine.strategies.Strategy` (so the picture cannot disagree with the description), a
collective diagram from a :class:`~engine.collectives.Simulation` step. Every line is at most
:data:`WIDTH` columns, and ASCII in English (``Psi``, ``Sec. 7``), so the app can show them in a
``Static`` with markup off and the CLI can print them anywhere; in Chinese the text keeps the
lesson's signs (``Ψ``, ``§7``) and full-width punctuation.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from engine import collectives
from engine.collectives import OPERATIONS, Chunk, Simulation
from engine.errors import InputError
from engine.i18n import N_, current_language
from engine.i18n import gettext as _
from engine.linebreak import cell_width, hanging_lines, pad_cells
from engine.sources import ascii_text, joined
from engine.strategies import DIAGRAM_RANKS, HOLDING_WIDTH, Strategy, get_strategy

WIDTH = 80
"""The widest line of any diagram, in columns."""

# The fewest columns the text parts are broken at (a word or term longer stays whole).
_NARROWEST = 20

STRATEGY_NAMES: tuple[str, ...] = (
    "dp",
    "fsdp",
    "zero1",
    "zero2",
    "zero3",
    "tp",
    "tp-sp",
    "pp",
    "ep",
    "cp",
)
COLLECTIVE_NAMES: tuple[str, ...] = OPERATIONS
DIAGRAM_NAMES: tuple[str, ...] = STRATEGY_NAMES + COLLECTIVE_NAMES

MAX_DIAGRAM_RANKS = 8
"""Collective diagrams stop at 8 ranks: beyond that a rank's buffer no longer fits 80 columns."""

_BOX = HOLDING_WIDTH + 2
_GAP = (WIDTH - DIAGRAM_RANKS * _BOX) // (DIAGRAM_RANKS - 1)
_CENTERS = tuple(k * (_BOX + _GAP) + _BOX // 2 for k in range(DIAGRAM_RANKS))

# What each operation leaves on the ranks, said once the last step is shown.
_DONE: Mapping[str, str] = MappingProxyType(
    {
        "all-reduce": N_("every rank holds the element-wise sum of all ranks' inputs"),
        "all-gather": N_("every rank holds all ranks' shards, concatenated"),
        "reduce-scatter": N_("rank i holds slot i of the element-wise sum"),
        "all-to-all": N_("rank i holds, in slot j, the block rank j had for it (a transpose)"),
        "broadcast": N_("every rank holds the root's buffer"),
        "reduce": N_("the root (rank 0) holds the element-wise sum; other buffers are scratch"),
        "send-recv": N_("rank i holds the buffer rank i-1 sent"),
    }
)


def _wrap(text: str, first: str = "", rest: str = "  ", width: int = WIDTH) -> list[str]:
    if not (text + first).isascii():
        # Chinese text: broken by cells and by the lesson's rules (UAX #14), not by characters.
        return hanging_lines(text, width, first, rest)
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _row(cells: Sequence[str], gaps: Sequence[str]) -> str:
    line = cells[0]
    for gap, cell in zip(gaps, cells[1:], strict=True):
        line += gap + cell
    return line.rstrip()


def _boxes(strategy: Strategy, forward: str, backward: str) -> list[str]:
    """The 4 rank boxes side by side; ``forward``/``backward`` fill the gaps of two body rows."""
    inner = _BOX - 2
    border = "+" + "-" * inner + "+"
    blank = " " * _GAP
    gaps = [blank] * (DIAGRAM_RANKS - 1)
    lines = [_row([border] * DIAGRAM_RANKS, gaps)]
    lines.append(_row([f"|{f'rank {k}':^{inner}}|" for k in range(DIAGRAM_RANKS)], gaps))
    rows = max(len(h) for h in strategy.rank_holdings)
    for r in range(rows):
        cells = [
            f"|{pad_cells(h[r] if r < len(h) else '', inner)}|" for h in strategy.rank_holdings
        ]
        arrow = forward if r == 0 else backward if r == 1 else ""
        lines.append(_row(cells, [f"{arrow:^{_GAP}}"] * (DIAGRAM_RANKS - 1)))
    lines.append(_row([border] * DIAGRAM_RANKS, gaps))
    return lines


def _bus(label: str) -> list[str]:
    """A connector from every rank into one bus line carrying ``label``."""
    connectors = [" "] * (_CENTERS[-1] + 1)
    bus = ["-"] * (_CENTERS[-1] + 1)
    for k, center in enumerate(_CENTERS):
        connectors[center] = "|"
        bus[center] = "<" if k == 0 else ">" if k == DIAGRAM_RANKS - 1 else "+"
    for k in range(_CENTERS[0]):
        bus[k] = " "
    text = f" {label} "
    width = cell_width(text)
    start = (_CENTERS[0] + _CENTERS[-1] + 1 - width) // 2
    line = "".join(bus[:start]) + text + "".join(bus[start + width :])
    return ["".join(connectors).rstrip(), line]


def strategy_diagram(name: str) -> str:
    """The 4-rank ASCII diagram of a strategy, with the lesson's three questions answered.

    Shows what each rank holds (one box per rank, labelled ``rank 0`` .. ``rank 3``), the split
    dimension, every collective or point-to-point transfer with arrows, its volume and source, one
    wait it can cause, and the answers to the three questions. Pure ASCII, at most 80 columns.
    It is the text of every part of :func:`strategy_diagram_parts`, in order.

    Args:
        name: one of :data:`STRATEGY_NAMES` (``fsdp`` draws ZeRO-3, titled FSDP/ZeRO-3).

    Raises:
        InputError: unknown name (field ``strategy``).
    """
    return "".join(text for _part, text in strategy_diagram_parts(name))


STRATEGY_DIAGRAM_PARTS: tuple[str, ...] = (
    "title",
    "split",
    "picture",
    "comm",
    "wait",
    "questions",
)
"""The parts of a strategy diagram, in order: its title, the split dimension, the rank boxes,
the collectives (with volume and source), one wait, the three questions answered."""


def strategy_diagram_parts(
    name: str, transfers: bool = True, width: int = WIDTH
) -> tuple[tuple[str, str], ...]:
    """The strategy diagram of ``name`` in parts, ``(part, text)`` for each part of
    :data:`STRATEGY_DIAGRAM_PARTS`, each text whole lines ending in a newline, so a viewer can
    leave out the parts the learner has yet to work out (exercises 2 and 3 of lesson S15 ask
    what each strategy splits, its main collective and one wait).

    ``transfers``: draw the collectives' buses and the point-to-point arrows in the picture;
    ``False`` draws the rank boxes alone (the arrows would give the collectives away).
    ``width``: the columns the text parts are broken at (a pane narrower than 80 columns shows
    every answer whole); the picture is always 80 columns wide.

    Raises:
        InputError: unknown name (field ``strategy``).
    """
    width = max(width, _NARROWEST)
    strategy = get_strategy(name)
    title = _wrap(
        _("{title} ({ranks} ranks)").format(title=_(strategy.title), ranks=DIAGRAM_RANKS),
        "",
        "  ",
        width,
    )
    split_label = _("Split: ")
    split = [*_wrap(_(strategy.split), split_label, " " * cell_width(split_label), width), ""]
    uses = strategy.collectives
    picture: list[str]
    if strategy.point_to_point:
        arrows = ("--->", "<---") if transfers else ("", "")
        picture = _boxes(strategy, *arrows)
        marks = ["--->" if use.phase == "forward" else "<---" for use in uses]
    else:
        picture = _boxes(strategy, "", "")
        if transfers:
            for number, use in enumerate(uses, start=1):
                label = _("({number}) {collective}, {phase}")
                picture += _bus(
                    label.format(number=number, collective=use.collective, phase=_(use.phase))
                )
        marks = [f"({number})" for number in range(1, len(uses) + 1)]
    picture.append("")
    comm = [_("Collectives:")]
    for mark, use in zip(marks, uses, strict=True):
        text = _("{mark} {phase}: {collective} of {payload}; {volume}").format(
            mark=mark,
            phase=_(use.phase),
            collective=use.collective,
            payload=_(use.payload),
            volume=_(use.volume),
        )
        comm += _wrap(text, "  ", "      ", width)
    comm += _wrap(
        _("Volume per step: {volume}.").format(volume=_(strategy.volume)), "  ", "    ", width
    )
    # The English diagrams are ASCII (Sec. 7); the Chinese ones keep the sources' own signs (§7).
    source = joined(*strategy.volume_sources)
    comm += _wrap(
        _("Source: {source}.").format(
            source=ascii_text(source) if current_language() == "en" else source
        ),
        "  ",
        "    ",
        width,
    )
    wait = _wrap(_(strategy.wait), _("One wait: "), "  ", width)
    questions = [_("The three questions:")]
    for number, (lesson_wording, english, answer) in enumerate(strategy.answers(), start=1):
        # In Chinese the questions are the lesson's own words.
        question = lesson_wording + "？" if current_language() == "zh" else english
        questions += _wrap(f"Q{number} {question} {_(answer)}", "  ", "     ", width)
    parts = (title, split, picture, comm, wait, questions)
    return tuple(
        (part, "\n".join(lines) + "\n")
        for part, lines in zip(STRATEGY_DIAGRAM_PARTS, parts, strict=True)
    )


def collective_step_count(op: str, ranks: int = 4, algorithm: str | None = None) -> int:
    """Number of steps of ``op`` (what :func:`collective_diagram` accepts as ``step``, plus 0).

    Raises:
        InputError: unknown ``op`` or ``algorithm``, or ``ranks`` below 2.
    """
    return collectives.step_count(op, ranks, algorithm)


def _cell(chunk: Chunk | None) -> str:
    return "." if chunk is None else ",".join(str(int(v)) for v in chunk)


def _buffer_rows(
    title: str, buffers: collectives.Buffers, marks: Mapping[tuple[int, int], str], width: int
) -> list[str]:
    lines = [title]
    for rank, slots in enumerate(buffers):
        cells = [
            f"{_cell(chunk):>{width}}{marks.get((rank, s), ' ')}" for s, chunk in enumerate(slots)
        ]
        lines.append(f"  rank {rank:<2} [ {' | '.join(cells)} ]")
    return lines


def _transfer_text(sim: Simulation, transfer: collectives.Transfer) -> str:
    how = _("added") if transfer.reduce else _("copied")
    if sim.op == "all-to-all":
        what = _("its block for rank {rank} into slot {slot}").format(
            rank=transfer.dst, slot=transfer.slots[0]
        )
    elif len(transfer.chunks) == sim.ranks:
        what = _("its whole buffer")
    else:
        word = _("slot {slots}") if len(transfer.chunks) == 1 else _("slots {slots}")
        what = word.format(slots=",".join(str(c) for c in transfer.chunks))
    return "  " + _("rank {src} --> rank {dst}: {what} ({how})").format(
        src=transfer.src, dst=transfer.dst, what=what, how=how
    )


def collective_diagram(
    op: str, step: int, ranks: int = 4, algorithm: str | None = None, seed: int = 0
) -> str:
    """Step ``step`` of ``op``'s data flow on ``ranks`` ranks, as ASCII: the picture, then its
    caption (:func:`collective_diagram_parts`).

    Each rank's buffer is ``ranks`` slots of one small integer each (inputs 1..9 drawn from
    ``seed``), so a learner can add them up. Step 0 shows the inputs; step K lists the messages
    of step K (``rank i --> rank j``) and every buffer after it, marking slots that received data
    with ``+`` (added in) or ``*`` (copied in).

    Raises:
        InputError: unknown ``op`` or ``algorithm``; ``ranks`` outside 2..8 (field ``ranks``);
            ``step`` outside 0..collective_step_count (field ``step``).
    """
    picture, caption = collective_diagram_parts(op, step, ranks, algorithm, seed)
    return f"{picture}\n{caption}\n"


def collective_diagram_parts(
    op: str, step: int, ranks: int = 4, algorithm: str | None = None, seed: int = 0
) -> tuple[str, str]:
    """:func:`collective_diagram` in two parts, each without a final newline: the picture (the
    step, its transfers, the buffers: lines that keep their columns) and the caption under it
    (what the marks mean and, at the last step, what the collective has done: prose, which a
    pane breaks at its own width while the picture scrolls sideways).

    Raises:
        InputError: as :func:`collective_diagram`.
    """
    collectives.check_op(op)
    if isinstance(ranks, bool) or not isinstance(ranks, int):
        raise InputError("ranks", _("must be a whole number"))
    if not 2 <= ranks <= MAX_DIAGRAM_RANKS:
        raise InputError(
            "ranks",
            _("must be between 2 and {maximum}, got {ranks}").format(
                maximum=MAX_DIAGRAM_RANKS, ranks=ranks
            ),
        )
    sim = collectives.simulate(op, ranks, algorithm=algorithm, seed=seed)
    buffers = sim.buffers_at(step)
    total = len(sim.steps)
    every = [sim.inputs, sim.initial, *(s.buffers for s in sim.steps)]
    width = max(len(_cell(c)) for state in every for slots in state for c in slots)

    lines = [
        _("{op} ({algorithm}) on {ranks} ranks").format(op=op, algorithm=sim.algorithm, ranks=ranks)
    ]
    marks: dict[tuple[int, int], str] = {}
    if step == 0:
        lines.append(_("step 0 of {total}: the inputs, before any transfer").format(total=total))
    else:
        current = sim.steps[step - 1]
        lines.append(
            _("step {step} of {total}: {phase}").format(
                step=step, total=total, phase=_(current.phase)
            )
        )
        lines.append(_("Transfers in this step:"))
        for transfer in current.transfers:
            lines.append(_transfer_text(sim, transfer))
            for slot in transfer.slots:
                marks[(transfer.dst, slot)] = "+" if transfer.reduce else "*"
    if op == "all-to-all":
        lines += _buffer_rows(_("Send buffers (slot j is for rank j):"), sim.inputs, {}, width)
        title = _("Receive buffers (slot i is from rank i):")
    else:
        title = _("Buffers:") if step == 0 else _("Buffers after this step:")
    lines += _buffer_rows(title, buffers, marks, width)
    if step == 0:
        caption = [_("'.' = empty slot.")]
    else:
        caption = [_("'+' = added into the slot this step, '*' = copied in, '.' = empty.")]
    if step == total:
        caption.append(_("Done: {state}.").format(state=_(_DONE[op])))
    return "\n".join(lines), "\n".join(caption)
