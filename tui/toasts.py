"""How messages (Textual's toasts) are shown, in one place: the app calls :func:`show_alone`
for every notification.

- One at a time: a new message replaces the one on screen, whatever their kinds. A message
  that stopped being true, or belongs to a screen left, is withdrawn (:func:`withdraw`).
- Information is a hint (what ctrl+n did, a save, a link opened): it stays
  :data:`HINT_SECONDS` at most. Warnings and errors keep the time they were given.
- Its text is broken into lines by the lesson's rules (:func:`engine.linebreak.break_text`:
  UAX #14, no line starting with ``，``), shown literally; Textual would wrap it at spaces only,
  and cut a run of Chinese anywhere. The lines are broken again when the terminal is resized.
- A bar across the whole width, at the top under the header; at the bottom above the footer
  when the focused widget is in the top rows and not in the bottom ones (a quiz answer, a
  Ledger field scrolled up), so the field being typed in is never hidden, and when the focus
  is in the lesson scrolled to a section's start, so its title is in sight (ctrl+n goes
  there). At the top it starts under a row of tabs right below the header (the side pane's),
  which stays in sight. Its text wraps within the screen and it never covers the header or
  the footer (``app.tcss``).

Why the whole width: Textual 8.2.8 repaints only the cells a toast covered when it goes
(``Compositor.render_partial_update``), and renders each widget's lines cropped to that area
(``Widget.render_lines`` with the crop). Where a toast's side edge falls inside a double-width
character (Chinese text beside it), the crop turns the covered half into a space, the terminal
erases the whole character when that space is written over its first cell, and its other half
is outside the repainted area: the character stayed blank until the next full repaint (a
resize). A toast whose sides are the screen's sides has no such edge. Textual's
division (``Compositor._render_chops`` cuts every line at every widget's edge,
``Strip.divide``) also blanks a double-width character *of the toast's own text* that lies
across the edge of a pane under it (Textualize/textual#6357, open); the main screen's
compositor (tui/compositor.py) cuts a line only where the widget in front changes, and writes a
character across the end of a repainted region (the outline's, under the message) whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from weakref import WeakSet

from rich.cells import cell_len
from textual.app import App
from textual.css.query import NoMatches
from textual.geometry import Region, Spacing
from textual.notifications import Notification, SeverityLevel
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets._toast import Toast, ToastRack

from engine.linebreak import break_text

# The longest a hint (an information message) stays, in seconds.
HINT_SECONDS = 4.0
# The toast's frame: its left border and one column of padding on each side.
_FRAME_COLUMNS = 3


def hint_timeout(severity: str, timeout: float | None) -> float | None:
    """The timeout a message gets: information at most :data:`HINT_SECONDS`; others as given
    (None: Textual's default)."""
    if severity != "information":
        return timeout
    return HINT_SECONDS if timeout is None else min(timeout, HINT_SECONDS)


@dataclass
class BrokenNotification(Notification):
    """A notification whose ``message`` (what the toast shows) is ``text`` broken into lines
    for the screen's width by :func:`toast_lines`."""

    text: str = ""


def broken_notification(
    text: str, screen_width: int, severity: SeverityLevel, timeout: float
) -> BrokenNotification:
    """A notification of ``text`` shown literally, its lines broken for a screen
    ``screen_width`` cells wide (and again when it is resized: :func:`rebreak`), as
    ``App.notify`` makes them: a plain ``Notification`` is wrapped by Textual at its spaces only
    (the "not typed" hint in Chinese at 40 columns broke after ``F1``, half a line left empty)."""
    return BrokenNotification(
        toast_lines(text, screen_width), "", severity, timeout, markup=False, text=text
    )


def toast_lines(text: str, screen_width: int) -> str:
    """``text`` broken by the lesson's rules into the lines of a toast across a screen
    ``screen_width`` cells wide."""
    width = max(1, screen_width - _FRAME_COLUMNS)
    return "\n".join(line.rstrip(" ") for line in break_text(text, width))


def rebreak(app: App[Any], screen_width: int) -> None:
    """Break the messages on screen again for a terminal now ``screen_width`` cells wide."""
    changed = False
    for notification in app._notifications:
        if isinstance(notification, BrokenNotification):
            notification.message = toast_lines(notification.text, screen_width)
            changed = True
    if not changed:
        return
    for toast in app.screen.query(Toast):
        toast.refresh(layout=True)
    try:
        rack = app.screen.get_child_by_type(ToastRack)
    except NoMatches:
        return
    rows = max((toast_rows(n.message, screen_width) for n in app._notifications), default=1)
    place(app, rack, rows)


def toast_rows(message: str, width: int) -> int:
    """How many rows ``message`` takes in a toast across a screen ``width`` cells wide."""
    text_width = max(1, width - _FRAME_COLUMNS)
    return sum(max(1, -(-cell_len(line) // text_width)) for line in message.split("\n"))


def show_alone(app: App[Any], notification: Notification) -> None:
    """Withdraw every message but ``notification`` and place it (see module docstring)."""
    for other in list(app._notifications):
        if other is not notification:
            # No public call withdraws one toast; Textual is pinned exactly (pyproject.toml).
            app._unnotify(other, refresh=False)
    try:
        rack = app.screen.get_child_by_type(ToastRack)
    except NoMatches:
        return
    # ToastRack.show removes only the toasts already mounted: one shown a moment ago (two
    # messages from one key) would stay beside the new one.
    new_id = ToastRack._toast_id(notification)
    for holder in list(rack.children):
        if holder.id != new_id:
            holder.remove()
    rows = toast_rows(notification.message, app.screen.size.width)
    place(app, rack, rows)
    # Again once laid out: ctrl+n scrolls the field it focused into view after this.
    app.call_after_refresh(place, app, rack, rows)
    screen = app.screen
    if screen not in _FOLLOWED:
        # And whenever the screen is laid out again while a message is up (the side pane and
        # its tabs hidden by F7 or F6, the focus moved).
        _FOLLOWED.add(screen)
        screen.screen_layout_refresh_signal.subscribe(app, _place_again, immediate=True)


# The screens whose new layouts place the message on them again.
_FOLLOWED: WeakSet[Screen[Any]] = WeakSet()


def _place_again(screen: Screen[Any]) -> None:
    """Place the message on ``screen`` again for its new layout, if one is shown."""
    app = screen.app
    if not app._notifications or screen is not app.screen:
        return
    try:
        rack = screen.get_child_by_type(ToastRack)
    except NoMatches:
        return
    width = screen.size.width
    place(app, rack, max(toast_rows(n.message, width) for n in app._notifications))


def withdraw(app: App[Any], *severities: str) -> None:
    """Take the messages of ``severities`` off the screen: what they said is no longer so (a
    refused answer's warning once an answer is taken), or belongs to the screen being left (a
    lesson's hint when the quiz opens over it)."""
    for notification in list(app._notifications):
        if notification.severity in severities:
            app._unnotify(notification)


def withdraw_text(app: App[Any], text: str) -> None:
    """Take the messages saying ``text`` off every screen: their sayer knows it is no longer so
    (ctrl+n's step, once done). A message that replaced it, or timed out, is left alone."""
    for notification in list(app._notifications):
        if isinstance(notification, BrokenNotification) and notification.text == text:
            withdraw_one(app, notification)


def withdraw_one(app: App[Any], notification: Notification) -> None:
    """Take ``notification`` off every screen of the stack: under a dialog the screen below
    still shows its toast (Textual refreshes only the top screen's), until it times out."""
    if notification in app._notifications:
        app._unnotify(notification)
    toast_id = ToastRack._toast_id(notification)
    for screen in app.screen_stack:
        for rack in screen.query_children(ToastRack):
            for holder in list(rack.children):
                if holder.id == toast_id:
                    holder.remove()


def screen_changed(app: App[Any]) -> None:
    """A screen was opened over another, or closed: its hints (information) belong to the screen
    left and go; the other messages stay, drawn on the screen shown only. Textual shows every
    message on a screen as it is shown, and a dialog's screen lets the one below show around it:
    each drew its own toast, one over the tab row and one under it."""
    for notification in list(app._notifications):
        if notification.severity == "information":
            withdraw_one(app, notification)
    for screen in app.screen_stack[:-1]:
        for rack in screen.query_children(ToastRack):
            rack.remove_children()


def _title_under(screen: Screen[Any], focused: Widget, top_rows: Region) -> bool:
    """Whether the focus is in the lesson (the reading pane, ``#reading``) scrolled to its
    section's start, with the section's title in ``top_rows``: where ctrl+n has just put it."""
    try:
        reading = screen.query_one("#reading")
    except NoMatches:  # another screen (the quiz)
        return False
    return (
        reading in focused.ancestors_with_self
        and reading.region.overlaps(top_rows)
        and reading.scroll_y < top_rows.height
    )


def place(app: App[object], rack: ToastRack, rows: int) -> None:
    """Dock the toasts at the top, under the header and under a row of tabs right below it
    (the side pane's, beside the lesson: ctrl+n's message covered them for its 4 seconds);
    at the bottom above the footer when the focused widget is in the top ``rows`` rows there
    and not in the bottom ones, or the focus is in the lesson scrolled to its section's title
    (the lesson itself focused reaches the bottom rows: there the message covers lines read
    later, not the title read first)."""
    screen = app.screen
    width, height = screen.size
    under_header = Region(0, 1, width, 1)
    # By the type's name: no import of Textual's tabs on the start-up path for it.
    tabs = [tab.region for tab in screen.query("Tabs") if tab.display and tab.region]
    top = max((region.bottom for region in tabs if region.overlaps(under_header)), default=1)
    focused = screen.focused
    bottom = False
    if focused is not None and focused.region:
        shown = focused.region
        top_rows = Region(0, top, width, rows)
        bottom_rows = Region(0, max(1, height - 1 - rows), width, rows)
        in_bottom_rows = shown.overlaps(bottom_rows)
        bottom = (shown.overlaps(top_rows) and not in_bottom_rows) or (
            _title_under(screen, focused, top_rows)
            and (focused.id == "reading" or not in_bottom_rows)
        )
    rack.set_class(bottom, "-bottom")
    margin = Spacing(0, 0, 1, 0) if bottom else Spacing(top, 0, 0, 0)
    if rack.styles.margin != margin:
        rack.styles.margin = margin
