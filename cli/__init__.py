"""The ``shardbook`` command line: argparse entry (:mod:`cli.main`) and one module per command.

It uses the engine for every value it prints and opens the interface only through
:func:`tui.app.make_app` (with :class:`tui.options.QuizOptions`); the interface never imports it
(``.importlinter``). Headless commands never import Textual.
"""
