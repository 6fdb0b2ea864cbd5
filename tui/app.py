"""The shardbook Textual app: outline | reading pane | side pane (Ledger, Bubble, Diagrams).

The app owns the lesson (read-only, from ``engine.lesson``) and the learner's progress (an
``engine.progress.LessonProgress`` edited in place). Widgets post messages up when the learner
types; the app records the change and saves within ``autosave_delay`` seconds, and always
before quitting.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from engine.errors import ContentError, ProgressError, ShardbookError
from engine.lesson import (
    Lesson,
    LessonRef,
    Section,
    discover_lessons,
    lesson_index_path,
    load_lesson,
    section_markdown,
)
from engine.lesson_reveals import note_lesson_reveal
from engine.paths import resolve_content_dir, resolve_progress_dir
from engine.progress import STATUS_LABELS, LessonProgress, ProgressStore, describe_os_error
from tui import strings
from tui.commands import APP_COMMANDS, AppCommandsProvider
from tui.guard import end_on_signal, fallback_folders, install_exit_signals, write_rescue_copy
from tui.widgets.calculator import CalculatorPane
from tui.widgets.ledger import LedgerPane
from tui.widgets.notes import NoteBox, SelfCheckBox
from tui.widgets.side import LazyTabPane, SideTabs

if TYPE_CHECKING:
    # Imported where first used: the quiz (fsrs) on F12, the side panes (numpy) on first view.
    from tui.screens.quiz import QuizOptions
    from tui.widgets.diagrams import DiagramsPane
    from tui.widgets.tradeoffs import TradeoffsPane

DEFAULT_LESSON = "S15"
# Actions that need the main screen's panes (not available over the quiz screen).
_MAIN_SCREEN_ACTIONS = frozenset(
    {
        "quiz",
        "side_tab",
        "toggle_zoom",
        "focus_outline",
        "next_section",
        "toggle_complete",
        "export_notes",
    }
)
META_ID = "__meta__"


class ShardbookApp(App[int]):
    """The study app. Build it with :func:`make_app` (the CLI and the tests share it)."""

    CSS_PATH = "app.tcss"
    TITLE = strings.APP_TITLE
    BINDINGS = [command.binding() for command in APP_COMMANDS]
    COMMANDS = App.COMMANDS | {AppCommandsProvider}

    def __init__(
        self,
        lesson_id: str | None,
        content_dir: Path,
        progress_dir: Path,
        autosave_delay: float = 0.5,
        quiz: QuizOptions | None = None,
    ) -> None:
        super().__init__()
        # None: the quiz's defaults (built on F12, so fsrs is not imported at start-up).
        self.quiz_options = quiz
        self.content_dir = content_dir
        self.store = ProgressStore(progress_dir)
        self.autosave_delay = autosave_delay
        self.lesson_refs: list[LessonRef] = []
        self.lesson: Lesson | None = None
        self.lesson_error: str = ""
        self.progress = LessonProgress(lesson_id or DEFAULT_LESSON)
        self.dirty = False
        self.last_saved: str = ""
        self.save_error: str = ""
        self._quit_confirmed = False
        self._save_pending = False
        self._requested_lesson = lesson_id or DEFAULT_LESSON
        self.current_section: str = META_ID
        self.lesson_file_errors: list[ContentError] = []
        self._exported_since_edit = False
        self._remove_signal_handlers: Callable[[], None] = lambda: None
        self._ending: asyncio.Task[None] | None = None

    # ----------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            yield OptionList(id="outline")
            yield VerticalScroll(id="reading")
            # Hidden tabs are built on first view (tui.widgets.side): start-up stays fast.
            with SideTabs(id="side", initial="ledger"):
                with TabPane(strings.TAB_LEDGER, id="ledger"):
                    yield LedgerPane()
                yield LazyTabPane(strings.TAB_BUBBLE, "tui.widgets.bubble:BubblePane", id="bubble")
                yield LazyTabPane(
                    strings.TAB_DIAGRAMS, "tui.widgets.diagrams:DiagramsPane", id="diagrams"
                )
                yield LazyTabPane(
                    strings.TAB_COLLECTIVES,
                    "tui.widgets.collectives:CollectivesPane",
                    id="collectives",
                )
                yield LazyTabPane(
                    strings.TAB_TRADEOFFS, "tui.widgets.tradeoffs:TradeoffsPane", id="tradeoffs"
                )
                yield LazyTabPane(strings.TAB_LAB, "tui.widgets.lab:LabPane", id="lab")
        # The palette's own hint would overflow 80 columns; ctrl+p is in F1 and the README.
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        refs, errors = discover_lessons(self.content_dir, lesson_index_path(self.content_dir))
        self.lesson_refs = refs
        self.lesson_file_errors = [error for error in errors if error.path != str(self.content_dir)]
        if self.lesson_file_errors:
            count = len(self.lesson_file_errors)
            self.notify(strings.LESSON_FILES_UNREADABLE.format(count=count), severity="warning")
        self._take_lock()
        self._remove_signal_handlers = install_exit_signals(self._exit_signal)
        # ctrl+z, the palette or SIGTSTP from outside: save before the process stops.
        self.app_suspend_signal.subscribe(self, lambda _app: self.save_now(), immediate=True)
        self.open_lesson(self._requested_lesson)
        if self.quiz_options is not None and self.quiz_options.open_at_start:
            self.action_quiz()

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
        self.lesson = None
        path = self._lesson_path(lesson_id)
        try:
            if path is None:
                raise ContentError(str(self.content_dir), None, f"no lesson with id {lesson_id!r}")
            self.lesson = load_lesson(path)
            self.lesson_error = ""
        except ContentError as error:
            self.lesson_error = str(error)
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
        self._fill_outline()
        self.show_section(META_ID)
        for pane in self.query(CalculatorPane):
            pane.restore(self.progress.forms.get(pane.form_name, {}))
        # Side panes not built yet read the progress themselves when first shown.
        for diagrams in self.query("DiagramsPane"):
            cast("DiagramsPane", diagrams).refresh_notes()
        for tradeoffs in self.query("TradeoffsPane"):
            cast("TradeoffsPane", tradeoffs).load_notes(self.lesson, self.progress.notes)
        self._update_status()

    def _leave_lesson(self) -> bool:
        """Save before showing another lesson. Unsaved text that was not exported either keeps
        the learner on this lesson (switching would drop it from memory)."""
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
        self._fill_outline()
        self.show_section(META_ID)

    def _take_lock(self) -> None:
        try:
            writable = self.store.lock()
        except ProgressError as error:
            self.save_error = str(error)
            message = strings.SAVE_FAILED.format(error=error)
            self.notify(message, severity="error", timeout=20, markup=False)
            return
        if not writable:
            self.notify(strings.READ_ONLY_NOTICE, severity="warning", timeout=30)

    def get_driver_class(self) -> type[Driver]:
        """Textual's Linux driver with the resume guard and hang-up handling of tui.driver."""
        driver_class = super().get_driver_class()
        if sys.platform == "win32":
            return driver_class
        from tui.driver import LinuxDriver, ShardbookDriver

        return ShardbookDriver if driver_class is LinuxDriver else driver_class

    def _exit_signal(self, signum: int) -> None:
        """SIGINT, SIGTERM or SIGHUP: save what is typed so far (or write a rescue copy),
        release the lock, exit with 128 + signum (:func:`tui.guard.end_on_signal`). Another
        signal meanwhile changes nothing."""
        if self._ending is None:
            self._ending = end_on_signal(self, 128 + signum, self._save_and_unlock)

    def _save_and_unlock(self) -> str:
        """The last save: the progress file, else a rescue copy. Returns what to tell the
        learner (``""`` when saved)."""
        message = ""
        if not self.save_now() and self.dirty:
            path, why = write_rescue_copy(self.progress, self.store.folder)
            rescued = strings.RESCUED.format(path=path) if path else ""
            message = rescued or strings.NOT_RESCUED.format(error=why)
        self.store.unlock()
        return message

    def on_unmount(self) -> None:
        self._remove_signal_handlers()
        self.store.unlock()

    def _fill_outline(self) -> None:
        outline = self.query_one("#outline", OptionList)
        outline.clear_options()
        options = [Option(Content(strings.META_SECTION), id=META_ID)]
        if self.lesson is not None:
            options.extend(
                Option(Content(section.title), id=section.id) for section in self.lesson.sections
            )
        outline.add_options(options)
        outline.highlighted = 0

    @property
    def sections(self) -> tuple[Section, ...]:
        return self.lesson.sections if self.lesson is not None else ()

    @on(OptionList.OptionHighlighted, "#outline")
    def _outline_moved(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.current_section:
            self.show_section(event.option.id)

    def show_section(self, section_id: str) -> None:
        """Fill the reading pane with one section, and its answer boxes where it has them."""
        self.current_section = section_id
        reading = self.query_one("#reading", VerticalScroll)
        reading.remove_children()
        reading.scroll_home(animate=False)
        if self.lesson is None:
            reading.mount(Static(strings.LESSON_ERROR_TITLE, classes="section-title"))
            reading.mount(Static(self.lesson_error, markup=False, classes="error"))
            reading.mount(Static(strings.LESSON_ERROR_HINT, markup=False))
            return
        if section_id == META_ID:
            reading.mount(Static(self.lesson.title, markup=False, classes="section-title"))
            reading.mount(Static(self._meta_text(), markup=False, classes="meta"))
            return
        section = self.lesson.section(section_id)
        reading.mount(Static(section.title, markup=False, classes="section-title"))
        if section.kind == "self-check":
            reading.mount(Static(strings.SELF_CHECK_HINT, classes="hint"))
            for number, item in enumerate(section.items, start=1):
                reading.mount(
                    SelfCheckBox(
                        item,
                        number,
                        self.progress.answers.get(item.id, ""),
                        item.id in self.progress.revealed,
                    )
                )
            return
        markdown = section_markdown(section)
        if markdown.strip():
            from textual.widgets import Markdown  # markdown-it: not needed by the first screen

            reading.mount(Markdown(markdown, classes="lesson-text"))
        if section.kind == "reflection":
            reading.mount(Static(strings.REFLECTION_HINT, classes="hint"))
            for item in section.items:
                reading.mount(
                    NoteBox(
                        "reflections",
                        item,
                        self.progress.reflections.get(item.id, ""),
                        item.text,
                        strings.REFLECTION_PLACEHOLDER,
                    )
                )
        elif section.id == "exercises":
            reading.mount(Static(strings.EXERCISE_HINT, classes="hint"))

    def _meta_text(self) -> str:
        assert self.lesson is not None
        meta = self.lesson.meta
        rows = [
            ("内容类型", meta.kind),
            ("日期", meta.date),
            ("阶段", meta.phase),
            ("总路线", f"Day {meta.day} / {meta.days_total}"),
            ("周次 / 节奏", f"{meta.week} · {meta.rhythm}"),
            ("状态", meta.status),
            ("主题", "、".join(meta.topics)),
            ("my status", STATUS_LABELS[self.progress.status]),
        ]
        return "\n".join(f"{label}：{value}" for label, value in rows)

    # ----------------------------------------------------------------- learner input
    @on(NoteBox.Edited)
    def _note_edited(self, event: NoteBox.Edited) -> None:
        targets = {
            "answers": self.progress.answers,
            "reflections": self.progress.reflections,
            "notes": self.progress.notes,
        }
        target = targets[event.kind]
        if target.get(event.item_id, "") == event.text:
            return
        target[event.item_id] = event.text
        self.progress.touch()
        self.mark_dirty()

    @on(SelfCheckBox.RevealRequested)
    def _reveal(self, event: SelfCheckBox.RevealRequested) -> None:
        box = event.box
        if not self.progress.answers.get(box.item.id, "").strip():
            self.notify(strings.REVEAL_FIRST_ANSWER, severity="warning")
            return
        box.show_key_points()
        if box.item.id not in self.progress.revealed:
            self.progress.revealed.append(box.item.id)
        # The quiz does not ask this question again today (engine.lesson_reveals).
        note_lesson_reveal(self.progress, box.item.id, dt.datetime.now(dt.UTC))
        self.mark_dirty()

    @on(CalculatorPane.FormChanged)
    def _form_changed(self, event: CalculatorPane.FormChanged) -> None:
        if not event.by_learner:
            return
        if self.progress.forms.get(event.form_name) == event.values and (
            event.figures is None or self.progress.figures.get(event.figure_name) == event.figures
        ):
            return
        self.progress.forms[event.form_name] = dict(event.values)
        if event.figures is not None:
            self.progress.figures[event.figure_name] = dict(event.figures)
        self.mark_dirty()

    def mark_dirty(self) -> None:
        """Record that progress changed; it is saved within ``autosave_delay`` seconds."""
        self.dirty = True
        self._quit_confirmed = False
        self._exported_since_edit = False
        if not self._save_pending:
            self._save_pending = True
            self.set_timer(self.autosave_delay, self._autosave)
        self._update_status()

    def _autosave(self) -> None:
        self._save_pending = False
        if self.dirty:
            self.save_now()

    def save_now(self) -> bool:
        """Save the progress file now. Returns False (and tells the learner) when it failed."""
        if self.lesson is None:
            # No lesson was opened (a bad id or file): there is nothing of the learner's to keep,
            # and no progress file should appear for a lesson that does not exist.
            return True
        try:
            self.store.save(self.progress)
            if self.store.merged:
                # Another window saved this lesson meanwhile; both windows' changes are kept.
                self.notify(strings.MERGED, severity="warning", timeout=15)
                self.show_section(self.current_section)
        except ShardbookError as error:
            if self.save_error != str(error):
                self.notify(
                    strings.SAVE_FAILED.format(error=error),
                    severity="error",
                    timeout=20,
                    markup=False,
                )
            self.save_error = str(error)
            self._update_status()
            return False
        self.dirty = False
        self.save_error = ""
        self.last_saved = dt.datetime.now().strftime("%H:%M:%S")
        self._update_status()
        return True

    def _update_status(self) -> None:
        parts = [self.progress.lesson_id, STATUS_LABELS[self.progress.status]]
        if self.store.read_only:
            parts.append(strings.READ_ONLY)
        if self.save_error:
            parts.append(strings.NOT_SAVED)
        elif self.last_saved:
            parts.append(strings.SAVED_AT.format(time=self.last_saved))
        self.sub_title = " · ".join(parts)

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
        alone would not do)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # ----------------------------------------------------------------- actions
    def action_show_help(self) -> None:
        from tui.screens.help import HelpScreen  # its Markdown (markdown-it) loads on first F1

        focused = self.focused
        help_text = ""
        node = focused
        while node is not None and not help_text:
            help_text = getattr(node, "HELP", "") or ""
            node = node.parent  # type: ignore[assignment]
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen(help_text))

    def action_quiz(self) -> None:
        """Open the quiz screen over the lesson (F12)."""
        from tui.screens.quiz import QuizOptions, QuizScreen

        self.push_screen(QuizScreen(self.quiz_options or QuizOptions()))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The quiz screen has none of the main screen's panes: their keys wait until it closes.
        if action in _MAIN_SCREEN_ACTIONS:
            return not _quiz_open(self.screen_stack)
        return True

    async def action_side_tab(self, tab: str) -> None:
        side = self.query_one("#side", TabbedContent)
        # F4 again flips between the strategy diagrams and the collectives' data flow.
        if tab == "diagrams" and side.active == "diagrams":
            tab = "collectives"
        side.active = tab
        pane = side.get_pane(tab)
        if isinstance(pane, LazyTabPane):
            await pane.ready()
        for child in pane.children:
            focus_first = getattr(child, "focus_first", None)
            if focus_first is not None:
                focus_first()

    def action_toggle_zoom(self) -> None:
        self.query_one("#main").toggle_class("-zoom")

    def action_focus_outline(self) -> None:
        self.query_one("#main").remove_class("-zoom")
        self.query_one("#outline").focus()

    def action_next_section(self) -> None:
        outline = self.query_one("#outline", OptionList)
        if outline.option_count:
            outline.highlighted = ((outline.highlighted or 0) + 1) % outline.option_count

    def action_save(self) -> None:
        if self.save_now():
            self.notify(strings.SAVED_AT.format(time=self.last_saved), timeout=2)

    def action_toggle_complete(self) -> None:
        if self.lesson is None:
            self.notify(self.lesson_error, severity="error", markup=False)
            return
        if self.progress.status == "complete":
            self.progress.status = "in-progress"
            self.notify(strings.MARKED_IN_PROGRESS)
        else:
            self.progress.status = "complete"
            self.notify(strings.MARKED_COMPLETE)
        self.mark_dirty()
        if self.current_section == META_ID:
            self.show_section(META_ID)

    def action_export_notes(self) -> None:
        """F8: ask which format (tui.screens.export), then export; F8 in that question takes
        the highlighted format."""
        from tui.screens.export import ExportScreen

        if isinstance(self.screen, ExportScreen):
            self.screen.choose_highlighted()
            return
        if self.lesson is None:
            self.notify(self.lesson_error, severity="error", markup=False)
            return
        folder = self.store.folder / "exports"
        self.push_screen(ExportScreen(str(folder)), self._export_chosen)

    def _export_chosen(self, fmt: str | None) -> None:
        if fmt is None or self.lesson is None:
            return
        from engine.export import FORMAT_DESCRIPTIONS, export_bytes, export_path, write_export

        self.save_now()
        data = export_bytes(self.lesson, self.progress, fmt)
        failures: list[str] = []
        # The progress folder's exports/ first; when that folder fails, somewhere that works.
        for folder in fallback_folders(self.store.folder):
            path = export_path(folder, self.lesson.id, fmt)
            try:
                write_export(path, data, create_folder=True, lesson_id=self.lesson.id)
            except OSError as error:
                failures.append(f"{folder}: {describe_os_error(error)}")
                continue
            if fmt != "anki":  # a deck holds the quiz items, none of the learner's words
                self._exported_since_edit = self.dirty
            message = strings.EXPORTED.format(what=FORMAT_DESCRIPTIONS[fmt], path=path)
            self.notify(message, timeout=8, markup=False)
            return
        self.notify(
            strings.EXPORT_FAILED.format(error="; ".join(failures)), severity="error", markup=False
        )

    async def action_quit(self) -> None:
        """Save first; if saving fails, say so and quit only on a second ctrl+q, which leaves a
        rescue copy of the unsaved progress (:func:`tui.guard.write_rescue_copy`)."""
        if self.save_now() or not self.dirty:
            self.exit(0)
            return
        if self._quit_confirmed:
            path, why = write_rescue_copy(self.progress, self.store.folder)
            rescued = strings.RESCUED.format(path=path) if path else ""
            self.exit(0, message=rescued or strings.NOT_RESCUED.format(error=why))
            return
        self._quit_confirmed = True
        self.notify("Press ctrl+q again to quit WITHOUT saving.", severity="error", timeout=20)

    def action_suspend(self) -> None:
        """ctrl+z (in a text box it undoes instead) and the palette: save, then stop the process
        until the shell's ``fg``; the whole screen is drawn again then."""
        from tui.driver import ShardbookDriver, is_job_control_child

        driver = self._driver
        if not isinstance(driver, ShardbookDriver) or not is_job_control_child():
            self.notify(strings.CANNOT_SUSPEND, severity="warning")
            return
        driver.request_suspend()

    async def action_interrupt(self) -> None:
        """ctrl+c outside a text selection (a selection is copied): save and quit, like ctrl+q."""
        await self.action_quit()

    def palette_entries(self) -> list[tuple[str, str, Callable[[], object]]]:
        """Extra command-palette entries: every section and every lesson."""
        entries: list[tuple[str, str, Callable[[], object]]] = []
        outline = self.query_one("#outline", OptionList)
        for index in range(outline.option_count):
            option = outline.get_option_at_index(index)
            title = str(option.prompt)
            entries.append((f"Go to: {title}", "Read this section", partial(self._goto, index)))
        for ref in self.lesson_refs:
            entries.append(
                (
                    f"Open lesson: {ref.id} {ref.title}",
                    str(ref.path),
                    partial(self.open_lesson, ref.id),
                )
            )
        for error in self.lesson_file_errors:
            entries.append(
                (
                    f"Open lesson: {Path(error.path).name} {strings.BROKEN_LESSON}",
                    error.message,
                    partial(self.show_broken_lesson, error),
                )
            )
        return entries

    def _goto(self, index: int) -> None:
        self.query_one("#main").remove_class("-zoom")
        outline = self.query_one("#outline", OptionList)
        outline.highlighted = index
        option_id = outline.get_option_at_index(index).id
        if option_id is not None and option_id != self.current_section:
            self.show_section(option_id)
        self.call_after_refresh(self._focus_reading)

    def _focus_reading(self) -> None:
        """Focus the section's first text box, or the reading pane so arrows scroll it."""
        boxes = self.query("#reading TextArea")
        (boxes.first() if boxes else self.query_one("#reading")).focus()


def _quiz_open(stack: Iterable[Screen[object]]) -> bool:
    """Whether a quiz screen is on ``stack``. Until F12 first imports the quiz module, none is."""
    quiz = sys.modules.get("tui.screens.quiz")
    return quiz is not None and any(isinstance(screen, quiz.QuizScreen) for screen in stack)


def make_app(
    lesson_id: str | None = None,
    content_dir: str | Path | None = None,
    progress_dir: str | Path | None = None,
    autosave_delay: float = 0.5,
    quiz: QuizOptions | None = None,
) -> ShardbookApp:
    """Build the app as the CLI does (paths resolved by :mod:`engine.paths`); tests use it too.
    ``quiz`` sets how the quiz opens (``shardbook quiz``; tests inject its clock and seed)."""
    return ShardbookApp(
        lesson_id=lesson_id,
        content_dir=resolve_content_dir(content_dir),
        progress_dir=resolve_progress_dir(progress_dir),
        autosave_delay=autosave_delay,
        quiz=quiz,
    )
