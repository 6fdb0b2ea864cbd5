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

# Side-pane tabs where the full names do not fit (the dot marks a shortened name).
TAB_SHORT = {
    "ledger": "Ledger",
    "bubble": "Bubble",
    "diagrams": "Diagr.",
    "collectives": "Coll.",
    "tradeoffs": "Trade.",
    "lab": "Lab",
}

# Layout.
# Below the smallest usable size: the longest of these that fits the terminal's width.
TOO_SMALL = (
    "shardbook needs a terminal of at least {need} (this one is {now})",
    "shardbook needs at least {need} (now {now})",
    "Needs {need} (now {now})",
    "Needs {need}",
    "{need}",
)
FIRST_RUN_HINT = (
    "New here? ctrl+n takes you to the next step of the study plan and puts the cursor where it "
    "is done (F11 lists the steps) · ] [ next / previous section · ctrl+o outline · F2 "
    "calculators (F6 hides them) · F12 quiz · F1 every key. (Shown once.)"
)

# Reading pane.
OUTLINE_TITLE = "Outline"
MY_STATUS = "my status：{status}"
META_SECTION = "Lesson"
ANSWER_PLACEHOLDER = "Your answer (saved as you type)"
REFLECTION_PLACEHOLDER = "Your notes (saved as you type)"
KEY_POINTS_TITLE = "Reference key points (added material, not the lesson's text)"
KEY_POINTS_SOURCES = "Sources: "
REVEAL_BUTTON = "Reveal key points (ctrl+r)"
HIDE_KEY_POINTS = "Hide key points"
SHOW_KEY_POINTS = "Show key points (ctrl+r)"
REVEAL_FIRST_ANSWER = "Write your answer first, then reveal the key points."
SELF_CHECK_HINT = "Answer each question, then press ctrl+r in its box to compare with key points."
REFLECTION_HINT = "Fill in each field; it is saved within a second and on quit."
# A printable key that no text box and no key binding took (tui/keys.py).
KEY_NOT_TYPED = (
    'Not typed: "{text}". No text box has the focus here; Tab moves to the next field, '
    "F1 lists the keys."
)

# Status and saving.
STATUS_WORD = "status"
SAVED_AT = "saved {time}"
NOT_SAVED = "NOT SAVED"
SAVE_FAILED = (
    "Could not save: {error}. Your text is kept in memory; fix the folder and press ctrl+s, "
    "or press F8 to export your notes elsewhere."
)
READ_ONLY = "READ-ONLY"
SETTINGS_READ_ONLY = (
    "another window holds the progress folder, so settings are kept for this window, not saved"
)
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
EXPORT_CHOOSE = "Export"
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
QUIZ_PLACEHOLDER = "{field}: enter starts a new line, ctrl+r submits, escape leaves the box"
# The answer box's name, by the unit a drill reads a bare number in (engine.quiz's Question.unit):
# the placeholder starts with it and a refused answer is named by it, as a calculator's field is.
QUIZ_ANSWER_FIELD = "Your answer"
QUIZ_ANSWER_FIELDS = {
    "GB": "Your answer (GB)",
    "ms": "Your answer (ms)",
    "fraction": "Your answer (fraction or %)",
}
QUIZ_FROM_LESSON = (
    "Your answer from the lesson is below: edit it or press ctrl+r to reveal the key points."
)
QUIZ_FROM_DRAFT = (
    "Your answer typed last time and not submitted is below: edit it or press ctrl+r to submit."
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

# Search (/ and ctrl+f) and the notes view (ctrl+e).
SEARCH_TITLE = "Search the lesson and your notes"
SEARCH_PLACEHOLDER = "Type to search: any case, literal text (reduce-scatter, ZeRO, 通信)"
SEARCH_KEYS = "up/down: choose · enter: go there · escape: close"
SEARCH_EMPTY = "The lesson as shown, your answers, reflections and exercise notes."
SEARCH_NONE = "No match."
SEARCH_COUNT = "{count} match(es)"
SEARCH_MANY = "{count} matches; the first {shown} are listed: type more to narrow them."
SEARCH_CLOSE = "Close"
SEARCH_NEXT = "Next hit"
SEARCH_PREVIOUS = "Previous hit"
SEARCH_QUERY = "Back to the query"
SEARCH_NO_SECTION = "Other notes"
# The field a match of the learner's own text is in, by where it is kept.
SEARCH_FIELDS = {
    "answers": "your answer to question {number}: {label}",
    "reflections": "your reflection: {label}",
    "notes": "your note, exercise {number}: {label}",
}
SEARCH_HELP = (
    "Search looks through the lesson as the reading pane shows it (the key points of a "
    "self-check question once revealed) and through your answers, reflections and exercise "
    "notes. Case and character width are ignored (ＺｅＲＯ finds ZeRO); the query is literal "
    "text, never a pattern; Chinese needs no spaces. Up/down choose a hit, enter goes there: "
    "the match is marked in the lesson, or selected in the box where you wrote it."
)
NOTES_TITLE = "Everything you wrote (read-only; enter: edit it there)"
NOTES_COUNT = "Written: {count}, in the lesson's order (answers, reflections, exercise notes)."
NOTES_EMPTY = "Nothing written yet: your answers, reflections and exercise notes will be here."
NOTES_KEYS = "up/down: move · enter: edit it where it is written · escape: close"
NOTES_HELP = (
    "Your self-check answers, reflection fields and exercise notes together, in the lesson's "
    "order, as you wrote them. Enter opens the one highlighted where it is edited: the "
    "self-check or reflection section, or the Diagrams or Trade-offs pane for an exercise note."
)
NOTE_NOWHERE = (
    "This note's exercise is no longer in the lesson, so it has no box to edit it in; it is "
    "kept in your progress file and in every export."
)
# Guided study: the study plan in the app (ctrl+n, F11, F9, the session summary).
# A step's state, drawn before its title in the outline, the plan view and the reader: a glyph
# of its own for each state (not colour alone), none of them of ambiguous East Asian width.
STATE_GLYPHS = {"todo": "◌", "started": "◔", "done": "✓"}
STATE_WORDS = {"todo": "to do", "started": "started", "done": "done"}
PLAN_FIGURE = "plan {figure}"
META_NEXT = (
    "Study plan: {figure} steps done ({counts}). Next: {step}. ctrl+n goes there; F11 lists "
    "every step."
)
META_DONE = "Every step of the study plan is done. F11 lists them; F9 marks the lesson complete."
PANE_WORDS = {
    "ledger": "the Ledger (F2)",
    "diagrams": "the Diagrams pane (F4)",
    "collectives": "the Collectives pane (F4 twice)",
    "tradeoffs": "Trade-offs (F10)",
    "reader": "the lesson",
    "quiz": "the quiz (F12)",
}
# What to do at each kind of place, said when ctrl+n (or Enter on a step) goes there.
STEP_SAY = {
    "read": "Read it; ctrl+n pages down, then goes on.",
    "ledger": "Make the ledger your own (change N, the precision, ZeRO; seq for activations).",
    "note": "Write your note in the box; the engine's answer opens once you have.",
    "free-note": "Write your note in the box.",
    "pane": "Work it in this pane.",
    "self-check": "Write your answer; ctrl+r then reveals the key points.",
    "reflection": "Write in the field.",
    "reviews": "Reviews are due: rate each one.",
}
STEP_HERE = "Step {number}/{total}: {step}. {say}"
ALL_DONE = "Every step of {lesson} is done: {counts}. F9 marks the lesson complete."
ALL_DONE_COMPLETE = "Every step of {lesson} is done and the lesson is complete."
EXERCISE_ITEM_STATE = "{glyph} {state} · Enter: work it in {where}"
EXERCISE_HINT = (
    "Each exercise says where it is worked and how far you are: Tab to it and press Enter, or "
    "ctrl+n for the next step."
)
PANE_EXERCISE = "Exercise {number} {glyph} {state}: {text}"
OBJECTIVE_HINT = (
    "Rate each objective before you study and again at the end: Tab to it, then 1 not yet, "
    "2 partly, 3 can (s / e: rate the start / the end; 0 clears)."
)
OBJECTIVE_TRAINED = "trained by {trainers} ({done}/{total} done)"
OBJECTIVE_RATING = "your rating: start {start} · end {end}"
OBJECTIVE_RATING_FOCUSED = (
    "your rating: {start_mark}start {start} · {end_mark}end {end}; keys: 1 not yet · 2 partly · "
    "3 can · 0 clear · s/e start/end"
)
OBJECTIVE_KEYS = {"1": "Not yet", "2": "Partly", "3": "Can", "0": "Clear", "s": "Start", "e": "End"}
NOT_RATED = "not rated"
LINK_TEXT = "▸ {label}: {url}"
LINK_HINT = "Links open in your browser: Tab to one and press Enter."
LINK_OPENED = "Opening {url} in your browser."
# Predict, then reveal: the engine's answer folded until the learner's note is written.
FOLDED_DIAGRAM = (
    "Folded until you write your note below: {parts}. ctrl+r looks first (recorded as "
    "looked before answering)."
)
FOLDED_PARTS = {
    "split": "what is split and the picture (exercise 2)",
    "comm": "the collectives (exercise 3)",
    "wait": "one wait (exercise 3)",
}
FOLDED_TRADEOFFS = (
    "The step-time table and the scaling plot answer exercise 4, so they are folded until you "
    "write your judgement below. ctrl+r looks first (recorded as looked before answering)."
)
LOOK_FIRST_QUESTION = (
    "Look at the engine's answer before writing your note? It is recorded as \"looked before "
    'answering" and shown in your export: {notes}.'
)
LOOKED_MARK = "looked before answering"
NOTHING_FOLDED = "Nothing is folded here: the engine's answers are shown."
LOOK_KEY = "Look first"
CONFIRM_YES = "enter / y: yes · escape: no"
CONFIRM_TITLE = "Please confirm"
# F9 on an unfinished plan.
COMPLETE_QUESTION = "{lesson} is not finished: {counts}. Left:"
COMPLETE_MORE = "and {count} more"
COMPLETE_ASK = "Mark it complete anyway?"
MARKED_BACK = "Lesson marked {status} again (what your progress shows)."
# The plan view (F11).
PLAN_TITLE = "Study plan · {lesson} · {figure} steps done"
PLAN_HINT = "enter: go to the step · s: session summary · escape: close"
PLAN_NEXT = "next: {step}"
PLAN_NEXT_NONE = "next: every step is done"
PLAN_OBJECTIVES = "Objectives (your rating at the start -> at the end)"
PLAN_OBJECTIVE = "{number}. {text}: {start} -> {end}; trained by {done}/{total} done"
PLAN_SESSION = "This session: {duration}, {finished} step(s) finished, {written} answer(s) written."
SUMMARY_TITLE = "This session"
SUMMARY_HINT = "escape: close. The summary is printed again when you quit."
PALETTE_SUMMARY = "Session summary: what this session did, what comes next"
