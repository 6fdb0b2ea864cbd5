"""shardbook's engine: lesson model, calculators, simulators, progress store and export.

Pure Python and numpy. This package never imports Textual (tests/test_import_hygiene.py proves it),
so every figure it computes can be used headless, from the command line or from tests.
"""
