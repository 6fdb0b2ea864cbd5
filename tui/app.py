"""The shardbook Textual app: loads the lesson and the learner's progress, saves, quits.

The app owns the lesson (read-only, from ``engine.lesson``), the learner's progress (an
``engine.progress.LessonProgress`` edited in place) and the settings (``engine.settings``). The
lesson UI is :class:`tui.screens.main.MainScreen` (outline, reading pane, side pane and their
keys); the app hands it the opened lesson, and its widgets post messages up when the learner
types: the app records the change and saves within ``autosave_delay`` seconds, and always before
quitting. Only the keys that work on every screen (help, save, quit) are the app's own.

Where each lesson was left (``engine.resume``: section, scroll, side tab, pane choices) is kept in
the settings under ``resume.<lesson id>``: restored when the lesson opens, written
:data:`PLACE_DELAY` seconds after it last moved, and when the lesson is left, the app quits,
suspends or gets a signal.

Its length (about 1,150 lines) is the app's policy kept in one place: opening a lesson, the progress
lock, saving (autosave, rescue copies, quit and signals), the status line and the messages the
screens post up all share the progress object and the dirty/saved state; the lesson UI lives in
``tui.screens`` (main, resume, jumps, guide, quiz, search, help, export).
"""

from __future__ import annotations

import asyncio
import copy
import gc
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.command import CommandPalette
from textual.driver import Driver
from textual.message import Message
from textual.notifications import Notify, SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from engine.errors import ContentError, ProgressError, ShardbookError, quoted
from engine.i18n import (
    LANGUAGE_NAMES,
    LANGUAGES,
    N_,
    choose_language,
    current_language,
    fill,
    gettext,
    set_language,
)
from engine.lesson import (
    Lesson,
    LessonRef,
    Section,
    discover_lessons,
    lesson_index_path,
    load_lesson_cached,
)
from engine.lesson_reveals import note_lesson_reveal
from engine.linebreak import save_analysis_cache
from engine.paths import resolve_content_dir, resolve_progress_dir
from engine.plan import ReviewOutlook, build_plan, describe_step
from engine.progress import (
    STATUS_LABELS,
    LessonProgress,
    ProgressStore,
    Status,
    describe_os_error,
)
from engine.resume import FIELD_CHECKS, ResumeState
from engine.session import StudySession, format_duration, render_summary, summarize
from engine.settings import Settings, SettingsStore
from engine.timefmt import local_clock, utc_now
from tui import strings
from tui.commands import APP_BINDINGS, CommandsProvider, LanguagePalette, PaletteEntry
from tui.guard import end_on_signal, fallback_folders, install_exit_signals, write_rescue_copy
from tui.keys import KeyOrderApp
from tui.options import QuizOptions
from tui.screens.guide import SectionRead
from tui.screens.layout import META_ID
from tui.screens.main import MainScreen
from tui.settle import settle
from tui.styles import QUIZ, use_stylesheet
from tui.toasts import (
    BrokenNotification,
    hint_timeout,
    rebreak,
    screen_changed,
    show_alone,
    toast_lines,
    withdraw,
)
from tui.widgets.header import PART_SEPARATOR
from tui.widgets.side import ChoicesChanged
from tui.widgets.study import AnswerLooked

if TYPE_CHECKING:
    from tui.widgets.calculator import CalculatorPane
    from tui.widgets.notes import NoteBox, SelfCheckBox

DEFAULT_LESSON = "S15"
SYSTEM_COMMAND_TEXTS = (
    N_("Theme"),
    N_("Change the current theme"),
    N_("Quit"),
    N_("Quit the application as soon as possible"),
    N_("Keys"),
    N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"),
    N_("Minimize the widget and restore to normal size"),
    N_("Maximize"),
    N_("Maximize the focused widget"),
    N_("Screenshot"),
    N_("Save an SVG 'screenshot' of the current screen"),
    # The command palette's key in the footer (App.COMMAND_PALETTE_BINDING's description).
    N_("palette"),
    # The key a Select's open list shows in the footer (SelectOverlay's BINDINGS).
    N_("Dismiss menu"),
)
"""The titles and help of Textual's system commands (``App.get_system_commands``, Textual 8.2.8)
and the descriptions of Textual's own keys that the footer shows, for the catalog."""
EXPORT_GROUP = "export"
LOCK_GROUP = "progress-lock"
# Seconds after start-up when the line-break analyses are written to the cache.
ANALYSIS_SAVE_DELAY = 3.0
LOCK_DELAY = 0.2
"""Seconds after the first paint when the progress folder's lock is taken: after the two or
three frames that complete the first screen (about 0.1 s on a 2-core machine)."""
PLACE_DELAY = 2.0
"""Seconds after the last move (section, scroll, side tab, a pane's choice) before where the
lesson was left is written to the settings."""
# F9 on an unfinished plan lists this many of the steps left, then says how many more.
COMPLETE_LISTED = 12


class BackgroundSaved(Message):
    """The autosave's write, running in its thread, has finished (written or failed)."""


class ShardbookApp(KeyOrderApp[int]):
    """The study app. Build it with :func:`make_app` (the CLI and the tests share it)."""

    CSS_PATH = "app.tcss"
    TITLE = strings.APP_TITLE
    BINDINGS = APP_BINDINGS
    COMMANDS = App.COMMANDS | {CommandsProvider}
    # The state the header's status line shows. Reactive: a change recomputes ``status_line``
    # (compute_status_line) and its watcher writes the header; nothing updates it by hand. The
    # progress is mutated in place as the learner works: mark_dirty says so (mutate_reactive).
    progress: var[LessonProgress] = var(LessonProgress(DEFAULT_LESSON), init=False)
    dirty = var(False, init=False)
    save_error = var("", init=False)
    last_saved = var("", init=False)
    plan_figure = var("", init=False)
    read_only = var(False, init=False)
    # The interface language: its texts are read when the line is computed.
    language = var("", init=False)
    status_line = var("", init=False)
    # False until on_mount applied the settings (see watch_theme).
    _settings_applied = False
    # Why settings.yaml could not be written last time ("" when it could).
    _settings_error = ""
    # True while run() keeps the garbage collector paused for the first frame.
    _collector_paused = False

    def __init__(
        self,
        lesson_id: str | None,
        content_dir: Path,
        progress_dir: Path,
        autosave_delay: float = 0.5,
        quiz: QuizOptions | None = None,
        language: str | None = None,
    ) -> None:
        super().__init__()
        # None: the quiz's defaults (built on F12, so fsrs is not imported at start-up).
        self.quiz_options = quiz
        self.content_dir = content_dir
        # Locked after the first frame (on_mount), or before when a save or an unreadable file
        # needs it first.
        self.store = ProgressStore(progress_dir, locking=True)
        self.autosave_delay = autosave_delay
        self.lesson_refs: list[LessonRef] = []
        self.lesson: Lesson | None = None
        self.lesson_error: str = ""
        # Reads the open lesson's error again: after a language switch, in the new language.
        self._lesson_error_again: Callable[[], str] = lambda: self.lesson_error
        self.progress = LessonProgress(lesson_id or DEFAULT_LESSON)
        # Other lessons' progress with quiz drafts not yet saved (a quiz over several lessons),
        # by lesson id: saved with the open lesson's progress, and rescued with it.
        self.unsaved_quiz: dict[str, LessonProgress] = {}
        self._quit_confirmed = False
        self._save_pending = False
        # Edits recorded so far (mark_dirty), and how many a background save held when it was
        # made ready: the progress is clean after it only if no edit came meanwhile.
        self._edits = 0
        self._edits_in_write = 0
        # The autosave came while a background write ran: save again when it lands.
        self._save_after_write = False
        self._requested_lesson = lesson_id or DEFAULT_LESSON
        self.settings_store = SettingsStore(progress_dir)
        self.settings = self._load_settings()
        # The interface language: --lang, else the saved setting, else the locale.
        set_language(choose_language(language, self.settings.get("language")))
        self.main_screen = MainScreen(
            side=self.settings.get("layout.side"),
            reading=self.settings.get("layout.reading"),
            first_run=not self.settings.get("hints.first_run_seen"),
            session_line=self.session_line,
            app_entries=self.palette_entries,
            rate_objective=self.rate_objective,
            record_text=self.record_text,
            record_form=self.record_form,
        )
        self.lesson_file_errors: list[ContentError] = []
        self._exported_since_edit = False
        self._edited_since_export = False
        self._remove_signal_handlers: Callable[[], None] = lambda: None
        self._ending: asyncio.Task[None] | None = None
        # Saves asked for by a key, waiting for what was typed before it (_when_settled).
        self._settling: set[asyncio.Task[None]] = set()
        # Where the open lesson was left, as restored (side panes built later read it).
        self.resumed = ResumeState()
        self._place_timer: Timer | None = None
        # Guided study: this sitting with the lesson (logged on each save) and the plan's
        # figure shown in the header.
        self.study_session: StudySession | None = None

    # ----------------------------------------------------------------- start-up
    def run(self, *args: Any, **kwargs: Any) -> int | None:
        """Run the app (Textual's :meth:`App.run`) with Python's cyclic garbage collector
        paused until the first frame is drawn.

        Nearly every object made before then lives as long as the app (modules, classes, the
        screen's widgets, the lesson), so a collection finds little to free, and a full one
        scans all of them: about 20-30 ms before the first frame on a 2-core machine, plus the
        younger generations' passes. The objects made so far (the modules above all) are moved
        out of the collector's reach (``gc.freeze``); collecting resumes after the first frame
        (:meth:`_first_frame_drawn`), whether or not it was paused before. ``shardbook``
        pauses it from before the app's modules are imported (``cli.main.run_tui``)."""
        self._collector_paused = True
        gc.disable()
        gc.freeze()
        return super().run(*args, **kwargs)

    def _first_frame_drawn(self) -> None:
        """Resume the collector paused by :meth:`run`."""
        if self._collector_paused:
            self._collector_paused = False
            gc.enable()

    # ----------------------------------------------------------------- screens, settings
    def get_default_screen(self) -> Screen[Any]:
        return self.main_screen

    def _load_settings(self) -> Settings:
        try:
            settings = self.settings_store.load()
        except ProgressError as error:
            settings = Settings()
            settings.problems.append(str(error))
        return settings

    def _apply_settings(self) -> None:
        """The theme from the settings, and their problems said once. (The first-run hint is
        remembered as seen once it was read: ``MainScreen.hint_seen``.)"""
        self._settings_applied = True
        theme = self.settings.get("theme")
        if theme in self.available_themes:
            self.theme = theme
        else:
            self.settings.problems.append(
                gettext("theme: {theme} is not a theme here; using the default").format(
                    theme=repr(theme)
                )
            )
        for problem in self.settings.problems:
            self.notify(f"{self.settings_store.path}: {problem}", severity="warning", timeout=10)
        self.save_settings()

    def save_settings(self) -> str:
        """Write ``settings.yaml`` if a setting changed and this window holds the progress
        folder's lock (a read-only second window keeps its choices in memory, and writes them
        once it holds the lock). Returns why nothing was written (``""`` when it was, or when
        nothing changed); a write error is also told to the learner, once."""
        if not self.settings.changed:
            return ""
        try:
            if not self.store.lock():
                return strings.SETTINGS_READ_ONLY
            self.settings_store.save(self.settings)
        except ProgressError as error:
            if str(error) != self._settings_error:  # said once, not on every F6
                self.notify(str(error), severity="warning", timeout=10)
            self._settings_error = str(error)
            return str(error)
        self._settings_error = ""
        return ""

    @on(MainScreen.SettingChanged)
    def _setting_changed(self, event: MainScreen.SettingChanged) -> None:
        self.settings.set(event.key, event.value)
        self.save_settings()

    def watch_theme(self, theme: str) -> None:
        # Before the settings are applied, a theme change is Textual's own default.
        if self._settings_applied and self.settings.get("theme") != theme:
            self.settings.set("theme", theme)
            self.save_settings()

    def on_mount(self) -> None:
        refs, errors = discover_lessons(self.content_dir, lesson_index_path(self.content_dir))
        self.lesson_refs = refs
        self.lesson_file_errors = [error for error in errors if error.path != str(self.content_dir)]
        if self.lesson_file_errors:
            count = len(self.lesson_file_errors)
            self.notify(strings.lesson_files_unreadable(count), severity="warning")
        self._apply_settings()
        self._remove_signal_handlers = install_exit_signals(self._exit_signal)
        # ctrl+z, the palette or SIGTSTP from outside: save before the process stops.
        self.app_suspend_signal.subscribe(self, lambda _app: self._save_all(), immediate=True)
        # A dialog opened over the screen takes the hint away (tui.toasts).
        self.screen_change_signal.subscribe(
            self, lambda _screen: screen_changed(self), immediate=True
        )
        self.open_lesson(self._requested_lesson)
        if self.quiz_options is not None and self.quiz_options.open_at_start:
            self.action_quiz()
        # The line breaks computed for the first screens, for the next start's first frame.
        self.set_timer(ANALYSIS_SAVE_DELAY, save_analysis_cache)
        self.call_after_refresh(self._first_frame_drawn)
        # The progress folder's lock (13-15 ms with filelock's import, in a thread) once the
        # first frame has settled: LOCK_DELAY after the first paint (the frames that complete
        # it, however slow a loaded machine makes them, do not wait for it). A readable
        # progress file is read without it, and whatever needs it first (a save, an unreadable
        # file to move aside, the settings written) takes it then.
        self.call_after_refresh(self.set_timer, LOCK_DELAY, self._take_lock)

    # ----------------------------------------------------------------- lessons
    def _lesson_path(self, lesson_id: str) -> Path | None:
        for ref in self.lesson_refs:
            if ref.id == lesson_id:
                return ref.path
        for suffix in (".yaml", ".yml"):
            candidate = self.content_dir / f"{lesson_id}{suffix}"
            if candidate.is_file():
                return candidate
        return None

    def open_lesson(self, lesson_id: str) -> None:
        """Show lesson ``lesson_id`` with the learner's progress; a bad file is a message."""
        if not self._leave_lesson():
            return
        self.lesson, self.lesson_error = self._load_lesson(lesson_id)
        self._lesson_error_again = lambda: self._load_lesson(lesson_id)[1]
        try:
            loaded = self.store.load(lesson_id)
            self.progress = loaded.progress
            if loaded.message:
                self.notify(
                    strings.QUARANTINED.format(message=loaded.message),
                    severity="warning",
                    timeout=15,
                    markup=False,
                )
        except ProgressError as error:
            self.progress = LessonProgress(lesson_id)
            self.save_error = str(error)
            self.notify(str(error), severity="error", timeout=15, markup=False)
        self.dirty = False
        self.study_session = (
            StudySession(self.lesson, self.progress, utc_now()) if self.lesson is not None else None
        )
        self.main_screen.show_lesson(self.lesson, self.lesson_error, self.progress)
        self.resumed = ResumeState()
        self.plan_figure = ""
        if self.lesson is not None:
            outlook = ReviewOutlook(at=utc_now())  # the figure does not count the reviews
            self.plan_figure = build_plan(self.lesson, self.progress, reviews=outlook).figure
            self.resumed = ResumeState.from_data(self.settings.get("resume").get(lesson_id))
            self.main_screen.restore_place(self.resumed)

    def _load_lesson(self, lesson_id: str) -> tuple[Lesson | None, str]:
        """Lesson ``lesson_id``, or None and why it cannot be opened."""
        path = self._lesson_path(lesson_id)
        try:
            if path is None:
                raise ContentError(
                    str(self.content_dir),
                    None,
                    strings.NO_SUCH_LESSON.format(lesson=quoted(lesson_id)),
                )
            return load_lesson_cached(path), ""
        except ContentError as error:
            return None, str(error)

    def _read_lesson_errors_again(self) -> None:
        """The broken lesson files' messages in the interface language now (the index reads a
        file whose error it cached in another language again)."""
        if self.lesson_file_errors:
            _refs, errors = discover_lessons(self.content_dir, lesson_index_path(self.content_dir))
            self.lesson_file_errors = [e for e in errors if e.path != str(self.content_dir)]
        if self.lesson is None:
            self.lesson_error = self._lesson_error_again()

    def _leave_lesson(self) -> bool:
        """Save before showing another lesson. Unsaved text that was not exported either keeps
        the learner on this lesson (switching would drop it from memory)."""
        self.record_place()
        if self.lesson is None or self.save_now() or not self.dirty:
            return True
        if self._exported_since_edit:
            return True
        self.notify(strings.SWITCH_BLOCKED, severity="error", timeout=20)
        return False

    def show_broken_lesson(self, error: ContentError) -> None:
        """Show why a lesson file that could not even be listed cannot be opened."""
        if not self._leave_lesson():
            return
        self.lesson = None
        self.lesson_error = str(error)
        self._lesson_error_again = lambda: next(
            (str(e) for e in self.lesson_file_errors if e.path == error.path), str(error)
        )
        self.main_screen.show_lesson(None, self.lesson_error, self.progress)

    @work(thread=True, exclusive=True, group=LOCK_GROUP, exit_on_error=False)
    def _take_lock(self) -> bool:
        """Take the progress folder's lock off the event loop: filelock's import is 13-15 ms
        of the interpreter, and 40-60 ms of the event loop's time when a quiz opened at
        start-up is reading lessons in another thread meanwhile. The outcome is told by
        :meth:`_lock_taken`."""
        return self.store.lock()

    def _lock_taken(self, worker: Worker[bool]) -> None:
        if worker.state == WorkerState.ERROR:
            self.save_error = str(worker.error)
            message = strings.SAVE_FAILED.format(error=worker.error)
            self.notify(message, severity="error", timeout=20, markup=False)
            return
        self.read_only = self.store.read_only
        if worker.result is False:
            self.notify(strings.READ_ONLY_NOTICE, severity="warning", timeout=30)

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver with the resume guard and hang-up handling of tui.driver."""
        driver_class = super().get_driver_class()
        # By name first: headless (tests, benchmarks) needs neither module imported.
        if sys.platform == "win32" or driver_class.__name__ != "LinuxDriver":
            return driver_class
        from textual.drivers.linux_driver import LinuxDriver

        from tui.driver import ShardbookDriver

        return ShardbookDriver if driver_class is LinuxDriver else driver_class

    def _exit_signal(self, signum: int) -> None:
        """SIGINT, SIGTERM or SIGHUP: save what is typed so far (or write a rescue copy),
        release the lock, exit with 128 + signum (:func:`tui.guard.end_on_signal`). Another
        signal meanwhile changes nothing."""
        if self._ending is None:
            # Long work in threads (a pipeline simulation) stops at its next check instead of
            # competing with the save; the process ends when those threads have returned.
            self.workers.cancel_all()
            self._ending = end_on_signal(self, 128 + signum, self._save_and_unlock)

    def _save_and_unlock(self) -> str:
        """The last save: the progress file, else a rescue copy. Returns what to tell the
        learner (``""`` when saved)."""
        message = ""
        self.record_place()
        if not self.save_now() and self.unsaved:
            message = self._write_rescue_copies()
        self.store.unlock()
        return message

    @property
    def unsaved(self) -> bool:
        """Whether any of the learner's text is not saved yet (this lesson's or a quiz draft's
        of another lesson)."""
        return self.dirty or bool(self.unsaved_quiz)

    def _write_rescue_copies(self) -> str:
        """A rescue copy of every progress not saved (:func:`tui.guard.write_rescue_copy`).
        Returns what to tell the learner."""
        pending = [self.progress] if self.dirty else []
        pending += self.unsaved_quiz.values()
        messages = []
        for progress in pending:
            path, why = write_rescue_copy(progress, self.store.folder)
            rescued = strings.RESCUED.format(path=path) if path else ""
            messages.append(rescued or strings.NOT_RESCUED.format(error=why))
        return " ".join(messages)

    def on_unmount(self) -> None:
        self._remove_signal_handlers()
        self.store.unlock()
        save_analysis_cache()

    @property
    def sections(self) -> tuple[Section, ...]:
        return self.lesson.sections if self.lesson is not None else ()

    # ----------------------------------------------------------------- learner input
    # By name, not @on: the answer and note boxes' module (and Textual's TextArea) is imported
    # when a section or pane with boxes is first shown, not before the first frame.
    def on_note_box_edited(self, event: NoteBox.Edited) -> None:
        self.record_text(event.kind, event.item_id, event.text)

    def record_text(self, kind: str, item_id: str, text: str) -> None:
        """Record the learner's ``text`` for item ``item_id`` of ``kind`` (``answers``,
        ``reflections`` or ``notes``), as a box's edit does; nothing when it is there already.
        Handed down to the main screen too, which takes in the focused box's text before a key
        that reads the plan (:meth:`tui.screens.main.MainScreen.take_in_focused_edit`)."""
        targets = {
            "answers": self.progress.answers,
            "reflections": self.progress.reflections,
            "notes": self.progress.notes,
        }
        target = targets[kind]
        if target.get(item_id, "") == text:
            return
        target[item_id] = text
        self.progress.touch()
        self.mark_dirty()

    def on_self_check_box_reveal_requested(self, event: SelfCheckBox.RevealRequested) -> None:
        box = event.box
        if not self.progress.answers.get(box.item.id, "").strip():
            self.notify(strings.REVEAL_FIRST_ANSWER, severity="warning")
            return
        box.show_key_points()
        if box.item.id not in self.progress.revealed:
            self.progress.revealed.append(box.item.id)
        # The quiz does not ask this question again today (engine.lesson_reveals).
        note_lesson_reveal(self.progress, box.item.id, utc_now())
        self.mark_dirty()

    # By name, not @on: the calculators' module (and its widgets) is imported when a side tab is
    # first built, not before the first frame.
    def on_calculator_pane_form_changed(self, event: CalculatorPane.FormChanged) -> None:
        self.record_form(event)

    def record_form(self, change: CalculatorPane.FormChanged) -> None:
        """Record a calculator's form and figures the learner changed (``change.by_learner``);
        nothing when they are there already. Handed down to the main screen too, as
        :meth:`record_text` is."""
        if not change.by_learner:
            return
        changed = self.progress.save_form(change.form_name, change.values, change.last_good)
        if change.figures is not None and (
            self.progress.figures.get(change.figure_name) != change.figures
        ):
            self.progress.figures[change.figure_name] = dict(change.figures)
            changed = True
        if not changed:
            return
        self.progress.touch()  # a calculator worked is the lesson studied, as a note is
        self.mark_dirty()

    # ----------------------------------------------------------------- where the lesson was left
    @on(MainScreen.PlaceChanged)
    @on(ChoicesChanged)
    def _place_changed(self) -> None:
        # One write PLACE_DELAY seconds after the last move, not one per scroll step.
        if self._place_timer is None:
            self._place_timer = self.set_timer(PLACE_DELAY, self.record_place)
        else:
            self._place_timer.reset()

    @property
    def place_pending(self) -> bool:
        """Whether where the lesson was left moved and waits to be written (:data:`PLACE_DELAY`
        seconds after the last move, or when the lesson is left)."""
        return self._place_timer is not None

    def record_place(self) -> None:
        """Keep where the open lesson is now in ``resume.<lesson id>`` and write the settings
        (when this window holds the lock; :meth:`save_settings`)."""
        if self._place_timer is not None:
            self._place_timer.stop()
            self._place_timer = None
        if self.lesson is None or not self.main_screen.is_mounted:
            return
        place = self.main_screen.place()
        if place is None:
            return
        entry = place.to_data()
        resume = self.settings.get("resume")
        previous = resume.get(self.lesson.id)
        if isinstance(previous, dict):
            # Keys a newer shardbook wrote are kept.
            kept = {k: v for k, v in previous.items() if k not in FIELD_CHECKS and k != "panes"}
            entry = {**kept, **entry}
        if previous != entry:
            resume[self.lesson.id] = entry
            self.settings.set("resume", resume)
            self.save_settings()

    def _save_all(self) -> bool:
        """Where the lesson was left, then the progress (ctrl+z)."""
        self.record_place()
        return self.save_now()

    def mark_dirty(self) -> None:
        """Record that progress changed; it is saved within ``autosave_delay`` seconds."""
        self.dirty = True
        self._edits += 1
        self._quit_confirmed = False
        self._exported_since_edit = False
        self._edited_since_export = True
        if not self._save_pending:
            self._save_pending = True
            self.set_timer(self.autosave_delay, self._autosave)
        self.mutate_reactive(ShardbookApp.progress)

    def quiz_draft_changed(self, progress: LessonProgress) -> None:
        """The quiz kept or dropped an answer typed and not submitted (``progress.drafts``):
        saved as other typing is, within ``autosave_delay`` seconds and before quitting."""
        if progress is not self.progress:
            self.unsaved_quiz[progress.lesson_id] = progress
        self.mark_dirty()

    def _autosave(self) -> None:
        self._save_pending = False
        if self.unsaved:
            self._save_in_background()

    def _save_in_background(self) -> None:
        """The autosave: the open lesson's progress is made ready here (merge check, YAML dump)
        and written and fsynced in a thread (:meth:`ProgressStore.save_in_background`), so a
        key typed meanwhile is not kept waiting for the disk. One write at a time, in order:
        an autosave while one runs is done when it lands. Quitting, a signal, switching lessons
        and ctrl+s save with :meth:`save_now`, which finishes a write in flight first."""
        if self.store.writing:
            self._save_after_write = True
            return
        self._record_background()  # a write that landed before its callback ran
        if self.study_session is not None:
            self.study_session.record(self.progress, utc_now())
        saved_drafts = self._save_quiz_drafts()
        if self.lesson is None:
            return
        if not self.dirty:
            self._saved_all(saved_drafts)
            return
        edits = self._edits

        def landed() -> None:  # in the writing thread (post_message is thread-safe)
            self.post_message(BackgroundSaved())

        try:
            self.store.save_in_background(self.progress, landed)
        except ShardbookError as error:
            self._save_failed(error)
            return
        finally:
            self.read_only = self.store.read_only
        self._edits_in_write = edits
        self._note_merge()

    @on(BackgroundSaved)
    def _background_saved(self) -> None:
        """A background write finished: the status line says so, or the error is told; then
        the autosave that waited for it runs."""
        if self.store.writing:  # a newer write started meanwhile; its own call comes
            return
        self._record_background()
        if self._save_after_write:
            self._save_after_write = False
            self._autosave()

    def _record_background(self) -> None:
        background = self.store.finish_background()
        if background is None:  # none, or save_now already finished and recorded it
            return
        if background.error is not None:
            self._save_failed(background.error)
        elif background.lesson_id == self.progress.lesson_id:
            if self._edits == self._edits_in_write:
                self.dirty = False
            self._saved_all(not self.unsaved_quiz)

    def _saved_all(self, saved: bool) -> None:
        """The status after a save: the time it was saved, the plan's marks redrawn."""
        if saved:
            self.save_error = ""
            self.last_saved = local_clock(utc_now())
        self._refresh_plan()

    def _refresh_plan(self) -> None:
        if self.lesson is not None and self.main_screen.is_mounted:
            figure = self.main_screen.refresh_study()
            if figure != self.plan_figure:
                self.plan_figure = figure

    def save_now(self) -> bool:
        """Log this session (:meth:`StudySession.record`) and save the progress file now; the
        plan's marks are redrawn where they changed. Returns False (and tells the learner) when
        the save failed."""
        if self.study_session is not None:
            self.study_session.record(self.progress, utc_now())
        saved = self._save_progress()
        saved = self._save_quiz_drafts() and saved
        self._refresh_plan()
        return saved

    def _save_quiz_drafts(self) -> bool:
        """Save the other lessons' progress holding quiz drafts; False when one failed (it
        stays pending, and the learner is told)."""
        for lesson_id, progress in list(self.unsaved_quiz.items()):
            try:
                self.store.save(progress)
            except ShardbookError as error:
                self.notify(strings.SAVE_FAILED.format(error=error), severity="error", timeout=20)
                return False
            del self.unsaved_quiz[lesson_id]
        return True

    def _save_progress(self) -> bool:
        if self.lesson is None:
            # No lesson was opened (a bad id or file): there is nothing of the learner's to keep,
            # and no progress file should appear for a lesson that does not exist.
            return True
        try:
            self.store.save(self.progress)
            self._note_merge()
        except ShardbookError as error:
            self._save_failed(error)
            return False
        finally:
            # A save asks for the folder's lock again: a window may have stopped being read-only.
            self.read_only = self.store.read_only
        self.dirty = False
        self.save_error = ""
        self.last_saved = local_clock(utc_now())
        return True

    def _note_merge(self) -> None:
        if self.store.merged:
            # Another window saved this lesson meanwhile; both windows' changes are kept.
            self.notify(strings.MERGED, severity="warning", timeout=15)
            self.main_screen.refresh_section()

    def _save_failed(self, error: ShardbookError) -> None:
        """Tell the learner why the save failed (once per distinct error); the header says
        "not saved" until a save succeeds."""
        if self.save_error != str(error):
            self.notify(
                strings.SAVE_FAILED.format(error=error),
                severity="error",
                timeout=20,
                markup=False,
            )
        self.save_error = str(error)

    def compute_status_line(self) -> str:
        """The header's status line: lesson, read-only or not saved, plan figure, lesson
        status, the last save's time. Its order is what a narrow header keeps
        (``tui/widgets/header.py`` drops parts from the end): the warnings right after the
        lesson."""
        parts = [self.progress.lesson_id]
        if self.read_only:
            parts.append(strings.READ_ONLY)
        if self.save_error:
            parts.append(strings.NOT_SAVED)
        if self.plan_figure and self.lesson is not None:
            parts.append(strings.PLAN_FIGURE.format(figure=self.plan_figure))
        parts.append(gettext(STATUS_LABELS[self.progress.status]))
        if self.last_saved and not self.save_error:
            parts.append(strings.SAVED_AT.format(time=self.last_saved))
        return PART_SEPARATOR.join(parts)

    def watch_status_line(self, line: str) -> None:
        self.sub_title = line

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is shown literally: they carry file paths, error texts and lesson
        ids, which may hold ``[`` (Widget.notify passes ``markup=True`` itself, so the default
        alone would not do); its lines are broken by the lesson's rules (:mod:`tui.toasts`)."""
        timeout = hint_timeout(severity, timeout)
        notification = BrokenNotification(
            toast_lines(message, self.size.width),
            title,
            severity,
            self.NOTIFICATION_TIMEOUT if timeout is None else timeout,
            markup=False,
            text=message,
        )
        self.post_message(Notify(notification))

    def on_resize(self, event: events.Resize) -> None:
        """The message on screen broken again for the new width."""
        rebreak(self, event.size.width)

    def on_notify(self, event: Notify) -> None:
        """A new message replaces the one on screen and is placed off the focused field
        (:mod:`tui.toasts`)."""
        show_alone(self, event.notification)

    # ----------------------------------------------------------------- actions
    def action_show_help(self) -> None:
        """F1: the keys of the screen shown and the focused pane's help (again: closed)."""
        from tui.screens.help import HelpScreen, help_rows

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        # The focused widget's help, else its nearest container's (a field inside a pane).
        focused = self.focused
        path = focused.ancestors_with_self if focused is not None else []
        help_text = next((text for node in path if (text := getattr(node, "HELP", ""))), "")
        keys, focused_keys = help_rows(self.screen, focused)
        # A pane's HELP is its English msgid (a class attribute): shown translated.
        self.push_screen(HelpScreen(gettext(help_text), keys, focused_keys))

    def action_quiz(self) -> None:
        """Open the quiz screen over the lesson (F12)."""
        from tui.screens.quiz import RETENTION_KEY, QuizContext, QuizScreen

        use_stylesheet(self, QUIZ)
        # A lesson's hint (what ctrl+n did) would cover the first question.
        withdraw(self, "information")

        def save_retention(value: float) -> str:
            self.settings.set(RETENTION_KEY, value)
            return self.save_settings()

        context = QuizContext(
            content_dir=self.content_dir,
            lesson=self.lesson,
            progress=self.progress,
            store=self.store,
            desired_retention=float(self.settings.get(RETENTION_KEY)),
            save_open_lesson=self.save_now,
            draft_changed=self.quiz_draft_changed,
            save_retention=save_retention,
            settings_path=self.settings_store.path,
            refs=self.lesson_refs,
        )
        self.push_screen(QuizScreen(self.quiz_options or QuizOptions(), context))

    def action_save(self) -> None:
        """ctrl+s: save now, with what was typed right before (:meth:`_when_settled`)."""
        self._when_settled(self._save_and_say)

    def _save_and_say(self) -> None:
        if self.save_now():
            self.notify(strings.SAVED_AT.format(time=self.last_saved), timeout=2)

    def action_toggle_complete(self) -> None:
        """F9: mark the lesson complete, asking first while steps of the plan are left (they are
        listed); on a complete lesson, back to the status the progress implies."""
        if self.lesson is None:
            self.notify(self.lesson_error, severity="error", markup=False)
            return
        self.main_screen.take_in_focused_edit()
        if self.progress.status == "complete":
            plan = build_plan(self.lesson, self.progress, reviews=ReviewOutlook(at=utc_now()))
            self._set_status(plan.implied_status)
            return
        plan = build_plan(self.lesson, self.progress)
        if plan.complete:
            self._set_status("complete")
            return
        from tui.widgets.confirm import ConfirmScreen

        left = [describe_step(step).replace("\n", " ") for step in plan.unfinished]
        shown = tuple(left[:COMPLETE_LISTED])
        if len(left) > COMPLETE_LISTED:
            shown += (strings.COMPLETE_MORE.format(count=len(left) - COMPLETE_LISTED),)
        question = strings.COMPLETE_QUESTION.format(
            lesson=self.lesson.id, counts=plan.counts.line()
        )
        self.push_screen(
            ConfirmScreen(question, shown, strings.COMPLETE_ASK),
            lambda yes: self._set_status("complete") if yes else None,
        )

    def _set_status(self, status: Status) -> None:
        self.progress.status = status
        if status == "complete":
            self.notify(strings.MARKED_COMPLETE)
        else:
            self.notify(strings.MARKED_BACK.format(status=gettext(STATUS_LABELS[status])))
        self.mark_dirty()
        if self.main_screen.current_section == META_ID:
            self.main_screen.refresh_section()

    # ----------------------------------------------------------------- guided study
    @on(SectionRead)
    def _section_read(self, event: SectionRead) -> None:
        if self.lesson is not None and self.progress.mark_read(event.section_id):
            self._read_on()

    def _read_on(self) -> None:
        """A section was read: saved like an edit, except in a read-only window, where only
        reading must not make quitting ask about unsaved text (the marks stay in memory and
        are saved with the next save that can write)."""
        self.progress.touch()
        if self.store.read_only:
            self.plan_figure = self.main_screen.refresh_study()
            self.mutate_reactive(ShardbookApp.progress)
            return
        self.mark_dirty()

    def rate_objective(self, objective_id: str, phase: str, level: str | None) -> None:
        """Record the learner's rating of objective ``objective_id`` for ``phase`` (``start`` or
        ``end``; ``level`` None: cleared). Handed down to the objectives in the reader and called
        by the rating key itself, not posted up: a ctrl+n typed with it (one burst) counts it.
        A message would climb one queue per ancestor and reach the app after ctrl+n, a priority
        binding, had counted the objectives left to rate."""
        self.progress.rate_objective(objective_id, phase, level)
        self.progress.touch()
        self.mark_dirty()

    @on(AnswerLooked)
    def _answer_looked(self, event: AnswerLooked) -> None:
        if self.progress.mark_looked(event.note_ids, utc_now()):
            self.mark_dirty()

    def session_summary_text(self, width: int | None = None) -> str:
        """This session summed up for the terminal (:func:`engine.session.render_summary`,
        broken to ``width`` cells when given; imports the quiz engine for the reviews), ``""``
        when no lesson is open."""
        if self.lesson is None or self.study_session is None:
            return ""
        record = self.study_session.current(self.progress, utc_now())
        try:
            return render_summary(summarize(self.lesson, self.progress, record), width=width)
        except ShardbookError as error:
            return f"{self.lesson.id}: {error}\n"

    def session_line(self) -> str:
        """One line on this session for the plan view."""
        if self.lesson is None or self.study_session is None:
            return ""
        record = self.study_session.current(self.progress, utc_now())
        return strings.plan_session(
            format_duration(record.duration_s),
            len(record.steps_finished),
            len(record.answers_written),
        )

    def action_session_summary(self) -> None:
        """The session summary in a modal (the palette; ``s`` in the plan view)."""
        from tui.screens.study import SummaryScreen

        text = self.session_summary_text()
        if text:
            self.push_screen(SummaryScreen(text))

    def study_palette_entries(self) -> list[PaletteEntry]:
        """The palette's guided-study entries that have no key of their own."""
        return [
            (
                strings.PALETTE_SUMMARY,
                strings.PALETTE_SUMMARY_HELP,
                self.action_session_summary,
                f"{strings.msgids.PALETTE_SUMMARY} {strings.msgids.PALETTE_SUMMARY_HELP}",
            ),
        ]

    def action_export_notes(self) -> None:
        """F8: ask which format (tui.screens.export, where F8 again takes the highlighted
        one), then export."""
        from tui.screens.export import ExportScreen

        if self.lesson is None:
            self.notify(self.lesson_error, severity="error", markup=False)
            return
        folder = self.store.folder / "exports"
        self.push_screen(ExportScreen(str(folder)), self._export_chosen)

    def _export_chosen(self, fmt: str | None) -> None:
        if fmt is None or self.lesson is None:
            return
        self.save_now()
        # The export reads a copy: the learner may edit the progress while it is written.
        self._edited_since_export = False
        self._export(self.lesson, copy.deepcopy(self.progress), fmt, self.dirty)

    @work(thread=True, exclusive=True, group=EXPORT_GROUP, exit_on_error=False)
    def _export(
        self, lesson: Lesson, progress: LessonProgress, fmt: str, dirty: bool
    ) -> tuple[str, SeverityLevel, bool]:
        """Render and write the export off the event loop (the first one imports the exporters
        and the quiz statistics: about 0.2 s). Returns the message, its severity and whether
        the export holds words that could not be saved (``dirty``: the save before it failed).
        """
        from engine.export import FORMAT_DESCRIPTIONS, export_bytes, export_path, write_export

        data = export_bytes(lesson, progress, fmt)
        failures: list[str] = []
        # The progress folder's exports/ first; when that folder fails, somewhere that works.
        for folder in fallback_folders(self.store.folder):
            path = export_path(folder, lesson.id, fmt)
            try:
                write_export(path, data, create_folder=True, lesson_id=lesson.id)
            except OSError as error:
                failures.append(f"{folder}: {describe_os_error(error)}")
                continue
            message = fill(strings.EXPORTED, what=gettext(FORMAT_DESCRIPTIONS[fmt]), path=path)
            # A deck holds the quiz items, none of the learner's words.
            return message, "information", fmt != "anki" and dirty
        return strings.EXPORT_FAILED.format(error="; ".join(failures)), "error", False

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == LOCK_GROUP and event.state in (WorkerState.ERROR, WorkerState.SUCCESS):
            self._lock_taken(worker)
            return
        if worker.group != EXPORT_GROUP:
            return
        if event.state == WorkerState.ERROR:
            error = strings.EXPORT_FAILED.format(error=worker.error)
            self.notify(error, severity="error", timeout=20, markup=False)
        elif event.state == WorkerState.SUCCESS and worker.result is not None:
            message, severity, unsaved_exported = worker.result
            if unsaved_exported and not self._edited_since_export:
                self._exported_since_edit = True
            timeout = 8 if severity == "information" else 20
            self.notify(message, severity=severity, timeout=timeout, markup=False)

    async def action_quit(self) -> None:
        """Save first; if saving fails, say so and quit only on a second ctrl+q, which leaves a
        rescue copy of the unsaved progress (:func:`tui.guard.write_rescue_copy`). What was
        typed right before is saved too (:meth:`_when_settled`)."""
        self._when_settled(self._save_and_quit)

    def _save_and_quit(self) -> None:
        self.record_place()
        if self.save_now() or not self.unsaved:
            self.workers.cancel_all()  # a simulation stops now, not after the exit's teardown
            self.exit(0)
            return
        if self._quit_confirmed:
            self.workers.cancel_all()
            self.exit(0, message=self._write_rescue_copies())
            return
        self._quit_confirmed = True
        self.notify(strings.QUIT_UNSAVED, severity="error", timeout=20)

    def _when_settled(self, then: Callable[[], None]) -> None:
        """Run ``then`` (a save) once the changes typed before this key have reached the app.

        A key typed into a field is handled there; the field's change then climbs to the app
        one message queue per ancestor, and a save key of the same burst can come first. The
        save waits for them (:func:`tui.settle.settle`) in a task of its own: the key's action
        runs in the app's queue, which must stay free for the changes to arrive.
        """

        async def settle_then() -> None:
            await settle(self)
            then()

        task = asyncio.get_running_loop().create_task(settle_then())
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    def action_suspend(self) -> None:
        """ctrl+z (in a text box it undoes instead) and the palette: save, then stop the process
        until the shell's ``fg``; the whole screen is drawn again then."""
        from tui.driver import ShardbookDriver, is_job_control_child

        driver = self._driver
        if not isinstance(driver, ShardbookDriver) or not is_job_control_child():
            self.notify(strings.CANNOT_SUSPEND, severity="warning")
            return
        driver.request_suspend()

    # ----------------------------------------------------------------- interface language
    def language_palette_entries(self) -> list[PaletteEntry]:
        """The palette's switch to each other interface language (its name in its own words)."""
        return [
            (
                strings.PALETTE_LANGUAGE.format(language=LANGUAGE_NAMES[language]),
                strings.PALETTE_LANGUAGE_HELP,
                partial(self.switch_language, language),
                strings.msgids.PALETTE_LANGUAGE.format(language=LANGUAGE_NAMES[language]),
            )
            for language in LANGUAGES
            if language != current_language()
        ]

    def switch_language(self, language: str) -> None:
        """Show the interface in ``language`` from now on and save the choice (the ``language``
        setting). The lesson screen is built again in the new language (its keys' labels are
        read when it is built) and resumes where it was: the section, the scroll position, the
        side pane and its choices (:meth:`MainScreen.place`); the learner's text, saved or not,
        is in the progress the new screen shows."""
        self.record_place()
        set_language(language)
        self._read_lesson_errors_again()
        self.language = language
        self.settings.set("language", language)
        self.save_settings()
        old = self.main_screen
        place = (old.place() if old.is_mounted else None) or self.resumed
        screen = MainScreen(
            side=old.side_preference,
            reading=old.reading_mode,
            zoomed=old.zoomed,
            keep_side=old.side_shown,
            first_run=False,
            session_line=self.session_line,
            app_entries=self.palette_entries,
            rate_objective=self.rate_objective,
            record_text=self.record_text,
            record_form=self.record_form,
        )
        screen.search_query = old.search_query
        screen.show_lesson(self.lesson, self.lesson_error, self.progress)
        if self.lesson is not None:
            screen.restore_place(place)
        self.main_screen = screen
        self._replace_main_screen(old, screen)

    def _replace_main_screen(self, old: MainScreen, screen: MainScreen) -> None:
        """Put ``screen`` where ``old`` is, once ``old`` is on top (the palette that asked for
        the switch is still closing when it asks)."""
        if self.screen is old:
            # The default screen was put on the stack without the result callback that
            # switch_screen removes from the screen it replaces; one is given to it first
            # (Textual is pinned exactly: pyproject.toml).
            if not old._result_callbacks:
                old._push_result_callback(old, None)
            self.switch_screen(screen)
        else:
            self.call_after_refresh(self._replace_main_screen, old, screen)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own palette commands (theme, quit, keys, screenshot...) in the interface
        language (their English texts are msgids in :data:`SYSTEM_COMMAND_TEXTS`)."""
        for command in super().get_system_commands(screen):
            if command.callback == self.action_quit:
                continue  # ctrl+q's entry saves and quits: the same command, offered once
            yield command._replace(title=gettext(command.title), help=gettext(command.help))

    def action_command_palette(self) -> None:
        """The command palette, with its prompt in the interface language."""
        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]
            self.push_screen(
                LanguagePalette(placeholder=strings.PALETTE_PLACEHOLDER, id="--command-palette")
            )

    def palette_entries(self) -> list[PaletteEntry]:
        """The app's command-palette entries beyond the keys: the session summary, the other
        interface languages and every lesson (the main screen adds its sections)."""
        entries = self.study_palette_entries()
        entries.extend(self.language_palette_entries())
        for ref in self.lesson_refs:
            entries.append(
                (
                    strings.PALETTE_OPEN_LESSON.format(lesson=f"{ref.id} {ref.title}"),
                    str(ref.path),
                    partial(self.open_lesson, ref.id),
                )
            )
        for error in self.lesson_file_errors:
            entries.append(
                (
                    strings.PALETTE_OPEN_LESSON.format(
                        lesson=f"{Path(error.path).name} {strings.BROKEN_LESSON}"
                    ),
                    error.message,
                    partial(self.show_broken_lesson, error),
                )
            )
        return entries


def make_app(
    lesson_id: str | None = None,
    content_dir: str | Path | None = None,
    progress_dir: str | Path | None = None,
    autosave_delay: float = 0.5,
    quiz: QuizOptions | None = None,
    language: str | None = None,
) -> ShardbookApp:
    """Build the app as the CLI does (paths resolved by :mod:`engine.paths`); tests use it too.
    ``quiz`` sets how the quiz opens (``shardbook quiz``; tests inject its clock and seed);
    ``language`` is ``--lang`` (None: the saved setting, else the locale)."""
    return ShardbookApp(
        lesson_id=lesson_id,
        content_dir=resolve_content_dir(content_dir),
        progress_dir=resolve_progress_dir(progress_dir),
        autosave_delay=autosave_delay,
        quiz=quiz,
        language=language,
    )
