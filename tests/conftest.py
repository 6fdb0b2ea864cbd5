"""Shared test settings.

Hypothesis's per-example deadline is a timing assertion: on a loaded 2-core machine it fails
tests whose code is correct. Speed is measured in benches/, so no test has a deadline.
"""

from hypothesis import settings

settings.register_profile("shardbook", deadline=None)
settings.load_profile("shardbook")
