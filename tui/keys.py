"""Every key lands where the learner meant: in order, and never dropped in silence.

Keys in order. Textual 8.2.8 routes a key in two steps. The app takes it from the driver, runs
priority bindings, and posts it to the widget focused at that moment. A text field inserts a
printable character at once; any other key (backspace, end, tab, ctrl+r) bubbles through each
ancestor's message queue back to the app, whose bindings then run it. Keys that arrive in one
burst (over SSH, from an IME, a paste without bracketed paste) are all posted before the first
bound key comes back: ``End BSpace BSpace 7 B`` types ``7B`` before the cursor moves and the
backspaces run, and ``4096 Tab 32`` posts ``32`` to the first field before Tab moves the focus
(Textualize/textual#6605; the fix proposed there, Textualize/textual#6631, runs a field's own
bindings inline, which mends the first case only). :class:`KeyOrderApp` posts the next key only
when the previous one is done: a :class:`KeyHandled` marker follows each key along its path, and
once it is back at the app every handler and binding of that key has run, a focus change
included, so the next key goes to the widget focused now. Drop the class when Textual keeps keys
in order itself (tests/test_key_order.py sends the bursts above).

Keys before the first frame. The driver reads keys as soon as the terminal is in application
mode, and the app takes them as soon as its own mount is done, while the first screen may not
be composed or mounted yet: a binding then runs on a screen whose ``on_mount`` has not set its
layout (and undoes the binding's work after it). :class:`KeyOrderApp` holds such keys, in
order, until the screen on top at start is mounted and has drawn its first frame, and what its
``on_mount`` queued for after that frame has run (a restored focus, say).

No key in silence. A printable key that nothing took (no text box has the focus and no binding
wants it) goes to the one text box of the focused item (a Reveal button's answer box), or is
refused with a hint that replaces the previous one instead of stacking.

Whole graphemes. Textual's key parser turns each code point a terminal sends into a key of its
own, the zero-width joiners of 👨‍👩‍👧 and the tag characters of a subdivision flag included;
Input._on_key and TextArea._on_key then insert only keys whose ``is_printable``
(``str.isprintable``) holds, which is False for format characters (Unicode category Cf), so the
joiners were dropped there. :func:`is_text` counts them as text; the fields in
:mod:`tui.widgets.literal` insert them.
"""

from __future__ import annotations

import asyncio
import contextlib
import unicodedata
from collections import deque
from collections.abc import AsyncGenerator, Callable
from typing import Any

from textual import events, on
from textual.app import App, AutopilotCallbackType, ReturnType
from textual.message import Message
from textual.message_pump import MessagePump
from textual.notifications import Notification, Notify
from textual.pilot import Pilot
from textual.timer import Timer
from textual.widget import Widget

from engine.errors import beginning
from tui import strings
from tui.toasts import broken_notification, withdraw_one

# How often a key whose marker may be lost (its widget was removed meanwhile) is checked.
_WATCHDOG_SECONDS = 0.25
# The refused characters the hint quotes at most (the latest ones, after an ellipsis when
# there were more).
_HINT_CHARACTERS = 24
_HINT_SECONDS = 4.0
# How long a test's pilot waits for the first screen to take keys.
_PILOT_WAIT_SECONDS = 30.0

KeyInput = events.Key | events.Paste


def is_text(character: str | None) -> bool:
    """Whether a key's ``character`` is text to insert: printable, or a format character (Cf)
    such as the zero-width joiner (U+200D) inside an emoji ZWJ sequence (Unicode TR #51)."""
    return bool(character) and all(
        char.isprintable() or unicodedata.category(char) == "Cf" for char in character or ""
    )


def is_format_character(character: str | None) -> bool:
    """Whether ``character`` is text that ``str.isprintable`` (hence Textual) refuses: Cf."""
    return is_text(character) and not (character or "").isprintable()


class KeyHandled(Message):
    """Follows a key along its path; back at the app, the key has been handled.

    It is posted to the widget the key went to, right behind the key, and bubbles as the key
    does, so each message queue takes it after the key. Where the key was stopped (a text field
    took it), or once the key itself reached the app, it goes straight back to the app.
    """

    def __init__(self, key: KeyInput, app: KeyOrderApp[Any]) -> None:
        super().__init__()
        self.key = key
        self.keys_app = app
        # The message pump whose queue holds the marker now (see KeyOrderApp._check_lost_key).
        self.holder: MessagePump = app

    def _bubble_to(self, widget: MessagePump) -> None:
        # Textual's hook for bubbling to the parent. The key's stop flag has no public reader.
        if self.holder is self.keys_app:  # already sent back (KeyOrderApp.on_key)
            return
        self.send_to(self.keys_app if self.key._stop_propagation else widget)

    def send_to(self, target: MessagePump) -> None:
        """Queue the marker at ``target``, or at the app when ``target`` is closing."""
        if not target.post_message(self._for(target)):
            target = self.keys_app
            target.post_message(self._for(target))
        self.holder = target

    def _for(self, target: MessagePump) -> KeyHandled:
        # A widget on the way has no handler for the marker: with the default prevented,
        # Textual looks for none (it stops at the first class) and only bubbles it on, so
        # the marker costs the key behind which it travels as little as possible.
        self.prevent_default(target is not self.keys_app)
        return self


class KeyOrderApp(App[ReturnType]):
    """An App that handles keys one at a time, in the order they came (see module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys_waiting: deque[KeyInput] = deque()
        self._key_marker: KeyHandled | None = None
        self._keys_idle = asyncio.Event()
        self._keys_idle.set()
        self._key_watchdog: Timer | None = None
        self._key_hint: Notification | None = None
        self._refused = ""
        self._hint_grows = True
        # Set once the first screen is ready for keys (see module docstring).
        self._keys_open = asyncio.Event()

    @on(events.Mount)
    def _open_keys_when_screen_ready(self) -> None:
        # The screen's queue is read once its on_mount has run; from there, the callback after
        # its first frame comes behind those its on_mount asked for.
        screen = self.screen
        screen.call_later(screen.call_after_refresh, self._open_keys)
        # What was not typed on one screen is not news on the next (a dialog opened over it:
        # the hint would cover its title).
        self.screen_change_signal.subscribe(self, self._withdraw_key_hint, immediate=True)

    def _withdraw_key_hint(self, _screen: object = None) -> None:
        """Take the "not typed" hint off the screen, and start the next one afresh."""
        hint, self._key_hint, self._refused = self._key_hint, None, ""
        if hint is not None:
            withdraw_one(self, hint)

    def _open_keys(self) -> None:
        """The first screen is ready: handle the keys that came meanwhile, in order."""
        self._keys_open.set()
        self.call_later(self._send_next_key)  # in the app's own task

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            self._keys_waiting.append(event)
            self._keys_idle.clear()
            await self._send_next_key()
            return
        await super().on_event(event)

    async def _send_next_key(self) -> None:
        """Route the oldest waiting key as Textual does, unless one is still being handled or
        the first screen is not ready for keys yet."""
        if self._key_marker is not None or not self._keys_open.is_set():
            return
        if not self._keys_waiting:
            self._keys_idle.set()
            return
        event = self._keys_waiting.popleft()
        # Priority bindings, then the key is posted to the focused widget (or the screen).
        await super().on_event(event)
        marker = self._key_marker = KeyHandled(event, self)
        # A key the app handled itself: its marker still goes through the app's queue, behind
        # what the binding queued there (Widget.focus is applied by a call_later).
        marker.send_to((self.focused or self.screen) if event.is_forwarded else self)
        if self._key_watchdog is None:
            self._key_watchdog = self.set_interval(_WATCHDOG_SECONDS, self._check_lost_key)
        else:
            self._key_watchdog.reset()  # resume() would tick at once after a long pause

    async def on_key_handled(self, marker: KeyHandled) -> None:
        marker.stop()
        if marker is self._key_marker:
            # A key that reached the app was ahead of its marker in the app's queue, and its
            # bindings ran there; what they queued (Widget.focus: a call_later) may be behind
            # the marker, which came up from the screen meanwhile. The next key goes once that
            # ran: after an Escape that left a text box, not into the box (a burst: Escape ]).
            self.call_later(self._finish_key, marker)

    async def _finish_key(self, marker: KeyHandled) -> None:
        if marker is self._key_marker:  # not already finished by a second copy of the marker
            await self._key_finished()

    async def _check_lost_key(self) -> None:
        """A marker queued at a widget that closed before passing it on never comes back."""
        marker = self._key_marker
        if marker is None:
            await self._key_finished()
            return
        holder = marker.holder
        if holder is self or (holder.is_attached and holder.is_running):
            return
        await self._key_finished()

    async def _key_finished(self) -> None:
        self._key_marker = None
        if self._key_watchdog is not None:
            self._key_watchdog.pause()
        await self._send_next_key()

    # A pilot presses keys as a learner does once the screen is drawn: the keys it sends are
    # not held (Pilot.press would return before they were applied).
    @contextlib.asynccontextmanager
    async def run_test(
        self,
        *,
        headless: bool = True,
        size: tuple[int, int] | None = (80, 24),
        tooltips: bool = False,
        notifications: bool = False,
        message_hook: Callable[[Message], None] | None = None,
    ) -> AsyncGenerator[Pilot[ReturnType], None]:
        """Textual's ``App.run_test``, whose pilot starts once the first screen takes keys."""
        async with super().run_test(
            headless=headless,
            size=size,
            tooltips=tooltips,
            notifications=notifications,
            message_hook=message_hook,
        ) as pilot:
            await self._keys_opened(pilot)
            yield pilot

    async def run_async(
        self,
        *,
        headless: bool = False,
        inline: bool = False,
        inline_no_clear: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
        auto_pilot: AutopilotCallbackType | None = None,
    ) -> ReturnType | None:
        """Textual's ``App.run_async``; an ``auto_pilot`` (snapshots) starts once the first
        screen takes keys."""
        pilot_after_keys_open: AutopilotCallbackType | None = None
        if auto_pilot is not None:
            drive = auto_pilot

            async def pilot_after_keys_open(pilot: Pilot[Any]) -> None:
                await self._keys_opened(pilot)
                await drive(pilot)

        return await super().run_async(
            headless=headless,
            inline=inline,
            inline_no_clear=inline_no_clear,
            mouse=mouse,
            size=size,
            auto_pilot=pilot_after_keys_open,
        )

    async def _keys_opened(self, pilot: Pilot[Any]) -> None:
        # An app that failed to start never opens its keys: the pilot then goes on, and the
        # test fails on what it finds rather than hanging.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_PILOT_WAIT_SECONDS):
                await self._keys_open.wait()
        await pilot.pause()

    @property
    def keys_waiting(self) -> int:
        """How many keys came and wait behind the one being handled (the rest of a burst)."""
        return len(self._keys_waiting)

    async def keys_done(self) -> None:
        """Wait until every key posted to the app before this call has been handled."""
        taken = asyncio.Event()
        self.call_later(taken.set)  # the app's queue is in order: the keys were taken before
        await taken.wait()
        await self._keys_idle.wait()

    # ------------------------------------------------------------------ keys nothing took
    async def on_key(self, event: events.Key) -> None:
        # Only a key that went up to the app without a widget taking it comes here (keys from
        # the driver go through on_event); App._on_key runs after this handler unless it is
        # prevented here.
        marker = self._key_marker
        if marker is not None and marker.key is event:
            # Every widget on the key's path has had it: the marker need not follow it up. It
            # is queued once the binding ran, behind what the binding queued.
            self.call_next(marker.send_to, self)
        if not is_text(event.character):
            return
        # What App._on_key does first, here to learn whether a binding took the key (this app
        # has no key_ methods, which App._on_key would try next).
        event.prevent_default()
        if await self._check_bindings(event.key):
            return
        field = self._nearest_text_field(event.key, event.character)
        if field is None:
            self._refuse(event.character or event.key)
            return
        # set_focus posts Focus to the field now (Widget.focus would wait for the app's queue),
        # so the field is entered (cursor to the end) before it gets the key.
        field.screen.set_focus(field)
        field.post_message(event.copy())

    async def on_paste(self, event: events.Paste) -> None:
        # A paste that came up to the app. A text box has it already (Textual's TextArea
        # inserts it and lets it bubble); anywhere else it would be lost without a word: like
        # a typed key, it goes to the one text field near the focus, or a hint says so.
        marker = self._key_marker
        if marker is not None and marker.key is event:
            self.call_next(marker.send_to, self)
        focused = self.focused
        if not event.text or (focused is not None and focused.check_consume_key("a", "a")):
            return
        field = self._nearest_text_field("a", "a")
        if field is None:
            # Its own hint, its beginning as pasted (a tab written \t): not glued to what was
            # refused before it, nor grown by what comes after.
            self._refuse(beginning(event.text, _HINT_CHARACTERS), grows=False)
            return
        field.screen.set_focus(field)
        # Forwarded, as Textual routes input: the paste bubbles up from a TextArea, and the app
        # must not take it for a new one (on_event queues only input not forwarded).
        field._forward_event(events.Paste(event.text))

    def _nearest_text_field(self, key: str, character: str | None) -> Widget | None:
        """The one text field that would take the key ``key`` (typing ``character``) in the
        innermost container of the focused widget that has any; None where there are none or
        several."""
        start = self.focused or self.screen
        for container in start.ancestors_with_self:
            if not isinstance(container, Widget):
                return None
            fields = [
                widget
                for widget in container.query("*")
                if widget.focusable
                and widget.check_consume_key(key, character)
                and _shown_within(widget, container)
            ]
            if fields:
                return fields[0] if len(fields) == 1 else None
            if container is self.screen:
                return None
        return None

    def _refuse(self, character: str, grows: bool = True) -> None:
        """Tell the learner the key was not typed, in one toast that grows while they type
        (``grows``: a paste is quoted alone, and is not grown)."""
        hint = self._key_hint
        live = hint is not None and hint in self._notifications and not hint.has_expired
        if live and grows and self._hint_grows:
            # One more than is quoted is kept: it says the quote lost its start.
            self._refused = (self._refused + character)[-(_HINT_CHARACTERS + 1) :]
        else:
            self._refused = character
        self._hint_grows = grows
        quoted = self._refused
        if grows and len(quoted) > _HINT_CHARACTERS:
            # The start of a long run is not quoted, and the quote says so.
            quoted = "…" + quoted[-(_HINT_CHARACTERS - 1) :]
        if hint is not None and live:
            withdraw_one(self, hint)  # the one remover of a hint (tui.toasts)
        self._key_hint = broken_notification(
            strings.KEY_NOT_TYPED.format(text=quoted),
            self.size.width,
            "warning",
            _HINT_SECONDS,
        )
        self.post_message(Notify(self._key_hint))


def _shown_within(widget: Widget, container: Widget) -> bool:
    """Whether ``widget`` and its ancestors up to ``container`` are displayed."""
    for node in widget.ancestors_with_self:
        if isinstance(node, Widget) and not node.display:
            return False
        if node is container:
            return True
    return True
