"""Start-up imports and builds only what the first screen needs (README "Performance"): numpy (the
simulators), fsrs (the quiz) and torch (the lab) load when their pane or screen is first opened, and
a side pane hidden at start is built when first shown, not before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("numpy", "fsrs", "torch")


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip().splitlines()[-1]


def test_importing_the_app_loads_no_heavy_module() -> None:
    code = f"import sys\nimport tui.app\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    assert _run(code) == "[]"


def test_first_frame_loads_no_heavy_module_and_f3_loads_numpy(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        f"heavy = {HEAVY!r}\n"
        "async def pilot(p):\n"
        "    await p.pause()\n"
        "    first = sorted(m for m in heavy if m in sys.modules)\n"
        "    assert not app.query('#outline')\n"
        "    await p.press('f3')\n"
        "    await p.pause()\n"
        "    assert app.query('BubblePane')\n"
        "    print(first, 'numpy' in sys.modules)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    assert _run(code) == "[] True"


def test_a_hidden_side_pane_builds_its_tabs_when_first_shown(tmp_path: Path) -> None:
    # At 80x24 the side pane starts hidden: its tab row, its six tab panes, Textual's tab
    # widgets and the calculators' module are not built or imported for the first frame; F2
    # builds them and opens the Ledger.
    code = (
        "import os, sys\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "later = ('tui.widgets.calculator', 'textual.widgets._tabbed_content',\n"
        "         'textual.widgets._tabs')\n"
        "async def pilot(p):\n"
        "    await p.pause()\n"
        "    side = app.query_one('#side')\n"
        "    first = (side.display, len(side.children), any(m in sys.modules for m in later))\n"
        "    await p.press('f2')\n"
        "    await p.pause()\n"
        "    tabs = [tab.id for tab in app.query('ContentTab')]\n"
        "    ledger = app.query_one('LedgerPane')\n"
        "    print(first, len(tabs), side.display, ledger.has_focus_within)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    assert _run(code) == "(False, 0, False) 6 True True"


def test_the_shardbook_command_opens_the_app_without_building_the_commands(tmp_path: Path) -> None:
    # `shardbook` with no command reads its options without the commands' parsers, whose
    # modules import the calculators' engines (numpy); a command still gets them.
    code = (
        "import sys\n"
        "import cli.main\n"
        "def opened(args):\n"
        "    loaded = sorted(m for m in ('numpy', 'cli.ledger') if m in sys.modules)\n"
        "    print(args.lesson, args.progress_dir == sys.argv[1], loaded)\n"
        "    return 0\n"
        "cli.main.run_tui = opened\n"
        "assert cli.main.main(['--progress-dir', sys.argv[1], '--lesson', 'S15']) == 0\n"
        "ledger = ['calc', 'ledger', '--params', '7B', '--json']\n"
        "assert cli.main.main(['--progress-dir', sys.argv[1], *ledger]) == 0\n"
        "print('numpy' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "S15 True []"
    assert lines[-1] == "True"


def test_the_collector_is_paused_until_the_first_frame(tmp_path: Path) -> None:
    # ShardbookApp.run: no garbage collection before the first frame, the modules' objects out
    # of the collector's reach (gc.freeze), collecting again once the lesson is drawn.
    code = (
        "import gc, os, sys\n"
        "from textual.app import App\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "collecting = []\n"
        "display = App._display\n"
        "def drawn(self, screen, renderable):\n"
        "    collecting.append(gc.isenabled())\n"
        "    display(self, screen, renderable)\n"
        "App._display = drawn\n"
        "async def pilot(p):\n"
        "    await p.pause()\n"
        "    frozen = gc.get_freeze_count() > len(sys.modules)\n"
        "    print(collecting[0], gc.isenabled(), frozen)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    assert _run(code) == "False True True"


def test_the_first_frame_is_drawn_before_the_text_boxes_and_the_lock(tmp_path: Path) -> None:
    # The answer and note boxes (Textual's TextArea) are imported with the first section that
    # has them, and the progress folder's lock (filelock) is taken after the first frame; the
    # app holds the lock once it settles, and a section with boxes still builds them. Not the
    # first run (that one writes the settings, which takes the lock at once).
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nhints:\n  first_run_seen: true\n", encoding="utf-8"
    )
    code = (
        "import os, sys\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "first = []\n"
        "display = app._display\n"
        "def framed(screen, renderable):\n"
        "    if not first:\n"
        "        names = ('textual.widgets._text_area', 'tui.widgets.notes', 'filelock')\n"
        "        first.append(sorted(m for m in names if m in sys.modules))\n"
        "    display(screen, renderable)\n"
        "app._display = framed\n"
        "async def pilot(p):\n"
        "    import asyncio, time\n"
        "    await p.pause()\n"
        "    deadline = time.monotonic() + 10\n"
        "    while not app.store.holds_lock and time.monotonic() < deadline:\n"
        "        await asyncio.sleep(0.02)\n"
        "    held = app.store.holds_lock\n"
        "    screen = app.main_screen\n"
        "    section = next(s.id for s in screen.sections if s.kind == 'self-check')\n"
        "    await screen.show_section(section)\n"
        "    boxes = len(app.query('SelfCheckBox'))\n"
        "    print(first[0], held, boxes > 0)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    assert _run(code) == "[] True True"


def test_the_side_panes_and_quiz_rules_are_added_when_first_used(tmp_path: Path) -> None:
    # app.tcss alone before the first frame; the side panes' rules (tui/side.tcss) when the
    # first is built, the quiz's (tui/quiz.tcss) when it opens: each styles its widgets.
    code = (
        "import os, sys\n"
        "from tui.app import make_app\n"
        "from tui.styles import STYLES\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "def added():\n"
        "    paths = (path for path, _ in app.stylesheet.source)\n"
        "    ours = (p for p in paths if p.startswith(str(STYLES)) and p.endswith('.tcss'))\n"
        "    return sorted(os.path.basename(p) for p in ours)\n"
        "async def pilot(p):\n"
        "    await p.pause()\n"
        "    first = added()\n"
        "    await p.press('f2')\n"
        "    await p.pause()\n"
        "    side = added()\n"
        "    label = app.query('LedgerPane .form-label').first().styles.width.value\n"
        "    await p.press('f12')\n"
        "    await p.pause()\n"
        "    status = app.screen.query_one('#quiz-status').styles.padding.left\n"
        "    print(first, side, added(), label, status)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    added = "['app.tcss'] ['app.tcss', 'side.tcss'] ['app.tcss', 'quiz.tcss', 'side.tcss']"
    assert _run(code) == f"{added} 14.0 1"


def test_a_returning_learners_first_frame_parses_no_yaml(tmp_path: Path) -> None:
    # PyYAML's import and the parse of the progress file and the settings cost the first frame
    # about 10 ms; a save keeps their data for the next start (engine/yaml_cache.py), and the
    # lesson comes from the index and the parsed-lesson caches. The first start after the files
    # changed parses them (and keeps them); the next one imports no YAML machinery before its
    # first frame, and shows what the files hold. The caches' keys are zlib checksums: hashlib
    # (OpenSSL's digests, over a millisecond to load) is not imported either.
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nhints:\n  first_run_seen: true\n", encoding="utf-8"
    )
    (tmp_path / "S15.yaml").write_text(
        "schema_version: 3\nlesson: S15\nanswers:\n  definition: 'a[/ 列切分'\n", encoding="utf-8"
    )
    code = (
        "import os, sys\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "async def pilot(p):\n"
        "    await p.pause()\n"
        "    loaded = [m for m in ('yaml', 'hashlib') if m in sys.modules]\n"
        "    print(loaded, app.progress.answers.get('definition'))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "app.run(headless=True, size=(80, 24), auto_pilot=pilot)\n"
        "sys.exit(3)\n"
    )
    assert _run(code).endswith("] a[/ 列切分")
    assert _run(code) == "[] a[/ 列切分"
