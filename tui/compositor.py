"""A compositor that repaints only the widgets under what changed."""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


class SpanCompositor(Compositor):
    """Textual's compositor, rendering in a partial update only the widgets that overlap one of
    the changed regions.

    Textual renders every widget inside the rectangle around all changed regions: a key typed
    into a form field near the top of a calculator pane, whose result is near the bottom, made
    it render the 50 widgets of every row in between (4-8 ms of a 16 ms frame). The terminal is
    sent only the changed spans either way; a widget that overlaps none of them contributes
    nothing to the update.
    """

    _update_regions: list[Region] | None = None

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
        if crop is None or not regions or len(regions) < 2:
            return super()._get_renders(crop)
        return self._renders_under(regions)

    def _renders_under(self, regions: list[Region]) -> Iterable[tuple[Region, Region, list[Strip]]]:
        # The same renders as Textual's, front to back, for the widgets whose visible part
        # overlaps a changed region.
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if visible and any(visible.overlaps(changed) for changed in regions):
                crop = visible.translate((-region.x, -region.y))
                yield region, clip, widget.render_lines(crop)
