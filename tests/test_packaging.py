"""The lessons ship in the package: an installed shardbook finds them with no checkout and no
flag, a checkout keeps its own content/ and the overrides still win. Checked without building a
wheel: setuptools' own build_py lays the packages out as a wheel holds them (.ci/run installs a
real wheel outside the checkout and runs the command there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from engine import paths
from engine.lesson import lesson_files

ROOT = paths.CHECKOUT_ROOT


@pytest.fixture
def no_content_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHARDBOOK_CONTENT_DIR", raising=False)


@pytest.mark.usefixtures("no_content_env")
def test_a_checkout_reads_its_own_content_folder() -> None:
    assert paths.resolve_content_dir() == ROOT / "content"


@pytest.mark.usefixtures("no_content_env")
def test_outside_a_checkout_the_installed_lessons_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installed package sits in site-packages, whose parent is no checkout.
    monkeypatch.setattr(paths, "CHECKOUT_ROOT", tmp_path)
    assert paths.resolve_content_dir() == paths.PACKAGED_CONTENT_DIR
    assert Path(paths.__file__).resolve().parent / "content" == paths.PACKAGED_CONTENT_DIR


def test_the_flag_and_the_variable_override_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHARDBOOK_CONTENT_DIR", str(tmp_path / "env"))
    assert paths.resolve_content_dir() == tmp_path / "env"
    assert paths.resolve_content_dir(tmp_path / "flag") == tmp_path / "flag"


def test_pyproject_ships_every_lesson_file_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    package = "engine.content"
    assert package in setuptools["packages"]
    # One copy in the repository: the package's files are the top-level content/ folder.
    assert setuptools["package-dir"][package] == "content"
    globs = setuptools["package-data"][package]
    lessons = lesson_files(ROOT / "content")
    assert [lesson.name for lesson in lessons] == ["S15.yaml"]
    for lesson in lessons:
        assert any(lesson.match(pattern) for pattern in globs), lesson


@pytest.fixture(scope="module")
def built_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packages as setuptools lays them out in a wheel (build_py into a folder)."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    target = tmp_path_factory.mktemp("build")
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        dist = Distribution({"script_name": "setup.py"})
        apply_configuration(dist, "pyproject.toml")
        build_py = dist.get_command_obj("build_py")
        build_py.build_lib = str(target)
        build_py.compile = False
        build_py.ensure_finalized()
        build_py.run()
    finally:
        os.chdir(cwd)
    return target


def test_the_built_packages_hold_the_lessons_where_the_engine_looks(built_packages: Path) -> None:
    shipped = built_packages / "engine" / "content"
    assert sorted(path.name for path in shipped.iterdir()) == ["S15.yaml"]
    assert (shipped / "S15.yaml").read_bytes() == (ROOT / "content" / "S15.yaml").read_bytes()
    # The format's README and the source text are the repository's, not the package's.
    assert not (shipped / "README.md").exists() and not (shipped / "source").exists()


def test_the_built_engine_lists_s15_from_anywhere(built_packages: Path, tmp_path: Path) -> None:
    # A fresh interpreter that imports the built engine (PYTHONPATH comes before the editable
    # install's finder), run from a folder that is no checkout, with no content setting.
    env = {k: v for k, v in os.environ.items() if k != "SHARDBOOK_CONTENT_DIR"}
    env["PYTHONPATH"] = str(built_packages)
    env["SHARDBOOK_CACHE_DIR"] = str(tmp_path / "cache")
    code = (
        "import json, engine\n"
        "from engine.lesson import discover_lessons\n"
        "from engine.paths import resolve_content_dir\n"
        "folder = resolve_content_dir()\n"
        "refs, errors = discover_lessons(folder)\n"
        "print(json.dumps({'engine': engine.__file__, 'folder': str(folder),"
        " 'ids': [ref.id for ref in refs], 'errors': [str(e) for e in errors]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert Path(found["engine"]).is_relative_to(built_packages)
    assert found["folder"] == str((built_packages / "engine" / "content").resolve())
    assert found == found | {"ids": ["S15"], "errors": []}
