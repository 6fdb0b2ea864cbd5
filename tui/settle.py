"""Letting the changes on their way to the app arrive before a save on a signal or a suspend
(used by :mod:`tui.guard` and :mod:`tui.driver`; a module of its own so neither imports the other
for it)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from tui.keys import KeyOrderApp

if TYPE_CHECKING:
    from textual.app import App

# Changes in flight reach the app within milliseconds (a burst of keys within tens of them on a
# busy machine); a wedged widget must not delay the save.
SETTLE_SECONDS = 1.0


async def settle(app: App[Any]) -> None:
    """Let the changes already on their way to the app arrive, before a save on a signal.

    First the keys the app has received and not yet handled (:class:`tui.keys.KeyOrderApp`
    handles them one at a time: the rest of a burst, the last code points of an emoji sequence,
    keys held until the first screen is drawn) are handled. Then, a key is drawn in its text
    box a moment before the box's change message has climbed up to the app, which records it,
    one message queue per ancestor. Each round waits until every queue on the focused widget's
    path has handled what it held, which moves such a message up at least one level: as many
    rounds as levels. :data:`SETTLE_SECONDS` at most in all.
    """
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(SETTLE_SECONDS):
            if isinstance(app, KeyOrderApp):
                await app.keys_done()
            focused = app.focused if app.screen_stack else None
            path = [*focused.ancestors_with_self] if focused is not None else [app]
            for _level in path:
                handled = []
                for node in path:
                    done = asyncio.Event()
                    if node.call_later(done.set):
                        handled.append(done.wait())
                await asyncio.gather(*handled)
