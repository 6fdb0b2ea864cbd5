"""Every string of the app's chrome (keys, buttons, messages), in one place.

The lesson itself stays in its original Chinese and comes from content/; these are the
interface's own words, written in English (the gettext msgids, marked with ``N_`` for Babel's
extraction) and translated when read: ``strings.SAVED_AT`` is the text in the interface language
of the moment (:mod:`engine.i18n`), a tuple or a mapping of texts is translated item by item.
Code that must keep the English source (a ``Binding``'s description, fixed when its class is
defined and translated where the footer and the help show it) reads ``strings.msgids.NAME``.

The module is long (about 640 lines) because it is every word of the interface: one file for a
translator or a reviewer to read whole, each string beside the others of its screen.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from engine.i18n import N_, gettext, ngettext

APP_TITLE = "shardbook"

# Side-pane tabs.
TAB_LEDGER = N_("Ledger")
TAB_BUBBLE = N_("Bubble")
TAB_DIAGRAMS = N_("Diagrams")

# Side-pane tabs where the full names do not fit (the dot marks a shortened name).
TAB_SHORT = {
    "ledger": N_("Ledger"),
    "bubble": N_("Bubble"),
    "diagrams": N_("Diagr."),
    "collectives": N_("Coll."),
    "tradeoffs": N_("Trade."),
    "lab": N_("Lab"),
}

# Layout.
# Below the smallest usable size: the longest of these that fits the terminal's width.
TOO_SMALL = (
    N_("shardbook needs a terminal of at least {need} (this one is {now})"),
    N_("shardbook needs at least {need} (now {now})"),
    N_("Needs {need} (now {now})"),
    N_("Needs {need}"),
    "{need}",
)
FIRST_RUN_HINT = N_(
    "New here? ctrl+n takes you to the next step of the study plan and puts the cursor where it "
    "is done (F11 lists the steps) · ] [ next / previous section · ctrl+o outline · F2 "
    "calculators (F6 hides them) · F12 quiz · F1 every key. (Shown once.)"
)

# Reading pane.
OUTLINE_TITLE = N_("Outline")
MY_STATUS = N_("my status: {status}")
META_SECTION = N_("Lesson")
ANSWER_PLACEHOLDER = N_("Your answer (saved as you type)")
REFLECTION_PLACEHOLDER = N_("Your notes (saved as you type)")
KEY_POINTS_TITLE = N_("Reference key points (added material, not the lesson's text)")
KEY_POINTS_SOURCES = N_("Sources: ")
REVEAL_BUTTON = N_("Reveal key points (ctrl+r)")
HIDE_KEY_POINTS = N_("Hide key points")
SHOW_KEY_POINTS = N_("Show key points (ctrl+r)")
REVEAL_FIRST_ANSWER = N_("Write your answer first, then reveal the key points.")
SELF_CHECK_HINT = N_(
    "Answer each question, then press ctrl+r in its box to compare with key points."
)
REFLECTION_HINT = N_("Fill in each field; it is saved within a second and on quit.")
# A printable key that no text box and no key binding took (tui/keys.py).
KEY_NOT_TYPED = N_(
    'Not typed: "{text}". No text box has the focus here; Tab moves to the next field, '
    "F1 lists the keys."
)

# Status and saving.
STATUS_WORD = N_("status")
SAVED_AT = N_("saved {time}")
NOT_SAVED = N_("NOT SAVED")
SAVE_FAILED = N_(
    "Could not save: {error}. Your text is kept in memory; fix the folder and press ctrl+s, "
    "or press F8 to export your notes elsewhere."
)
READ_ONLY = N_("READ-ONLY")
SETTINGS_READ_ONLY = N_(
    "another window holds the progress folder, so settings are kept for this window, not saved"
)
READ_ONLY_NOTICE = N_(
    "Another shardbook window is using this progress folder, so this one is read-only: what "
    "you type is kept here, not saved. Close the other window and press ctrl+s (both windows' "
    "changes are merged), or press F8 to export."
)
MERGED = N_("Another window saved this lesson meanwhile; its changes and yours were merged.")
SWITCH_BLOCKED = N_(
    "Your text is not saved yet, so this lesson stays open: press ctrl+s to retry, or F8 to "
    "export your notes, then switch."
)
RESCUED = N_("Progress could not be saved; a copy of it was written to {path}")
NOT_RESCUED = N_("Progress could not be saved, nor a copy written anywhere: {error}")
BROKEN_LESSON = N_("(cannot be read)")
EXPORTED = N_("Exported {what} to {path}")
EXPORT_FAILED = N_("Could not export: {error}")
EXPORT_TITLE = N_("Export your notes (F8 again: the highlighted format)")
EXPORT_MD = N_("Markdown (.md): the notes for any Markdown viewer")
EXPORT_JSON = N_("JSON (.json): the same notes as one object")
EXPORT_HTML = N_("HTML (.html): the notes as one web page")
EXPORT_ANKI = N_("Anki deck (.apkg): the lesson's quiz items as cards")
EXPORT_WHERE = N_("Written to {folder} (elsewhere if it cannot be written). escape: cancel.")
EXPORT_CANCEL = N_("Cancel")
EXPORT_CHOOSE = N_("Export")
MARKED_COMPLETE = N_("Lesson marked complete.")
MARKED_IN_PROGRESS = N_("Lesson marked in progress.")
QUARANTINED = N_("Progress file problem: {message}")
CANNOT_SUSPEND = N_(
    "Nothing to suspend to: shardbook was not started from a shell with job control (fg). "
    "Your text is saved as you type; ctrl+q quits."
)

# Calculators.
CALC_LAST_GOOD = N_("{error} (showing the last good result)")
# The figures kept on screen are those of the field's previous value (typing 1e40, those of 1e4).
CALC_LAST_GOOD_FOR = N_("{error} (showing the result for {value})")
CALC_ENTER_VALUES = N_("Enter values above.")
# Another field named inside a calculator's message, by its label on the form, in the quotes
# the language's messages use for what was typed too ('abc' in English, “abc” in Chinese).
FIELD_NAMED = N_("'{label}'")
# ctrl+g keeps the activation inputs (seq and the model's shape), so it never takes exercise 1's
# fourth column away; each message says what exercise 1 records after it.
LEDGER_EXAMPLE_LOADED = N_(
    "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam. Exercise 1 is "
    "done once its activations are computed too: enter {fields} (▸ below)."
)
LEDGER_EXAMPLE_LOADED_DONE = N_(
    "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam, with your "
    "activation inputs kept: all four columns are computed, so exercise 1 is done."
)
# ctrl+n back at exercise 1 with some of its activation inputs given: the ones still empty
# (the second while one of the model's shape is among them).
LEDGER_ACTIVATIONS_LEFT = N_("Not done yet: activations still need {fields}.")
LEDGER_SHAPE_LEFT = N_("Not done yet: activations still need {fields} (a model fills the shape).")
LEDGER_EXAMPLE_CONFIRM = N_(
    "Press ctrl+g again to replace your inputs with exercise 1's 1B example (your activation "
    "inputs are kept)."
)

# Errors that stop the app from showing a lesson.
LESSON_ERROR_TITLE = N_("This lesson cannot be opened")
LESSON_ERROR_HINT = N_(
    "Fix the file (run `shardbook check-content` for every problem) or open another lesson "
    "with ctrl+p."
)
NO_LESSONS = N_("No lessons found in {folder}.")
NO_SUCH_LESSON = N_("no lesson with id {lesson}")  # lesson: engine.errors.quoted

HELP_TITLE = N_("shardbook — keys")
HELP_INTRO = N_(
    "Keyboard first: every action below also has an entry in the command palette (ctrl+p). "
    "Tab and shift+tab move between fields; arrows move in lists. Everything you type is "
    "saved within a second and again when you quit."
)
HELP_FOCUSED = N_("About the focused pane")
HELP_CLOSE = N_("Press escape or F1 to close.")

# The hints that name F5, beside the lesson and zoomed (tui.widgets.reader.ZoomHint).
DIAGRAM_ZOOM_HINT = (
    N_("F5 zooms the pane; arrows scroll the diagram."),
    N_("F5 narrows the pane and brings the lesson back; arrows scroll the diagram."),
)
LEDGER_TITLE = N_("Memory ledger (per rank)")
BUBBLE_TITLE = N_("Pipeline bubble")
LEDGER_MORE = N_(
    "Model, activations, fine-tuning and parallelism (pick a model or fill layers, hidden, "
    "heads; seq for activations)"
)
BUBBLE_MORE = N_("Op times (t_B: input gradient; t_W: weight gradient)")
LEDGER_MORE_BUTTON = N_("▸ model, seq, TP/PP/CP/EP")
LEDGER_MODEL_LOADED = N_("Loaded {model}: its shape fills the fields; N comes from it.")
BUBBLE_MORE_BUTTON = N_("▸ op times t_F, t_B, t_W")
EXERCISE_NOTES_TITLE = N_(
    "My notes, exercises 2 and 3 (saved; exported beside the engine's answers)"
)
COLLECTIVES_TITLE = N_("Collective data flow on R ranks")
TAB_COLLECTIVES = N_("Collectives")
COLLECTIVE_STEP_HINT = N_(
    "left/right: previous/next step; home/end: first/last, with the diagram focused (ctrl+y "
    "focuses it)"
)
BANDWIDTH_WITHOUT_UNIT = N_(
    "bandwidth {typed} has no unit: read as bytes per second, {rate}. For gigabytes per second "
    "type e.g. 100GB/s."
)
COLLECTIVE_TOO_MANY = N_(
    "The data-flow picture draws up to {limit} ranks; the cost above is exact."
)
COLLECTIVE_ONE_RANK = N_("One rank: nothing moves, so the collective costs nothing.")
COLLECTIVE_NOT_SIMULATED = N_(
    "{algorithm} is costed, not drawn: NCCL pipelines many small chunks through two binary "
    "trees at once. Pick binomial to step through one tree's reduce and broadcast."
)

# Quiz (F12, `shardbook quiz`).
QUIZ_TITLE = N_("Quiz")
QUIZ_KINDS = {
    "self-check": N_("self-check"),
    "drill": N_("drill"),
    "misconception": N_("misconception"),
    "matching": N_("matching"),
}
QUIZ_LOADING = N_("reading lessons {read} of {total}…")
QUIZ_LOADING_ALL = N_(
    "Reading the other lessons: their questions are asked as soon as they are read. "
    "Escape goes back to the lesson."
)
QUIZ_STATUS = N_(
    "Quiz · {lesson} · {kind} · {left} left after this · {done} rated · desired retention {target}"
)
QUIZ_PLACEHOLDER = N_("{field}: enter starts a new line, ctrl+r submits, escape leaves the box")
QUIZ_TAB_STAYS = N_(
    "Tab is not typed in the answer and does not leave it: escape leaves the box (then u, r, s "
    "are the quiz's keys)"
)
# The answer box's name, by the unit a drill reads a bare number in (engine.quiz's Question.unit):
# the placeholder starts with it and a refused answer is named by it, as a calculator's field is.
QUIZ_ANSWER_FIELD = N_("Your answer")
QUIZ_ANSWER_FIELDS = {
    "GB": N_("Your answer (GB)"),
    "ms": N_("Your answer (ms)"),
    "fraction": N_("Your answer (fraction or %)"),
}
# The lesson's answer is a start: a quiz answer is kept with its review, never in the lesson's
# place (engine.quiz.session.QuizSession.answer).
QUIZ_FROM_LESSON = N_(
    "Your answer from the lesson is below, to start from: edit it for this review (the lesson "
    "keeps its own) or press ctrl+r to reveal the key points."
)
QUIZ_FROM_DRAFT = N_(
    "Your answer typed last time and not submitted is below: edit it or press ctrl+r to submit."
)
QUIZ_SUBMIT = N_("Submit")
QUIZ_ACCEPT = N_("Accept")
QUIZ_AGAIN = N_("Check again")
QUIZ_EDIT = N_("Answer")
QUIZ_BLUR = N_("Leave box")
QUIZ_RATE_GROUP = N_("Rate")
QUIZ_JUDGE_GROUP = N_("True/False")
QUIZ_CHOOSE_GROUP = N_("Choose")
QUIZ_TRUE = N_("True")
QUIZ_FALSE = N_("False")
QUIZ_UNDO = N_("Undo")
QUIZ_LEAVE = N_("Back")
QUIZ_RETENTION = N_("Retention")
QUIZ_STATS = N_("Stats")
QUIZ_JUDGE_HINT = N_("Is this statement true? Press t (true) or f (false).")
QUIZ_RIGHT = N_("Right.")
QUIZ_WRONG = N_("Not quite.")
QUIZ_YOUR_ANSWER = N_("yours: ")
QUIZ_EXPECTED = N_("expected: ")
QUIZ_SOLUTION = N_("Worked solution")
QUIZ_KEY_POINTS = N_("Reference key points (added material, not the lesson's text)")
QUIZ_RATE_HINT = N_("How well did you recall it? Rate with 1-4 (next review below).")
QUIZ_RATE_SUGGESTED = N_("Enter accepts {rating}; or rate with 1-4 (next review below).")
QUIZ_RATING_KEY = N_("{key} {label} {interval}")
QUIZ_RATED = N_("Rated {rating}; next review {due} (in {interval})")
QUIZ_UNDONE = N_("Last rating undone; the question is asked again.")
QUIZ_NOTHING_TO_UNDO = N_("Nothing to undo.")
QUIZ_DONE = N_("Nothing more is due now. Rated this session: {done}.")
QUIZ_STATS_ROW = N_(
    "{lesson}: {reviewed}, due {due}, recall {recall} ({recalled}/{reviews} Good/Easy), "
    "estimated retrievability {retrievability}, next due {next_due}"
)
QUIZ_DONE_HINT = N_(
    "Enter checks again for items now due; s shows the statistics, r sets the desired "
    "retention; escape goes back to the lesson."
)
QUIZ_PROBLEM = N_("The quiz cannot start: {error}")
QUIZ_PLOT_FORECAST = N_("Reviews due per day, next {days} days (local dates): {total} in all")
QUIZ_PLOT_RECALL = N_(
    "Recall per day (Good/Easy share, %), last {days} days: {recall} of {reviews}"
)
QUIZ_STATS_TITLE = N_("Review statistics")
QUIZ_STATS_CLOSE = N_("Escape or s closes.")
QUIZ_RETENTION_TITLE = N_("Desired retention")
QUIZ_RETENTION_HELP = N_(
    "The chance of recall at which FSRS schedules each review, {low:.2f}-{high:.2f} (default "
    "{default:.2f}). Higher means shorter intervals and more reviews. It applies to the "
    "ratings you give from now on. Enter saves, escape cancels."
)
# What is wrong with a typed desired retention, then the range it takes.
QUIZ_RETENTION_EMPTY = N_(
    "Nothing typed: type a number from {low:.2f} to {high:.2f} (for example 0.85 or 85%)."
)
QUIZ_RETENTION_NOT_NUMBER = N_(
    "{text} is not a number: type one from {low:.2f} to {high:.2f} (for example 0.85 or 85%)."
)
QUIZ_RETENTION_TOO_LARGE = N_(
    "{text} is too large (overflows a float): type a number from {low:.2f} to {high:.2f} (for "
    "example 0.85 or 85%)."
)
QUIZ_RETENTION_OUT_OF_RANGE = N_(
    "{text} is outside {low:.2f}-{high:.2f}: type a number in that range (for example 0.85 or 85%)."
)
QUIZ_RETENTION_SET = N_("Desired retention {value:.2f}: saved in {path}.")
QUIZ_RETENTION_NOT_SAVED = N_("Desired retention {value:.2f} for this window only: {why}")
QUIZ_PALETTE_RETENTION = N_("Quiz: set the desired retention (r)")
QUIZ_PALETTE_STATS = N_("Quiz: review statistics, forecast and recall (s)")
QUIZ_PALETTE_UNDO = N_("Quiz: undo the last rating (u)")
QUIZ_HELP = N_(
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
TAB_TRADEOFFS = N_("Trade-offs")
TRADEOFFS_BUSY = N_("Computing the table and the plot for the new choice…")
TRADEOFFS_FAILED = N_("The table and the plot could not be computed: {error}")
TRADEOFFS_TITLE = N_("Trade-offs: step time, scaling")
TRADEOFFS_LINK = N_("interconnect")
TRADEOFFS_WORLD = N_("GPUs")
TRADEOFFS_MODEL = N_("model")
TRADEOFFS_BATCH = N_("global batch")
TRADEOFFS_SEQ = N_("seq len s")
TRADEOFFS_TABLE_TITLE = N_("T_step of each strategy alone on {world} GPUs, {link}")
TRADEOFFS_GROWTH_NOTE = N_(
    "exposed = the communication time not hidden behind compute (a part of T_step); growth = "
    "T_step here / T_step on NVLink-class links (8 GPUs per node)"
)
TRADEOFFS_PLOT_TITLE = N_("Throughput vs GPUs (strong scaling, same links)")
TRADEOFFS_ASSUMPTIONS = N_("Assumed (every figure below)")
TRADEOFFS_EFFICIENCY = N_("efficiency at 64 GPUs: {values}")
TRADEOFFS_SKIPPED = N_("cannot run")
TRADEOFFS_COL_STRATEGY = ""
TRADEOFFS_COL_CASE = N_("case")
TRADEOFFS_COL_STEP = N_("T_step")
TRADEOFFS_COL_EXPOSED = N_("exposed")
TRADEOFFS_COL_GROWTH = N_("growth")
TRADEOFFS_COL_WAIT = N_("wait")
TRADEOFFS_COL_EFFICIENCY = N_("eff.")
TRADEOFFS_COL_FITS = N_("fits 80 GB")
TRADEOFFS_SCENARIO_HINT = (
    N_("Counterexamples: press 1, 2 or 3 (or a button); F5 widens the pane."),
    N_(
        "Counterexamples: press 1, 2 or 3 (or a button); F5 narrows the pane and brings the "
        "lesson back."
    ),
)
TRADEOFFS_KEY_1 = N_("Slow network")
TRADEOFFS_KEY_2 = N_("Small batch")
TRADEOFFS_KEY_3 = N_("MoE imbalance")
TRADEOFFS_MEMORY_NOTE = N_(
    "fits 80 GB: each GPU's memory, model states + activations + communication buffers (the "
    "memory ledger's terms; GB = 10^9 bytes):"
)
TRADEOFFS_MEMORY_CASE = N_("{case}: {terms}")
TRADEOFFS_DROPPED = N_("{case}: {share:.0%} of tokens dropped (over the hot expert's capacity)")
TRADEOFFS_NOTE_LABELS = {"ex4": N_("Exercise 4"), "ex5": N_("Exercise 5")}

# Lab (the optional torch extra).
TAB_LAB = N_("Lab")
LAB_TITLE = N_("Lab: the formulas against PyTorch")
LAB_NO_TORCH = N_(
    "The Lab runs the collectives on real ranks (torch.distributed, Gloo, this machine only) and "
    "measures a real model's memory. It needs PyTorch, the optional 'lab' extra (CPU build of "
    "torch 2.13). Install it with the command below, then restart the app."
)
LAB_INTRO = (
    N_(
        "Collectives: 4 local Gloo ranks, each output beside the simulator's, time beside the "
        "alpha-beta model. Memory: one AdamW step of a small GPT, measured bytes beside the "
        "ledger. F5 widens the pane; arrows scroll the report."
    ),
    N_(
        "Collectives: 4 local Gloo ranks, each output beside the simulator's, time beside the "
        "alpha-beta model. Memory: one AdamW step of a small GPT, measured bytes beside the "
        "ledger. F5 narrows the pane and brings the lesson back; arrows scroll the report."
    ),
)
LAB_RUN_COLLECTIVES = N_("Collectives")
LAB_RUN_MEMORY = N_("Memory")
LAB_EXPERIMENTS = {"collectives": N_("collectives"), "memory": N_("memory")}
"""Each experiment as the Lab's status line names it."""
LAB_RUNNING = N_("Running {what}… (torch starts in a few seconds)")
LAB_DONE = N_("{what}: done.")
LAB_FAILED = N_("{what} failed: {error}")
BUBBLE_SIMULATING = N_(
    "simulating {ops:,} ops… the closed form is shown meanwhile; keep typing, a newer value "
    "replaces this one"
)
BUBBLE_SIMULATION_FAILED = N_("the simulation failed: {error}")
# The Bubble pane's heading: the schedule and its sizes ("gpipe: p=4, m=8").
BUBBLE_HEADING = N_("{schedule}: p={stages}, m={micro_batches}")
# A v typed that the schedule does not use (only interleaved-1f1b splits a stage into chunks).
BUBBLE_V_NOT_USED = N_("{heading}; v not used")
BUBBLE_TIME_UNIT = N_("t = op-time units: the t_F, t_B, t_W entered below (default 1 each)")

# Search (/ and ctrl+f) and the notes view (ctrl+e).
SEARCH_TITLE = N_("Search the lesson and your notes")
SEARCH_PLACEHOLDER = N_("Type to search: any case, literal text (reduce-scatter, ZeRO, 通信)")
SEARCH_KEYS = N_("up/down: choose · enter: go there · escape: close")
SEARCH_EMPTY = N_("The lesson as shown, your answers, reflections and exercise notes.")
SEARCH_NONE = N_("No match.")
SEARCH_MANY = N_("{count} matches; the first {shown} are listed: type more to narrow them.")
# What the count line says ({found}) after characters past the query's limit were left out.
SEARCH_CUT = N_("Only the first {limit} characters are kept. {found}")
SEARCH_CLOSE = N_("Close")
# A paste of several lines into a one-line field (a calculator's, the search's): all of it kept.
PASTE_JOINED = N_("The lines of the paste were joined with spaces: this field holds one line.")
SEARCH_NEXT = N_("Next hit")
SEARCH_PREVIOUS = N_("Previous hit")
SEARCH_QUERY = N_("Back to the query")
SEARCH_NO_SECTION = N_("Other notes")
# The field a match of the learner's own text is in, by where it is kept.
SEARCH_FIELDS = {
    "answers": N_("your answer to question {number}: {label}"),
    "reflections": N_("your reflection: {label}"),
    "notes": N_("your note, exercise {number}: {label}"),
}
SEARCH_HELP = N_(
    "Search looks through the lesson as the reading pane shows it (the key points of a "
    "self-check question once revealed) and through your answers, reflections and exercise "
    "notes. Case and character width are ignored (ＺｅＲＯ finds ZeRO); the query is literal "
    "text, never a pattern; Chinese needs no spaces. Up/down choose a hit, enter goes there: "
    "the match is marked in the lesson, or selected in the box where you wrote it."
)
NOTES_TITLE = N_("Everything you wrote (read-only; enter: edit it there)")
NOTES_COUNT = N_("Written: {count}, in the order the lesson asks for them.")
NOTES_EMPTY = N_("Nothing written yet: your answers, reflections and exercise notes will be here.")
NOTES_KEYS = N_("up/down: move · enter: edit it where it is written · escape: close")
NOTES_HELP = N_(
    "Your self-check answers, reflection fields and exercise notes together, in the lesson's "
    "order, as you wrote them. Enter opens the one highlighted where it is edited: the "
    "self-check or reflection section, or the Diagrams or Trade-offs pane for an exercise note."
)
NOTE_NOWHERE = N_(
    "This note's exercise is no longer in the lesson, so it has no box to edit it in; it is "
    "kept in your progress file and in every export."
)
# Guided study: the study plan in the app (ctrl+n, F11, F9, the session summary).
# A step's state, drawn before its title in the outline, the plan view and the reader: a glyph
# of its own for each state (not colour alone), none of them of ambiguous East Asian width.
STATE_GLYPHS = {"todo": "◌", "started": "◔", "done": "✓"}
STATE_WORDS = {"todo": N_("to do"), "started": N_("started"), "done": N_("done")}
PLAN_FIGURE = N_("plan {figure}")
META_NEXT = N_(
    "Study plan: {figure} steps done ({counts}). Next: {step}. ctrl+n goes there; F11 lists "
    "every step."
)
META_RATE_FIRST = N_(
    "Study plan: {figure} steps done ({counts}). Next: rate each objective at the start, then "
    "{step}. ctrl+n goes there; F11 lists every step."
)
META_DONE = N_(
    "Every step of the study plan is done. F11 lists them; F9 marks the lesson complete."
)
PANE_WORDS = {
    "ledger": N_("the Ledger (F2)"),
    "diagrams": N_("the Diagrams pane (F4)"),
    "collectives": N_("the Collectives pane (F4 twice)"),
    "tradeoffs": N_("Trade-offs (F10)"),
    "reader": N_("the lesson"),
    "quiz": N_("the quiz (F12)"),
}
# What to do at each kind of place, said when ctrl+n (or Enter on a step) goes there.
STEP_SAY = {
    "read": N_("Read it; ctrl+n pages down, then goes on."),
    "ledger": N_(
        "List the four columns: activations need seq len s, layers L, hidden h and heads a "
        "(a model fills the last three)."
    ),
    "note": N_("Write your note in the box; the engine's answer opens once you have."),
    "free-note": N_("Write your note in the box."),
    "pane": N_("Work it in this pane."),
    "self-check": N_("Write your answer; ctrl+r then reveals the key points."),
    "reflection": N_("Write in the field."),
    "reviews": N_("Reviews are due: rate each one."),
}
STEP_HERE = N_("Step {number}/{total}: {step}. {say}")
# The same for one place of a step worked in several (exercise 2's notes, one at a time).
STEP_PART_HERE = N_("Step {number}/{total}, part {part}/{parts}: {step}. {say}")
# ctrl+n on to the next section to read, once STEP_HERE has said how reading goes on.
STEP_READ_ON = N_("Step {number}/{total}: {step}.")
# A numbered step as ctrl+n names it; with the strategy a note of it is about.
STEP_NUMBERED = {
    "exercise": N_("exercise {number}"),
    "self-check": N_("self-check {number}"),
}
STEP_NOTE = N_("{step}, {strategy}: {label}")
# ctrl+n's page down that reads a section to its end: the step ctrl+n goes to next.
STEP_SECTION_READ = N_("{section}: read to its end. Next, ctrl+n: step {number}/{total}, {step}.")
STEP_SECTION_READ_END = N_("{section}: read to its end.")
# ctrl+n from the only place not done: it stays there (the learner's box) and says so.
STEP_ONLY_ONE_LEFT = N_("Only this is left to do. {step}")
ALL_DONE = N_("Every step of {lesson} is done: {counts}. F9 marks the lesson complete.")
ALL_DONE_COMPLETE = N_("Every step of {lesson} is done and the lesson is complete.")
# The rating words of Chinese (还不能, 部分能) are three ideographs, which UAX #14 allows to break
# between: wherever one follows a key or a phase word (1 还不能, 开始 还不能) the translation joins
# them by a no-break space, and F11 joins both ratings around the arrow, so the line breaker keeps
# each whole (engine.linebreak, its glued words; tests/test_zh_strings.py).
RATE_AT_THE_START = N_(
    "Before you study: rate objective {number} now, at the start: 1 not yet, 2 partly, 3 can "
    "(left to rate at the start: {unrated}; ctrl+n goes on)."
)
RATE_AT_THE_END = N_(
    "Every step is done: rate objective {number} again now, at the end: 1 not yet, 2 partly, "
    "3 can (left to rate at the end: {unrated}; ctrl+n goes on)."
)
OBJECTIVE_RATED = {
    "start": N_("Objective {number} rated at the start: {level}. ctrl+n goes on."),
    "end": N_("Objective {number} rated at the end: {level}. ctrl+n goes on."),
}
EXERCISE_ITEM_STATE = N_("{glyph} {state} · Enter: work it in {where}")
EXERCISE_HINT = N_(
    "Each exercise says where it is worked and how far you are: Tab to it and press Enter, or "
    "ctrl+n for the next step."
)
PANE_EXERCISE = N_("Exercise {number} {glyph} {state}: {text}")
OBJECTIVE_HINT = N_(
    "Rate each objective before you study and again at the end: Tab to it, then 1 not yet, "
    "2 partly, 3 can (s / e: rate the start / the end; 0 clears)."
)
OBJECTIVE_TRAINED = N_("trained by {trainers} ({done}/{total} done)")
# A step's kind before its number ("exercise 2", "self-check 1").
STEP_KINDS = {"exercise": N_("exercise"), "self-check": N_("self-check")}
# Between the items of a list in a sentence ("exercise 2, self-check 2").
LIST_SEPARATOR = N_(", ")
# Between the works a text cites ("sources: A; B"): full-width in Chinese.
SOURCES_SEPARATOR = N_("; ")
OBJECTIVE_RATING = N_("your rating: start {start} · end {end}")
# A key and its word are joined by no-break spaces: a line never ends between them ("3" / "can").
OBJECTIVE_RATING_FOCUSED = N_(
    "your rating: {start_mark}start {start} · {end_mark}end {end}; keys: 1\u00a0not\u00a0yet · "
    "2\u00a0partly · 3\u00a0can · 0\u00a0clear · s/e\u00a0start/end"
)
OBJECTIVE_KEYS = {
    "1": N_("Not yet"),
    "2": N_("Partly"),
    "3": N_("Can"),
    "0": N_("Clear"),
    "s": N_("Start"),
    "e": N_("End"),
}
NOT_RATED = N_("not rated")
LINK_TEXT = N_("▸ {label}: {url}")
LINK_HINT = N_("Links open in your browser: Tab to one and press Enter.")
LINK_OPENED = N_("Opening {url} in your browser.")
# Predict, then reveal: the engine's answer folded until the learner's note is written.
FOLDED_DIAGRAM = N_(
    "Folded until you write your note below: {parts}. ctrl+r looks first (recorded as "
    "looked before answering)."
)
FOLDED_PARTS = {
    "split": N_("what is split and the picture (exercise 2)"),
    "comm": N_("the collectives (exercise 3)"),
    "wait": N_("one wait (exercise 3)"),
}
FOLDED_TRADEOFFS = N_(
    "The step-time table and the scaling plot answer exercise 4, so they are folded until you "
    "write your judgement below. ctrl+r looks first (recorded as looked before answering)."
)
LOOK_FIRST_QUESTION = N_(
    "Look at the engine's answer before writing your note? It is recorded as \"looked before "
    'answering" and shown in your export: {notes}.'
)
LOOKED_MARK = N_("looked before answering")
NOTHING_FOLDED = N_("Nothing is folded here: the engine's answers are shown.")
LOOK_KEY = N_("Look first")
CONFIRM_YES = N_("enter / y: yes · escape: no")
CONFIRM_TITLE = N_("Please confirm")
# F9 on an unfinished plan.
COMPLETE_QUESTION = N_("{lesson} is not finished: {counts}. Left:")
COMPLETE_MORE = N_("and {count} more")
COMPLETE_ASK = N_("Mark it complete anyway?")
MARKED_BACK = N_("Lesson marked {status} again (what your progress shows).")
# The plan view (F11).
PLAN_TITLE = N_("Study plan · {lesson} · {figure} steps done")
PLAN_HINT = N_("enter: go to the step · s: session summary · escape: close")
# What ctrl+n does next from where the learner was when F11 opened the plan: the next unfinished
# step after that place, going round (not always the first unfinished one).
PLAN_NEXT = N_("next, ctrl+n from here: {step}")
PLAN_NEXT_RATE = N_("next, ctrl+n from here: rate each objective at the start, then {step}")
PLAN_NEXT_RATE_END = N_("next, ctrl+n from here: rate each objective at the end")
PLAN_NEXT_NONE = N_("next: every step is done")
# The plan's first unfinished step, where no place says where ctrl+n goes on from.
PLAN_FIRST = N_("next: {step}")
PLAN_OBJECTIVES = N_("Objectives (your rating at the start -> at the end)")
PLAN_OBJECTIVE = N_("{number}. {text}: {start} -> {end}; trained by {done}/{total} done")
SUMMARY_TITLE = N_("This session")
SUMMARY_HINT = N_("escape: close. The summary is printed again when you quit.")
PALETTE_SUMMARY = N_("Session summary")
PALETTE_SUMMARY_HELP = N_("What this session did and what comes next")

# The command palette (ctrl+p).
PALETTE_PLACEHOLDER = N_("Search for commands…")
# A command's title with its key: the language's brackets (full-width in Chinese).
PALETTE_COMMAND = N_("{command} ({key})")
PALETTE_GO_TO = N_("Go to: {title}")
PALETTE_GO_TO_HELP = N_("Read this section")
PALETTE_OPEN_LESSON = N_("Open lesson: {lesson}")
PALETTE_LANGUAGE = N_("Interface language: {language}")
PALETTE_LANGUAGE_HELP = N_(
    "Show the keys, buttons and messages in this language (the lesson stays as written); "
    "saved for next time"
)
QUIT_UNSAVED = N_("Press ctrl+q again to quit WITHOUT saving.")

# The constants above are the msgids; reading ``strings.NAME`` goes through ``__getattr__`` below,
# which translates them in the language of the moment.
_SOURCE: dict[str, Any] = {
    name: value for name, value in globals().items() if name.isupper() and name != "N_"
}
for _name in _SOURCE:
    del globals()[_name]
del _name
msgids = SimpleNamespace(**_SOURCE)
"""The English source texts by name, untranslated (for class attributes such as BINDINGS)."""


# Texts with a count, in the plural form the language gives that count (one form in Chinese).
def lesson_files_unreadable(count: int) -> str:
    return ngettext(
        "{count} lesson file cannot be read; ctrl+p lists it with why.",
        "{count} lesson files cannot be read; ctrl+p lists them with why.",
        count,
    ).format(count=count)


def quiz_held_back(count: int) -> str:
    return ngettext(
        "{count} item waits for the next session: it is paired with an item asked just before "
        "(a misconception and its counterpart, or two drills from one formula), and would give "
        "it away.",
        "{count} items wait for the next session: each is paired with an item asked just before "
        "(a misconception and its counterpart, or two drills from one formula), and would give "
        "it away.",
        count,
    ).format(count=count)


def quiz_reviewed(rated: int, in_lesson: int, items: int) -> str:
    """How many of a lesson's ``items`` the learner reviewed: ``rated`` in the quiz and
    ``in_lesson`` self-checks answered in the lesson (key points shown) and not rated yet,
    each part named when the lesson's are some."""
    reviewed = rated + in_lesson
    if not in_lesson:
        return gettext("reviewed {reviewed}/{items}").format(reviewed=reviewed, items=items)
    return ngettext(
        "reviewed {reviewed}/{items} ({rated} rated in the quiz, {count} self-check answered "
        "in the lesson)",
        "reviewed {reviewed}/{items} ({rated} rated in the quiz, {count} self-checks answered "
        "in the lesson)",
        in_lesson,
    ).format(reviewed=reviewed, items=items, rated=rated, count=in_lesson)


def quiz_answered_today(count: int) -> str:
    return ngettext(
        "{count} self-check question you answered in the lesson today comes back tomorrow.",
        "{count} self-check questions you answered in the lesson today come back tomorrow.",
        count,
    ).format(count=count)


def plan_session(duration: str, finished: int, written: int) -> str:
    return gettext("This session: {duration}, {finished}, {written}.").format(
        duration=duration,
        finished=ngettext("{count} step finished", "{count} steps finished", finished).format(
            count=finished
        ),
        written=ngettext("{count} answer written", "{count} answers written", written).format(
            count=written
        ),
    )


def search_count(count: int) -> str:
    return ngettext("{count} match", "{count} matches", count).format(count=count)


def translated(value: Any) -> Any:
    """``value`` (a msgid, or a tuple or mapping of them) in the current language."""
    if isinstance(value, str):
        return gettext(value)
    if isinstance(value, tuple):
        return tuple(translated(item) for item in value)
    if isinstance(value, dict):
        return {key: translated(item) for key, item in value.items()}
    return value


def __getattr__(name: str) -> Any:
    try:
        return translated(_SOURCE[name])
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


# A sentence end and the full stop a message puts after the text it quotes (``内存？.``).
_DOUBLE_STOP = re.compile(r"([?!？！。])[.。]")


def single_stops(text: str) -> str:
    """``text`` without the full stop a message puts after a quoted step that ends its own
    sentence: a self-check's question (``…的内存？.`` is ``…的内存？``)."""
    return _DOUBLE_STOP.sub(r"\1", text)
