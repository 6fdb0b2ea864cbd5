"""The Ledger pane: per-rank training memory from ``engine.ledger``, in GB and GiB.

The form's text becomes a :class:`engine.ledger.LedgerSpec`; ``compute_ledger`` does every
sum. The pane draws the result: one row per term, a stacked bar, the naive "parameters x
precision" figure beside it, whether it fits, and each term's formula and source. ctrl+g
loads exercise 1's 1B-parameter example; ctrl+t shows the three conventions side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input, Select, Static

from engine import units
from engine.exercises import LEDGER_FIGURES, LEDGER_FORM_DEFAULTS
from engine.i18n import N_, gettext
from engine.ledger import (
    ACTIVATION_INPUTS,
    CONVENTION_LABELS,
    CONVENTION_NOTES,
    CONVENTIONS,
    FINETUNE_CHOICES,
    INPUT_NAMES,
    OFFLOAD_CHOICES,
    OPTIONAL_COUNT_FIELDS,
    PRECISION_PRESETS,
    SIZE_FIELDS,
    LedgerResult,
    LedgerSpec,
    bytes_per_param_note,
    compare_conventions,
    compute_ledger,
    convention_label,
    exercise1_columns,
    numeric_fields_from_text,
    parse_lora_targets,
)
from engine.model_presets import get_preset, model_presets
from engine.model_size import ATTENTION_KERNELS, MLP_KINDS, NORM_KINDS
from tui import strings
from tui.commands import labelled
from tui.widgets.calculator import CalculatorPane, Field, FieldChecks, Outcome, is_stale
from tui.widgets.fit import Column, FigureTable
from tui.widgets.reader import BrokenLines

CUSTOM = "custom"


def _field(name: str, label: str, **options: Any) -> Field:
    """A Ledger field whose default is the engine's (:data:`LEDGER_FORM_DEFAULTS`)."""
    return Field(name, label, LEDGER_FORM_DEFAULTS[name], **options)


_YES_NO = ((N_("no"), "no"), (N_("yes"), "yes"))
_TERM_LABELS = {
    "params": (N_("params"), "P"),
    "grads": (N_("grads"), "G"),
    "master_weights": (N_("master wts"), "M"),
    "optimizer_states": (N_("optimizer"), "O"),
    "activations": (N_("activations"), "A"),
    "buffers": (N_("buffers"), "B"),
}
_TERM_STYLES = {
    "params": "bold blue",
    "grads": "bold magenta",
    "master_weights": "bold yellow",
    "optimizer_states": "bold red",
    "activations": "bold green",
    "buffers": "bold cyan",
}
# Exercise 1 (lesson S15): a hypothetical 1B-parameter model, mixed-precision Adam, one rank.
EXAMPLE_1B = {
    "model": CUSTOM,
    "finetune": "full",
    "offload": "none",
    "params": "1B",
    "preset": "mixed-adam",
    "weight_bytes": "2",
    "grad_bytes": "2",
    "optimizer_bytes": "12",
    "dp": "1",
    "zero": "0",
    "convention": "zero-paper",
}
BAR_WIDTH = 28
_SHAPE_INPUTS = ", ".join(
    f"#field-{name}"
    for name in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "top_k")
)
_SHAPE_SELECTS = ", ".join(f"#field-{name}" for name in ("mlp", "norm", "bias", "tied_embeddings"))


# The shape fields a model preset fills (field -> the preset shape's attribute, as form text).
MODEL_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "mlp",
    "norm",
    "bias",
    "tied_embeddings",
    "experts",
    "top_k",
)


def model_form_values(name: str) -> dict[str, str]:
    """The form's text for preset ``name``: its shape, and ``params`` emptied (N from the shape).

    Raises:
        InputError: unknown preset (field ``model``).
    """
    shape = get_preset(name).shape.as_dict()
    values = {"model": name, "params": ""}
    for field in MODEL_FIELDS:
        value = shape[field]
        if isinstance(value, bool):
            values[field] = "yes" if value else "no"
        else:
            values[field] = "" if value is None else str(value)
    # The padded vocabulary is what the preset counts; the form has no padding field.
    values["vocab"] = str(get_preset(name).shape.padded_vocab)
    return values


def spec_from_form(values: dict[str, str]) -> LedgerSpec:
    """The pane's form (field name -> text as typed) as a LedgerSpec.

    Raises:
        InputError: naming the form field; :class:`~tui.widgets.calculator.FormErrors` naming
            each one when several are refused (every field is parsed on its own).
    """
    checks = FieldChecks()
    preset_key = values.get("preset", CUSTOM)
    preset_fields: dict[str, Any] = {}
    if preset_key in PRECISION_PRESETS:
        preset_fields = dict(PRECISION_PRESETS[preset_key].fields)
    numeric: tuple[str, ...] = (
        "params",
        "largest_layer_params",
        "gpu_memory",
        "zero",
        "shared_experts",
    )
    numeric += OPTIONAL_COUNT_FIELDS + SIZE_FIELDS
    model = values.get("model", CUSTOM)
    numbers: dict[str, Any] = {}
    nothing: dict[str, Any] = {}
    for name in numeric:
        if name in values:
            numbers.update(
                checks.parse(partial(numeric_fields_from_text, {name: values[name]}), nothing)
            )
    no_targets: tuple[str, ...] = ()
    lora_targets = checks.parse(partial(parse_lora_targets, values["lora_targets"]), no_targets)
    spec_fields: dict[str, Any] = {
        **numbers,
        "convention": values["convention"],
        "recompute": values["recompute"],
        "sequence_parallel": values["sequence_parallel"] == "yes",
        "schedule": values["schedule"],
        "model": None if model == CUSTOM else model,
        "mlp": values["mlp"],
        "norm": values["norm"],
        "bias": values["bias"] == "yes",
        "tied_embeddings": values["tied_embeddings"] == "yes",
        "attention": values["attention"],
        "finetune": values["finetune"],
        "lora_targets": lora_targets,
        "offload": values["offload"],
        **preset_fields,
    }
    # A preset sets dtype, optimizer and master weights, so every convention (and the CLI) shows
    # the same breakdown; typed bytes per parameter (custom) are the ZeRO paper's 2/2/K form.
    if values["convention"] == "zero-paper" and preset_key not in PRECISION_PRESETS:
        for name in ("weight_bytes", "grad_bytes", "optimizer_bytes"):
            parse = partial(
                units.parse_number, name, values[name], allow_zero=name != "weight_bytes"
            )
            spec_fields[name] = checks.parse(parse, 1.0)
    checks.check()
    return LedgerSpec(**spec_fields)


def bar_cells(parts: Sequence[float], width: int) -> list[int]:
    """The cells of a bar ``width`` cells long that each of ``parts`` (non-negative) takes, in
    proportion, by the largest-remainder (Hamilton) method: each part its quota's whole cells,
    the cells left to the largest remainders (the first of equal ones), so the parts fill
    exactly ``width`` cells (rounding each part alone drew 29 or 27 cells for 28). A positive
    part too small for a cell gets one, from the part with the most cells over its quota."""
    total = sum(parts)
    if total <= 0:
        return [0] * len(parts)
    quotas = [width * part / total for part in parts]
    cells = [math.floor(quota) for quota in quotas]
    by_remainder = sorted(range(len(parts)), key=lambda i: quotas[i] - cells[i], reverse=True)
    for index in by_remainder[: width - sum(cells)]:
        cells[index] += 1
    for index, part in enumerate(parts):
        if part > 0 and cells[index] == 0:
            donors = [i for i in range(len(parts)) if cells[i] > 1]
            if donors:
                cells[max(donors, key=lambda i: cells[i] - quotas[i])] -= 1
                cells[index] = 1
    return cells


def _bar(result: LedgerResult) -> Text:
    total = result.per_rank_bytes["total"]
    bar = Text()
    if total <= 0:
        return bar
    cells = bar_cells([result.per_rank_bytes[key] for key in _TERM_LABELS], BAR_WIDTH)
    for (key, (_label, letter)), count in zip(_TERM_LABELS.items(), cells, strict=True):
        bar.append(letter * count, style=_TERM_STYLES[key])
    naive_cells = max(1, round(BAR_WIDTH * min(result.naive_bytes / total, 1.0)))
    rank, naive = gettext("rank"), gettext("naive")
    width = max(cell_len(rank), cell_len(naive)) + 1
    return Text.assemble(
        set_cell_size(rank, width),
        bar,
        "\n",
        set_cell_size(naive, width),
        Text("N" * naive_cells, style="bold white"),
        "  ",
        gettext("(N = params × precision)"),
    )


def activation_inputs(name_of: Callable[[str], str]) -> str:
    """The inputs the activations term needs, as ``name_of`` names them (the form's labels),
    in a list."""
    return strings.LIST_SEPARATOR.join(name_of(key) for key in ACTIVATION_INPUTS)


def ledger_renderable(result: LedgerResult, name_of: Callable[[str], str]) -> RenderableType:
    """The ledger result as a table in GB (1e9) and GiB (2^30), a bar, and what it assumed;
    ``name_of`` names a field (by its label on the form)."""
    table = FigureTable(
        # As wide as its longest label in the interface language: a fixed width cut the English
        # "naive N × precision" (the table stacks its rows where the pane is too narrow).
        Column(gettext("per rank")),
        Column("GB", justify="right", min_width=6),
        Column("GiB", justify="right", min_width=6),
        gap=1,
    )
    per_rank = result.per_rank_bytes
    shown = [*(per_rank[key] for key in _TERM_LABELS), per_rank["total"], result.naive_bytes]
    # One rule per column: every cell with the decimals its smallest figure needs.
    gb_digits = units.column_digits(value / units.GB for value in shown)
    gib_digits = units.column_digits(value / units.GIB for value in shown)

    def cells(value: float, style: str = "") -> tuple[Text, Text]:
        return (
            Text(units.format_fixed(value / units.GB, gb_digits), style=style),
            Text(units.format_fixed(value / units.GIB, gib_digits), style=style),
        )

    for key, (label, letter) in _TERM_LABELS.items():
        table.add_row(
            Text(f"{letter} {gettext(label)}", style=_TERM_STYLES[key]), *cells(per_rank[key])
        )
    table.add_row(Text(gettext("total"), style="bold"), *cells(per_rank["total"], "bold"))
    table.add_row(gettext("naive N × precision"), *cells(result.naive_bytes))
    model = f" ({get_preset(result.spec.model).shown_title})" if result.spec.model else ""
    lines = [
        gettext("N = {params} params{model}; world size {world_size}").format(
            params=units.format_count(result.params_total),
            model=model,
            world_size=result.world_size,
        ),
        gettext("convention: {convention}").format(convention=convention_label(result.convention)),
        bytes_per_param_note(result),
    ]
    if result.spec.finetune != "full":
        lines.append(
            gettext("{finetune}: {trainable} trainable params (r {rank} on {targets})").format(
                finetune=result.spec.finetune,
                trainable=units.format_fixed(result.trainable_params, 0),
                rank=result.spec.lora_rank,
                targets=",".join(result.spec.lora_targets),
            )
        )
    if result.offloaded_bytes:
        lines.append(
            gettext("host per node: {gb} ({gib}), offload {offload}").format(
                gb=units.format_gb(result.offloaded_bytes),
                gib=units.format_gib(result.offloaded_bytes),
                offload=result.spec.offload,
            )
        )
    if result.per_stage_bytes:
        lines.append(
            gettext("pipeline stage {stage} of {stages}, the most loaded").format(
                stage=result.most_loaded_stage + 1, stages=result.spec.pp
            )
        )
    if result.fits is not None and result.spec.gpu_memory is not None:
        verdict = (
            gettext("fits in {memory}") if result.fits else gettext("DOES NOT FIT in {memory}")
        )
        lines.append(verdict.format(memory=units.format_bytes(result.spec.gpu_memory)))
    if not result.activations_computed:
        lines.append(
            gettext("activations not computed: enter {fields} (▸ below)").format(
                fields=activation_inputs(name_of)
            )
        )
    lines.extend(result.notes)
    # Broken by the lesson's rules at the pane's width, each note on lines of its own.
    notes = (BrokenLines(line, indent="", style="dim") for line in lines)
    return Group(table, _bar(result), *notes)


def sources_renderable(result: LedgerResult, name_of: Callable[[str], str]) -> RenderableType:
    """Each term's formula with the figures put in, and its source; ``name_of`` names a field
    (by its label on the form)."""
    sources: list[RenderableType] = [
        Text("\n" + gettext("how each term is computed"), style="bold")
    ]
    for term in result.terms:
        formula = term.formula
        if term.name == "activations" and not result.activations_computed:
            # The engine's reason names its spec fields; the form's labels are what to fill.
            formula = gettext("not computed: enter {fields}").format(
                fields=activation_inputs(name_of)
            )
        line = gettext("{term}: {formula}").format(
            term=gettext(_TERM_LABELS[term.name][0]), formula=formula
        )
        # The fields to fill, by their labels: broken by the lesson's rules, each label whole.
        missing = term.name == "activations" and not result.activations_computed
        sources.append(BrokenLines(line, indent="") if missing else Text(line))
        # Indented under its term, its continuation lines further in (the lesson's rules).
        source = gettext("source: {source}").format(source=term.source)
        sources.append(BrokenLines(source, first="  ", indent="    ", style="dim"))
    return Group(*sources)


def comparison_renderable(results: dict[str, LedgerResult]) -> RenderableType:
    """The same configuration under every convention, side by side, with each one's note."""
    table = FigureTable(
        Column(gettext("term")),
        *(Column(convention_label(name), justify="right") for name in results),
        title=gettext("GB (1e9) per rank"),
    )
    keys = (*_TERM_LABELS, "total")
    # One rule for every cell (a row compares the conventions): the decimals the smallest
    # figure needs, so 4.2 MB is 0.0042 beside 0.0126, not 0.004194 beside 0.01.
    digits = units.column_digits(
        r.per_rank_bytes[key] / units.GB for r in results.values() for key in keys
    )
    for key in keys:
        label = gettext(_TERM_LABELS[key][0] if key in _TERM_LABELS else "total")
        table.add_row(
            label,
            *(
                units.format_fixed(r.per_rank_bytes[key] / units.GB, digits)
                for r in results.values()
            ),
        )
    # Each convention's reference case (Adam), then the bytes this configuration uses in it.
    notes = [
        Text(
            labelled(
                convention_label(name),
                gettext("{used}; {note}").format(
                    used=bytes_per_param_note(result),
                    note=gettext(CONVENTION_NOTES[name]),
                ),
            ),
            style="dim",
        )
        for name, result in results.items()
    ]
    return Group(table, *notes)


class LedgerPane(CalculatorPane):
    """Exercise 1's ledger: where training memory goes on each rank."""

    form_name = "ledger"
    STUDY_PANE = "ledger"
    figure_name = LEDGER_FIGURES
    HELP = N_(
        "The memory ledger (exercise 1). Type a parameter count (1e9, 1B, 7.5B), pick a "
        "precision preset or type bytes per parameter for weights, gradients and optimizer "
        "states (K, fp32 master weights included, as the ZeRO paper counts), the data-parallel "
        "size P and the ZeRO stage. Below the result, 'model, seq, TP/PP/CP/EP' opens the rest: "
        "a model (Llama 2/3, Mixtral, GPT-3: it fills the shape, which you can change), seq "
        "for activations (Korthikanti et al. 2022, Table 2; flash attention stores no scores), "
        "LoRA/QLoRA fine-tuning, offload to the host and the parallel sizes. "
        "Figures are per rank, in GB (1e9 bytes) and GiB (2^30 bytes). ctrl+g loads "
        "exercise 1's 1B example; ctrl+t compares the ZeRO paper's "
        "(16 B/param), Megatron-LM's (18) and DeepSpeed's conventions. Your exercise-1 figures are "
        "saved with your progress and exported."
    )
    BINDINGS: ClassVar = [
        Binding("ctrl+g", "example", N_("1B example"), id="ledger_example"),
        Binding("ctrl+t", "compare", N_("Compare"), id="ledger_compare"),
    ]

    def label_of(self, name: str) -> str:
        # The engine names its spec fields (zero_stage); the form keeps its stored keys (zero).
        return super().label_of(INPUT_NAMES.get(name, name))

    FIELDS = (
        _field("params", N_("params N"), tooltip=N_("parameter count: 1e9, 1B, 7.5B, 350M")),
        _field(
            "preset",
            N_("precision"),
            options=(
                *((preset.short_label, key) for key, preset in PRECISION_PRESETS.items()),
                (N_("custom bytes/param"), CUSTOM),
            ),
        ),
        _field("weight_bytes", N_("weights B/par")),
        _field("grad_bytes", N_("grads B/par")),
        _field(
            "optimizer_bytes", N_("optim K B/par"), tooltip=N_("ZeRO paper K: master + moments")
        ),
        _field("dp", N_("DP size P")),
        _field("zero", N_("ZeRO stage"), options=tuple((f"{s}", f"{s}") for s in "0123")),
        _field(
            "convention",
            N_("convention"),
            options=tuple((CONVENTION_LABELS[c], c) for c in CONVENTIONS),
        ),
        _field("gpu_memory", N_("GPU memory"), tooltip=N_("80GB, 141GB, 80GiB")),
    )
    MORE_TITLE = strings.msgids.LEDGER_MORE
    MORE_BUTTON = strings.msgids.LEDGER_MORE_BUTTON
    MORE_FIELDS = (
        _field("seq", N_("seq len s"), tooltip=N_("leave empty to skip activations")),
        _field(
            "model",
            N_("model"),
            options=(
                (N_("custom shape"), CUSTOM),
                *((preset.short or preset.title, name) for name, preset in model_presets().items()),
            ),
        ),
        _field("layers", N_("layers L")),
        _field("hidden", N_("hidden h")),
        _field("heads", N_("heads a")),
        _field("kv_heads", N_("KV heads"), tooltip=N_("GQA/MQA; default = heads")),
        _field("ffn_hidden", N_("FFN hidden"), tooltip=N_("default 4h")),
        _field("vocab", N_("vocab V")),
        _field("mlp", "MLP", options=tuple((kind, kind) for kind in MLP_KINDS)),
        _field("norm", N_("norm"), options=tuple((kind, kind) for kind in NORM_KINDS)),
        _field("bias", N_("linear bias"), options=_YES_NO[::-1]),
        _field("tied_embeddings", N_("tied embed."), options=_YES_NO[::-1]),
        _field(
            "attention",
            N_("attention"),
            options=tuple((kind, kind) for kind in ATTENTION_KERNELS),
        ),
        _field("micro_batch", N_("micro-batch b")),
        _field(
            "recompute",
            N_("recompute"),
            options=((N_("none"), "none"), ("selective", "selective"), ("full", "full")),
        ),
        _field("sequence_parallel", N_("seq parallel"), options=_YES_NO),
        _field("finetune", N_("fine-tune"), options=tuple((m, m) for m in FINETUNE_CHOICES)),
        _field("lora_rank", N_("LoRA rank r")),
        _field(
            "lora_targets", N_("LoRA targets"), tooltip=N_("comma list of q,k,v,o,gate,up,down")
        ),
        _field("offload", N_("offload"), options=tuple((m, m) for m in OFFLOAD_CHOICES)),
        _field("tp", N_("TP size")),
        _field("pp", N_("PP size")),
        _field("cp", N_("CP size")),
        _field("ep", N_("EP size")),
        _field("experts", N_("experts")),
        _field("top_k", N_("top-k"), tooltip=N_("experts per token")),
        _field("schedule", N_("PP schedule"), options=(("1f1b", "1f1b"), ("gpipe", "gpipe"))),
        _field("micro_batches", N_("micro-batches"), tooltip=N_("m; default p for 1F1B")),
        _field("virtual_stages", N_("virtual st. v")),
        _field("largest_layer_params", N_("largest layer"), tooltip=N_("deepspeed ZeRO-3 term")),
    )

    def __init__(self) -> None:
        super().__init__()
        self.comparing = False
        self.result: LedgerResult | None = None
        # The form as it was when ctrl+g asked to confirm (see action_example).
        self._example_asked: dict[str, str] | None = None

    def compose_header(self) -> ComposeResult:
        yield Static(strings.LEDGER_TITLE, classes="section-title")

    def compute(self, values: dict[str, str]) -> Outcome:
        spec = spec_from_form(values)
        result = compute_ledger(spec)
        self.result = result
        if self.comparing:
            renderable = comparison_renderable(compare_conventions(replace(spec)))
            return Outcome(renderable, exercise1_columns(result))
        return Outcome(
            ledger_renderable(result, self.field_named),
            exercise1_columns(result),
            sources_renderable(result, self.field_named),
        )

    @on(Select.Changed, "#field-preset")
    def _preset_changed(self, event: Select.Changed) -> None:
        preset = PRECISION_PRESETS.get(str(event.value))
        # A Select posts Changed when it mounts too: only a new choice fills the bytes fields,
        # never one the restored form has already replaced (the bytes typed would be lost).
        if (
            preset is None
            or is_stale(event)
            or self._last_values.get("preset", str(event.value)) == event.value
        ):
            return
        self._fill(
            {
                "weight_bytes": f"{preset.weight_bytes:g}",
                "grad_bytes": f"{preset.grad_bytes:g}",
                "optimizer_bytes": f"{preset.optimizer_bytes:g}",
            }
        )

    @on(Input.Changed, "#field-weight_bytes, #field-grad_bytes, #field-optimizer_bytes")
    def _bytes_changed(self, event: Input.Changed) -> None:
        values = self.values()
        preset = PRECISION_PRESETS.get(values["preset"])
        typed = (values["weight_bytes"], values["grad_bytes"], values["optimizer_bytes"])
        if preset is not None and typed != (
            f"{preset.weight_bytes:g}",
            f"{preset.grad_bytes:g}",
            f"{preset.optimizer_bytes:g}",
        ):
            self._fill({"preset": CUSTOM})

    @on(Select.Changed, "#field-model")
    def _model_changed(self, event: Select.Changed) -> None:
        name = str(event.value)
        # A Select posts Changed when it mounts too: only a new choice fills the shape fields.
        if name == CUSTOM or is_stale(event) or self._last_values.get("model", name) == name:
            return
        self._fill(model_form_values(name))
        self.notify(strings.LEDGER_MODEL_LOADED.format(model=name))

    @on(Input.Changed, _SHAPE_INPUTS)
    @on(Select.Changed, _SHAPE_SELECTS)
    def _shape_changed(self, event: Input.Changed | Select.Changed) -> None:
        # A shape edited away from the preset's is a custom shape: the preset's name (and its
        # published count) no longer describes it.
        values = self.values()
        name = values.get("model", CUSTOM)
        if name == CUSTOM:
            return
        preset = model_form_values(name)
        if any(values[field] != preset[field] for field in MODEL_FIELDS):
            self._fill({"model": CUSTOM})

    def _fill(self, values: dict[str, str]) -> None:
        current = self.values()
        current.update(values)
        self.set_values(current, by_learner=True)

    def action_example(self) -> None:
        """Exercise 1: a hypothetical 1B-parameter model with mixed-precision Adam.

        When it would replace what the learner typed, the first ctrl+g only asks: a stray key
        (or a paste whose escape sequence Textual reads as keys) must not overwrite the form.
        """
        values = self.values()
        defaults = self.defaults()
        replaces = any(values[name] != defaults[name] for name in EXAMPLE_1B)
        if replaces and self._example_asked != values:
            self._example_asked = values
            self.say(strings.LEDGER_EXAMPLE_CONFIRM, warning=True)
            return
        self._example_asked = None
        self._fill(EXAMPLE_1B)
        # What exercise 1 records now: the figures on screen (the last good ones under a
        # refused field) with their activations or without.
        if self.result is not None and self.result.activations_computed:
            self.say(strings.LEDGER_EXAMPLE_LOADED_DONE)
        else:
            self.say(
                strings.LEDGER_EXAMPLE_LOADED.format(fields=activation_inputs(self.field_named))
            )

    def action_compare(self) -> None:
        self.comparing = not self.comparing
        self.recompute()

    def study_left(self, note_id: str) -> tuple[str, ...]:
        """The inputs of exercise 1 still empty on the form once the learner has begun them:
        those of :data:`ACTIVATION_INPUTS` (by field name), which its fourth column,
        activations, needs, while at least one of them is given. While one is left, ctrl+n
        stays at exercise 1 (:meth:`study_target`: the first of them) instead of going on;
        with none given, the learner has not begun, and ctrl+n passes the exercise by."""
        values = self.values()
        left = tuple(name for name in ACTIVATION_INPUTS if not values[name].strip())
        return left if len(left) < len(ACTIVATION_INPUTS) else ()

    def study_say(self, note_id: str) -> str | None:
        """What ctrl+n says is left of exercise 1 while it is begun (:meth:`study_left`, naming
        those inputs); None otherwise (the step's own words say it all)."""
        left = self.study_left(note_id)
        if not left:
            return None
        fields = strings.LIST_SEPARATOR.join(self.field_named(name) for name in left)
        shape = any(name != "seq" for name in left)
        text = strings.LEDGER_SHAPE_LEFT if shape else strings.LEDGER_ACTIVATIONS_LEFT
        return text.format(fields=fields)

    async def study_target(self, note_id: str) -> Widget | None:
        """Where exercise 1 is worked (ctrl+n). Its fourth column, activations, needs every
        one of :data:`ACTIVATION_INPUTS`: while one is empty, the first empty one (the
        less-used fields opened for it); else the first field."""
        values = self.values()
        empty = next((name for name in ACTIVATION_INPUTS if not values[name].strip()), None)
        if empty is None:
            return await super().study_target(note_id)
        if not self.more_open:
            await self.open_more()
        found = self.query(f"#field-{empty}")
        return found.first() if found else await super().study_target(note_id)
