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
  rebuilds the map.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class SpanCompositor(Compositor):
    """Textual's compositor with the two changes of the module docstring."""

    _update_regions: list[Region] | None = None

    def update_widgets(self, widgets: set[Widget]) -> None:
        if (
            self._visible_map is None
            and not self._full_map_invalidated
            and not widgets.issubset(self.visible_widgets.keys())
        ):
            # Textual is about to mark its map stale for a widget out of view; the widgets in
            # view keep their regions (what they are looked up in before the map is rebuilt).
            full_map = self._full_map
            self._visible_map = {widget: full_map[widget] for widget in self.visible_widgets}
        super().update_widgets(widgets)

    def render_partial_update(self) -> ChopsUpdate | None:
        self._update_regions = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._update_regions = None

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
