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
    "or press F8 to export your notes elsewhere."
)
READ_ONLY = "READ-ONLY"
READ_ONLY_NOTICE = (
    "Another shardbook window is using this progress folder, so this one is read-only: what "
    "you type is kept here, not saved. Close the other window and press ctrl+s (both windows' "
    "changes are merged), or press F8 to export."
)
MERGED = "Another window saved this lesson meanwhile; its changes and yours were merged."
SWITCH_BLOCKED = (
    "Your text is not saved yet, so this lesson stays open: press ctrl+s to retry, or F8 to "
    "export your notes, then switch."
)
RESCUED = "Progress could not be saved; a copy of it was written to {path}"
NOT_RESCUED = "Progress could not be saved, nor a copy written anywhere: {error}"
LESSON_FILES_UNREADABLE = "{count} lesson file(s) cannot be read; ctrl+p lists them with why."
BROKEN_LESSON = "(cannot be read)"
EXPORTED = "Exported {what} to {path}"
EXPORT_FAILED = "Could not export: {error}"
EXPORT_TITLE = "Export your notes (F8 again: the highlighted format)"
EXPORT_MD = "Markdown (.md): the notes for any Markdown viewer"
EXPORT_JSON = "JSON (.json): the same notes as one object"
EXPORT_HTML = "HTML (.html): the notes as one web page"
EXPORT_ANKI = "Anki deck (.apkg): the lesson's quiz items as cards"
EXPORT_WHERE = "Written to {folder} (elsewhere if it cannot be written). escape: cancel."
EXPORT_CANCEL = "Cancel"
MARKED_COMPLETE = "Lesson marked complete."
MARKED_IN_PROGRESS = "Lesson marked in progress."
QUARANTINED = "Progress file problem: {message}"
CANNOT_SUSPEND = (
    "Nothing to suspend to: shardbook was not started from a shell with job control (fg). "
    "Your text is saved as you type; ctrl+q quits."
)

# Calculators.
CALC_LAST_GOOD = "(showing the last good result)"
CALC_ENTER_VALUES = "Enter values above."
LEDGER_EXAMPLE_LOADED = "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam."
LEDGER_EXAMPLE_CONFIRM = "Press ctrl+g again to replace your inputs with exercise 1's 1B example."

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
LEDGER_MORE = (
    "Model, activations, fine-tuning and parallelism (pick a model or fill layers, hidden, "
    "heads; seq for activations)"
)
BUBBLE_MORE = "Op times (t_B: input gradient; t_W: weight gradient)"
LEDGER_MORE_BUTTON = "▸ model, seq, TP/PP/CP/EP"
LEDGER_MODEL_LOADED = "Loaded {model}: its shape fills the fields; N comes from it."
BUBBLE_MORE_BUTTON = "▸ op times t_F, t_B, t_W"
EXERCISE_NOTES_TITLE = "My notes, exercises 2 and 3 (saved; exported beside the engine's answers)"
COLLECTIVES_TITLE = "Collective data flow on R ranks"
TAB_COLLECTIVES = "Collectives"
COLLECTIVE_STEP_HINT = "left/right: previous/next step; home/end: first/last (focus the diagram)"
COLLECTIVE_TOO_MANY = "The data-flow picture draws up to {limit} ranks; the cost above is exact."
COLLECTIVE_ONE_RANK = "One rank: nothing moves, so the collective costs nothing."
COLLECTIVE_NOT_SIMULATED = (
    "{algorithm} is costed, not drawn: NCCL pipelines many small chunks through two binary "
    "trees at once. Pick binomial to step through one tree's reduce and broadcast."
)

# Quiz (F12, `shardbook quiz`).
QUIZ_TITLE = "Quiz"
QUIZ_STATUS = (
    "Quiz · {lesson} · {kind} · {left} left after this · {done} rated · target recall {target}"
)
QUIZ_PLACEHOLDER = "Your answer: enter starts a new line, ctrl+r submits, escape leaves the box"
QUIZ_FROM_LESSON = (
    "Your answer from the lesson is below: edit it or press ctrl+r to reveal the key points."
)
QUIZ_SUBMIT = "Submit"
QUIZ_ACCEPT = "Accept"
QUIZ_AGAIN = "Check again"
QUIZ_EDIT = "Answer"
QUIZ_BLUR = "Leave box"
QUIZ_RATE_GROUP = "Rate"
QUIZ_JUDGE_GROUP = "True/False"
QUIZ_CHOOSE_GROUP = "Choose"
QUIZ_TRUE = "True"
QUIZ_FALSE = "False"
QUIZ_UNDO = "Undo"
QUIZ_LEAVE = "Back"
QUIZ_RETENTION = "Retention"
QUIZ_STATS = "Stats"
QUIZ_JUDGE_HINT = "Is this statement true? Press t (true) or f (false)."
QUIZ_RIGHT = "Right."
QUIZ_WRONG = "Not quite."
QUIZ_YOUR_ANSWER = "yours: "
QUIZ_EXPECTED = "expected: "
QUIZ_SOLUTION = "Worked solution"
QUIZ_KEY_POINTS = "Reference key points (added material, not the lesson's text)"
QUIZ_RATE_HINT = "How well did you recall it? Rate with 1-4 (next review below)."
QUIZ_RATE_SUGGESTED = "Enter accepts {rating}; or rate with 1-4 (next review below)."
QUIZ_RATING_KEY = "{key} {label} {interval}"
QUIZ_RATED = "Rated {rating}; next review {due} (in {interval})"
QUIZ_UNDONE = "Last rating undone; the question is asked again."
QUIZ_NOTHING_TO_UNDO = "Nothing to undo."
QUIZ_DONE = "Nothing more is due now. Rated this session: {done}."
QUIZ_HELD_BACK = (
    "{count} item(s) wait for the next session: each is paired with an item asked just before "
    "(a misconception and its counterpart, or two drills from one formula), and would give "
    "it away."
)
QUIZ_ANSWERED_TODAY = (
    "{count} self-check question(s) you answered in the lesson today come back tomorrow."
)
QUIZ_STATS_ROW = (
    "{lesson}: reviewed {reviewed}/{items}, due {due}, recall {recall} ({recalled}/{reviews} "
    "Good/Easy), estimated retrievability {retrievability}, next due {next_due}"
)
QUIZ_DONE_HINT = (
    "Enter checks again for items now due; s shows the statistics, r sets the desired "
    "retention; escape goes back to the lesson."
)
QUIZ_PROBLEM = "The quiz cannot start: {error}"
QUIZ_PLOT_FORECAST = "Reviews due per day, next {days} days (local dates): {total} in all"
QUIZ_PLOT_RECALL = "Recall per day (Good/Easy share, %), last {days} days: {recall} of {reviews}"
QUIZ_STATS_TITLE = "Review statistics"
QUIZ_STATS_CLOSE = "Escape or s closes."
QUIZ_RETENTION_TITLE = "Desired retention"
QUIZ_RETENTION_HELP = (
    "The chance of recall at which FSRS schedules each review, {low:.2f}-{high:.2f} (default "
    "{default:.2f}). Higher means shorter intervals and more reviews. It applies to the "
    "ratings you give from now on. Enter saves, escape cancels."
)
QUIZ_RETENTION_BAD = "Type a number from {low:.2f} to {high:.2f} (for example 0.85 or 85%)."
QUIZ_RETENTION_SET = "Desired retention {value:.2f}: saved in {path}."
QUIZ_RETENTION_NOT_SAVED = "Desired retention {value:.2f} for this window only: {why}"
QUIZ_RETENTION_READ_ONLY = "another window holds the progress folder, so settings are not saved."
QUIZ_SETTINGS_PROBLEM = "Settings: {problem}"
QUIZ_PALETTE_RETENTION = "Quiz: set the desired retention (r)"
QUIZ_PALETTE_STATS = "Quiz: review statistics, forecast and recall (s)"
QUIZ_PALETTE_UNDO = "Quiz: undo the last rating (u)"
QUIZ_HELP = (
    "Type an answer (enter starts a new line) and press ctrl+r to submit; escape leaves the "
    "answer box. A self-check question you answered in the lesson starts with that answer. "
    "Numeric drills are graded within the stated tolerance (3/11, 12.5% and units such as GB, "
    "GiB, ms are read); true/false items take t or f; matching items take a-d. Then rate your "
    "recall 1-4: the bar above the keys shows each rating's next review, computed by FSRS; "
    "enter accepts the suggested rating. Outside the answer box: u undoes the last rating, "
    "r sets the desired retention, s shows the statistics; escape goes back. Every answer and "
    "rating is saved at once."
)

# Trade-offs pane.
TAB_TRADEOFFS = "Trade-offs"
TRADEOFFS_TITLE = "Trade-offs: step time, scaling"
TRADEOFFS_LINK = "interconnect"
TRADEOFFS_WORLD = "GPUs"
TRADEOFFS_MODEL = "model"
TRADEOFFS_BATCH = "global batch"
TRADEOFFS_SEQ = "seq len s"
TRADEOFFS_TABLE_TITLE = "T_step of each strategy alone on {world} GPUs, {link}"
TRADEOFFS_GROWTH_NOTE = "growth = T_step here / T_step on NVLink-class links (8 GPUs per node)"
TRADEOFFS_PLOT_TITLE = "Throughput vs GPUs (strong scaling, same links)"
TRADEOFFS_ASSUMPTIONS = "Assumed (every figure below)"
TRADEOFFS_EFFICIENCY = "efficiency at 64 GPUs: {values}"
TRADEOFFS_SKIPPED = "cannot run"
TRADEOFFS_COL_STRATEGY = ""
TRADEOFFS_COL_CASE = "case"
TRADEOFFS_COL_STEP = "T_step"
TRADEOFFS_COL_EXPOSED = "exposed"
TRADEOFFS_COL_GROWTH = "growth"
TRADEOFFS_COL_WAIT = "wait"
TRADEOFFS_COL_EFFICIENCY = "eff."
TRADEOFFS_COL_FITS = "fits 80 GB"
TRADEOFFS_SCENARIO_HINT = "Counterexamples: press 1, 2 or 3 (or a button); F5 widens the pane."
TRADEOFFS_KEY_1 = "Slow network"
TRADEOFFS_KEY_2 = "Small batch"
TRADEOFFS_KEY_3 = "MoE imbalance"
TRADEOFFS_DROPPED = "{case}: {share:.0%} of tokens dropped (over the hot expert's capacity)"
TRADEOFFS_NOTE_LABELS = {"ex4": "Exercise 4", "ex5": "Exercise 5"}

# Lab (the optional torch extra).
TAB_LAB = "Lab"
LAB_TITLE = "Lab: the formulas against PyTorch"
LAB_NO_TORCH = (
    "The Lab runs the collectives on real ranks (torch.distributed, Gloo, this machine only) and "
    "measures a real model's memory. It needs PyTorch, the optional 'lab' extra (CPU build of "
    "torch 2.13). Install it from this checkout, then restart the app:\n\n"
    "    {command}"
)
LAB_INTRO = (
    "Collectives: 4 local Gloo ranks, each output beside the simulator's, time beside the "
    "alpha-beta model. Memory: one AdamW step of a small GPT, measured bytes beside the ledger. "
    "F5 widens the pane; arrows scroll the report."
)
LAB_RUN_COLLECTIVES = "Collectives"
LAB_RUN_MEMORY = "Memory"
LAB_RUNNING = "Running {what}… (torch starts in a few seconds)"
LAB_DONE = "{what}: done."
LAB_FAILED = "{what} failed: {error}"
BUBBLE_TIME_UNIT = "t = op-time units: the t_F, t_B, t_W entered below (default 1 each)"
