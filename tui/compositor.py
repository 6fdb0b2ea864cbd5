"""A compositor that keeps a key's frame to the widgets the key changed.

Textual 8.2's compositor does two things that cost a calculator pane most of a 16 ms frame per
typed key (README "Performance"); :class:`SpanCompositor`, the main screen's compositor, does
neither, and sends the terminal the same bytes (tests/test_result_view.py compares them):

- A partial update renders every widget whose container's clip overlaps the rectangle around
  all changed regions: a key typed into a form field near the top of a calculator, whose
  figures are near the bottom, made it render the 50 widgets of every form row in between
  (4-8 ms), and a key typed into a note rendered every line of the lesson around it, the header
  and the footer. Only the widgets whose visible part is under a changed region can contribute
  to the update.
- A repaint of a widget that is out of view (the formulas below the figures, the timeline's
  scroll bar) marks Textual's map of every widget's region stale, and the next lookup of any
  widget's region rebuilds it (2-5 ms with a calculator open). That lookup came in the next
  key's frame: a widget asks for its own size when it refreshes. A repaint moves nothing, so
  the regions of the widgets in view stay known, and only a lookup of a widget out of view
  rebuilds the map. Those regions must be where the terminal shows the widgets: a map rebuilt
  by a lookup places them where they are scrolled to *now*, and a scroll not drawn yet (the
  frames of a scroll, a pane scrolled while a widget out of view repaints) would then look
  drawn, so the frame that scrolls redraws nothing and the terminal keeps the old lines. The
  compositor keeps the regions it last drew the widgets in view at (``_drawn``) and compares a
  scroll with those.

It also keeps whole a double-width character (Chinese) that lies across the edge of a widget
*behind* the one drawn there. Textual cuts every line at every widget's edge, front and back
alike (``Compositor._render_chops``, ``Strip.divide``); a character cut in two becomes two
spaces, so a message's Chinese text over the edge of a pane under it lost a character at each
edge (Textualize/textual#6357, open). Here a widget's line is cut only where the widget drawn
changes: where the same widget is in front on both sides of an edge, its line stays whole.
A partial update writes such a line from its start to the end of the changed region, and on to
the end of a double-width character lying across that end (:class:`WholeCharacterUpdate`).
Textual cuts it at the region's end (``ChopsUpdate.render_segments``): the character's first
half became a space, and the terminal erased the whole character. A message over the outline
lost the character over the outline's edge whenever the outline alone repainted (its plan marks,
redrawn after each save) while the message was up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from textual._compositor import ChopsUpdate, Compositor, CompositorMap, ReflowResult
from textual.dom import NoScreen
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


class SpanCompositor(Compositor):
    """Textual's compositor with the two changes of the module docstring."""

    _update_regions: list[Region] | None = None
    # Whether ``_full_map`` places the widgets where the terminal shows them (a layout drew it);
    # else ``_drawn_in_view``: where the terminal shows the widgets in view (None: unknown).
    _full_map_drawn = False
    _drawn_in_view: CompositorMap | None = None
    # The map of the last layout: what the next layout compares with to find the widgets it
    # shows and resizes (they get Show and Resize events). A look-up in between may rebuild
    # ``_full_map`` in the new geometry (``full_map``, after a widget out of view changed), and
    # a layout compared with that found nothing resized: zoomed, the side pane's tab row kept
    # the short names it was given at 43 columns.
    _laid_out: CompositorMap | None = None

    def _drawn(self) -> CompositorMap | None:
        # Where the last frames drew the widgets in view. ``_visible_map``, when there is one, is
        # what a scroll drew (or what update_widgets set from this).
        if self._visible_map is not None:
            return self._visible_map
        if self._full_map_drawn:
            full_map = self._full_map
            return {widget: full_map[widget] for widget in self.visible_widgets}
        return self._drawn_in_view

    @property
    def full_map(self) -> CompositorMap:
        if self._full_map_invalidated and self.root is not None:
            # Rebuilt where the widgets are scrolled to now, which may not be drawn yet.
            self._drawn_in_view = self._drawn()
            self._full_map_drawn = False
        return Compositor.full_map.fget(self)  # type: ignore[attr-defined, no-any-return]

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        if self._laid_out is not None:
            self._full_map = self._laid_out
        result = super().reflow(parent, size)
        self._laid_out = self._full_map
        # A layout's frame draws what changed against the last map: the widgets are then drawn
        # where this map places them.
        self._full_map_drawn = True
        self._drawn_in_view = None
        return result

    def reflow_visible(self, parent: Widget, size: Size) -> set[Widget]:
        exposed = super().reflow_visible(parent, size)
        self._full_map_drawn = False
        return exposed

    def clear(self) -> None:
        super().clear()
        self._full_map_drawn = False
        self._drawn_in_view = None
        self._laid_out = None

    def update_widgets(self, widgets: set[Widget]) -> None:
        if (
            self._visible_map is None
            and not self._full_map_invalidated
            and not widgets.issubset(self.visible_widgets.keys())
        ):
            # Textual is about to mark its map stale for a widget out of view; the widgets in
            # view keep their regions (what they are looked up in before the map is rebuilt):
            # the regions drawn, which a scroll not drawn yet is compared with.
            full_map = self._full_map
            in_view = {widget: full_map[widget] for widget in self.visible_widgets}
            drawn = in_view if self._full_map_drawn else self._drawn_in_view
            if drawn is not None:
                self._visible_map = drawn
        super().update_widgets(widgets)

    # Per line of the last render: where a widget's line covers more than one span between
    # cuts, its start -> its end (what the partial update crops that line to).
    _wide_ends: list[dict[int, int]] = []

    def render_partial_update(self) -> ChopsUpdate | None:
        self._update_regions = list(self._dirty_regions)
        try:
            update = super().render_partial_update()
        finally:
            self._update_regions = None
        if update is None:
            return None
        for y, ends in enumerate(self._wide_ends):
            if ends:
                pairs = zip(self.cuts[y][:-1], update.chop_ends[y], strict=True)
                update.chop_ends[y] = [ends.get(start, end) for start, end in pairs]
        return WholeCharacterUpdate(update.chops, update.spans, update.chop_ends)

    def _render_chops(
        self, crop: Region, is_rendered_line: Callable[[int], bool]
    ) -> Sequence[Mapping[int, Strip]]:
        # Textual's chops (the spans between cuts, filled front to back: the first render of
        # a span wins), but a render's line is divided only where it starts or stops winning
        # spans. A span it covers past a cut gets an empty strip, so nothing behind claims it.
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(line[:-1]) for line in cuts]
        self._wide_ends = [{} for _ in cuts]
        nothing = Strip([], 0)
        for region, clip, strips in self._get_renders(crop):
            render_region = region.intersection(clip)
            render_x = render_region.x
            first_cut, last_cut = render_region.column_span
            for y, strip in zip(render_region.line_range, strips, strict=False):
                if not is_rendered_line(y):
                    continue
                line = chops[y]
                edges = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                runs: list[list[int]] = []  # [index of the first edge, index of the end, won]
                for index, start in enumerate(edges[:-1]):
                    won = int(line[start] is None)
                    if runs and runs[-1][2] == won:
                        runs[-1][1] = index + 1
                    else:
                        runs.append([index, index + 1, won])
                pieces = strip.divide([edges[end] - render_x for _first, end, _won in runs])
                for (first, end, won), piece in zip(runs, pieces, strict=False):
                    if not won:
                        continue
                    line[edges[first]] = piece
                    for covered in edges[first + 1 : end]:
                        line[covered] = nothing
                    if end - first > 1:
                        self._wide_ends[y][edges[first]] = edges[end]
        return cast("Sequence[Mapping[int, Strip]]", chops)

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        regions = self._update_regions
        if crop is None or not regions:
            return super()._get_renders(crop)
        return self._renders_under(regions)

    def _renders_under(self, regions: list[Region]) -> Iterable[tuple[Region, Region, list[Strip]]]:
        # Textual's renders, front to back, of the widgets whose visible part overlaps a
        # changed region.
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if visible and any(visible.overlaps(changed) for changed in regions):
                crop = visible.translate((-region.x, -region.y))
                yield region, clip, widget.render_lines(crop)


class WholeCharacterUpdate(ChopsUpdate):
    """Textual's partial update, but a line that goes on past the end of a changed region is
    written up to the end of the character at that end, never cut inside a double-width one
    (the module docstring says why). The cell written past the region shows the line's own
    character, which is what the terminal shows there after a full repaint."""

    def render_segments(self, console: Console) -> str:
        # ``ChopsUpdate.render_segments`` (Textual 8.2.8, pinned exactly), with the crop's end
        # moved to a character's end.
        sequences: list[str] = []
        append = sequences.append
        move_to = Control.move_to
        last_y = self.spans[-1][0]
        for y, x1, x2 in self.spans:
            for end, (x, strip) in zip(self.chop_ends[y], self.chops[y].items(), strict=False):
                if strip is None or x > x2 or end <= x1:
                    continue
                if not (x2 > x >= x1 and end <= x2):
                    cut = end - x if end <= x2 else _character_end(strip, x2 - x)
                    strip = strip.crop(0, cut)
                append(move_to(x, y).segment.text)
                append(strip.render(console))
            if y != last_y:
                append("\n")
        return "".join(sequences)


def _character_end(strip: Strip, cut: int) -> int:
    """The first cell offset in ``strip`` at or after ``cut`` where no character lies across."""
    position = 0
    for segment in strip:
        segment_end = position + segment.cell_length
        if segment_end > cut:
            for character in segment.text:
                if position >= cut:
                    break
                position += cell_len(character)
            return position
        position = segment_end
    return cut


def in_view(widget: Widget) -> bool:
    """Whether ``widget`` was drawn in the last frame of its screen (any part of it), asked
    without a lookup of its region (which may rebuild the map of every widget)."""
    try:
        screen = widget.screen
    except NoScreen:  # not mounted yet
        return False
    return widget in screen._compositor.visible_widgets
