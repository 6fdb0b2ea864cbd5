"""Every string of the app's chrome (keys, buttons, messages), in one place.

The lesson itself stays in its original Chinese and comes from content/; these are the
interface's own words, kept here so a Chinese interface can be switched on later by
providing another table with the same names.
"""

from __future__ import annotations

APP_TITLE = "shardbook"

# Side-pane tabs.
TAB_LEDGER = "Ledger"
TAB_BUBBLE = "Bubble"
TAB_DIAGRAMS = "Diagrams"

# Reading pane.
OUTLINE_TITLE = "Outline"
META_SECTION = "Lesson"
ANSWER_PLACEHOLDER = "Your answer (saved as you type)"
REFLECTION_PLACEHOLDER = "Your notes (saved as you type)"
KEY_POINTS_TITLE = "Reference key points (added material, not the lesson's text)"
KEY_POINTS_SOURCES = "Sources: "
REVEAL_BUTTON = "Reveal key points (ctrl+r)"
REVEAL_FIRST_ANSWER = "Write your answer first, then reveal the key points."
SELF_CHECK_HINT = "Answer each question, then press ctrl+r in its box to compare with key points."
REFLECTION_HINT = "Fill in each field; it is saved within a second and on quit."
EXERCISE_HINT = "Work exercise 1 in the Ledger pane (F2; ctrl+g loads the 1B example)."

# Status and saving.
STATUS_WORD = "status"
SAVED_AT = "saved {time}"
NOT_SAVED = "NOT SAVED"
SAVE_FAILED = (
    "Could not save: {error}. Your text is kept in memory; fix the folder and press ctrl+s, "
    "or export elsewhere."
)
EXPORTED = "Notes exported to {path}"
EXPORT_FAILED = "Could not export: {error}"
MARKED_COMPLETE = "Lesson marked complete."
MARKED_IN_PROGRESS = "Lesson marked in progress."
QUARANTINED = "Progress file problem: {message}"

# Calculators.
CALC_LAST_GOOD = "(showing the last good result)"
CALC_ENTER_VALUES = "Enter values above."
LEDGER_EXAMPLE_LOADED = "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam."

# Errors that stop the app from showing a lesson.
LESSON_ERROR_TITLE = "This lesson cannot be opened"
LESSON_ERROR_HINT = (
    "Fix the file (run `shardbook check-content` for every problem) or open another lesson "
    "with ctrl+p."
)
NO_LESSONS = "No lessons found in {folder}."

HELP_TITLE = "shardbook — keys"
HELP_INTRO = (
    "Keyboard first: every action below also has an entry in the command palette (ctrl+p). "
    "Tab and shift+tab move between fields; arrows move in lists. Everything you type is "
    "saved within a second and again when you quit."
)
HELP_FOCUSED = "About the focused pane"
HELP_CLOSE = "Press escape or F1 to close."

DIAGRAM_ZOOM_HINT = "F5 zooms the pane; arrows scroll the diagram."
LEDGER_TITLE = "Memory ledger (per rank)"
BUBBLE_TITLE = "Pipeline bubble"
LEDGER_MORE = "Activations and parallelism (fill seq, layers, hidden, heads)"
BUBBLE_MORE = "Op times (t_B: input gradient; t_W: weight gradient)"
