"""``shardbook calc ledger``: the per-rank training-memory ledger, headless.

Flags and JSON keys are fixed; scripts and tests rely on them. Values are parsed by
:mod:`engine.units` (``--params 7.5B``, ``--gpu-memory 80GB``) and checked by
:func:`engine.ledger.compute_ledger`; a bad value is one line on stderr naming the flag, exit 2.
Choices are checked by the engine rather than by argparse so that a wrong choice is one line too.
No Textual import here: the headless command must start fast.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cli.main import add_choice_argument, add_recompute_argument, flag_error, option_flags
from cli.models import SHAPE_FLAGS, add_shape_flags, shape_values
from engine import units
from engine.activations import SCHEDULE_CHOICES
from engine.errors import FieldName, FieldNote, InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.ledger import (
    CONVENTION_NOTES,
    CONVENTIONS,
    DTYPE_CHOICES,
    FINETUNE_CHOICES,
    LORA_TARGETS,
    OFFLOAD_CHOICES,
    OPTIMIZER_CHOICES,
    SIZE_FIELDS,
    TERM_KEYS,
    LedgerResult,
    LedgerSpec,
    bytes_per_param_note,
    compute_ledger,
    numeric_fields_from_text,
    parse_lora_targets,
)

# Spec field -> the flag that sets it, so engine errors name what the user typed.
FLAGS = option_flags(
    "params",
    "seq",
    "micro_batch",
    "dtype",
    "optimizer",
    "fp32_grads",
    "dp",
    "tp",
    "pp",
    "cp",
    "ep",
    "zero",
    "recompute",
    "sequence_parallel",
    "schedule",
    "micro_batches",
    "virtual_stages",
    "convention",
    "largest_layer_params",
    "gpu_memory",
    "finetune",
    "lora_rank",
    "lora_targets",
    "offload",
    "gpus_per_node",
    "nodes",
    "fp32_grad_accumulation",
    master_weights="--no-master-weights",
    expert_param_share="--experts",
    zero_init="--no-zero-init",
    micro_batch_size="--micro-batch",
    zero_stage="--zero",
    num_microbatches="--micro-batches",
    **SHAPE_FLAGS,
)
_TERM_LABELS = {
    "params": N_("parameters"),
    "grads": N_("gradients"),
    "master_weights": N_("master weights"),
    "optimizer_states": N_("optimizer states"),
    "activations": N_("activations"),
    "buffers": N_("buffers"),
}


def register(calc_subparsers: Any) -> None:
    """Add ``ledger`` to the ``shardbook calc`` sub-commands."""
    parser: argparse.ArgumentParser = calc_subparsers.add_parser(
        "ledger",
        help=_("per-rank training memory: params, grads, optimizer, activations, buffers"),
        description=(
            _(
                "Per-rank training memory in bytes, in a named convention (zero-paper, megatron, "
                "deepspeed). Give --params, a --model preset, or the architecture (--layers "
                "--hidden "
                "--vocab and the shape flags; flags override the preset); add --seq and --heads to "
                "compute activations. --finetune lora|qlora freezes the model; --offload moves "
                "model "
                "states to the host."
            )
        ),
    )
    parser.add_argument("--params", help=_("parameter count N: 1e9, 7.5B, 350M"))
    add_shape_flags(parser)
    parser.add_argument("--seq", help=_("sequence length s (needed for activations)"))
    parser.add_argument(
        "--micro-batch",
        "--micro-batch-size",
        dest="micro_batch",
        default="1",
        help=_("micro-batch size b (default 1)"),
    )
    add_choice_argument(
        parser,
        "--dtype",
        default="bf16",
        choices=DTYPE_CHOICES,
        help=_("precision of the weights and gradients (default bf16)"),
    )
    add_choice_argument(
        parser,
        "--optimizer",
        default="adamw",
        choices=OPTIMIZER_CHOICES,
        help=_("optimizer (default adamw)"),
    )
    parser.add_argument(
        "--no-master-weights",
        dest="master_weights",
        action="store_false",
        help=_("no fp32 master copy of the weights"),
    )
    parser.add_argument(
        "--fp32-grads", action="store_true", help=_("keep the gradients in fp32 (2 + 4 + 12 = 18)")
    )
    parser.add_argument(
        "--fp32-grad-accumulation",
        action="store_true",
        help=_("add an fp32 gradient accumulation buffer (2 + 2 + 4 + 12 = 20)"),
    )
    for name in ("dp", "tp", "pp", "cp", "ep"):
        parser.add_argument(
            f"--{name}", default="1", help=_("{name} size (default 1)").format(name=name.upper())
        )
    add_choice_argument(
        parser,
        "--zero",
        "--zero-stage",
        dest="zero",
        default="0",
        choices=("0", "1", "2", "3"),
        help=_("ZeRO stage; 3 = FSDP"),
    )
    add_recompute_argument(parser)
    parser.add_argument("--sequence-parallel", action="store_true", help=_("Megatron SP with TP"))
    add_choice_argument(
        parser,
        "--schedule",
        default="1f1b",
        choices=SCHEDULE_CHOICES,
        help=_("pipeline schedule (default 1f1b)"),
    )
    parser.add_argument("--micro-batches", help=_("micro-batches per step m (default p)"))
    parser.add_argument("--virtual-stages", default="1", help=_("interleaved 1F1B chunks v"))
    add_choice_argument(
        parser,
        "--convention",
        default="zero-paper",
        choices=CONVENTIONS,
        help=_("whose accounting (default zero-paper)"),
    )
    parser.add_argument("--largest-layer-params", help=_("DeepSpeed ZeRO-3 largest layer"))
    parser.add_argument("--gpu-memory", help=_("device memory: 80GB, 141GB, 80GiB"))
    add_choice_argument(
        parser,
        "--finetune",
        default="full",
        choices=FINETUNE_CHOICES,
        help=_("full (default), lora (frozen model + adapters) or qlora (4-bit NF4 base)"),
    )
    # No default here: a rank given without --finetune lora|qlora is refused (spec_from_args).
    parser.add_argument("--lora-rank", help=_("LoRA rank r (default 8)"))
    parser.add_argument(
        "--lora-targets",
        help=_("comma list of {targets} (default q,v, PEFT's for Llama)").format(
            targets=",".join(LORA_TARGETS)
        ),
    )
    add_choice_argument(
        parser,
        "--offload",
        default="none",
        choices=OFFLOAD_CHOICES,
        help=_("model states on the host: optimizer (ZeRO-Offload), optimizer+params (ZeRO-3)"),
    )
    parser.add_argument(
        "--gpus-per-node", help=_("GPUs per node (default: every rank on one node)")
    )
    parser.add_argument("--nodes", help=_("nodes (default: world size / GPUs per node)"))
    parser.add_argument(
        "--no-zero-init",
        dest="zero_init",
        action="store_false",
        help=_("DeepSpeed's estimator without zero.Init: each process loads the whole model"),
    )
    parser.add_argument("--json", action="store_true", help=_("one JSON object, sizes in bytes"))
    parser.set_defaults(func=run)


def spec_from_args(args: argparse.Namespace) -> LedgerSpec:
    """Parse the flags into a :class:`LedgerSpec`.

    Raises:
        InputError: a value that does not parse, or a LoRA flag given without ``--finetune lora``
            or ``qlora`` (its field is the spec field; :func:`run` names the flag).
    """
    if args.finetune == "full":
        # Full fine-tuning has no adapters: computing it with a rank typed would let the
        # learner read full fine-tuning's figures as LoRA's. A wrong --finetune choice is left
        # to the engine, which names it.
        for name in ("lora_rank", "lora_targets"):
            if getattr(args, name) is not None:
                raise InputError(
                    name,
                    _("applies to {finetune} lora or qlora only"),
                    finetune=FieldName("finetune"),
                )
    names: tuple[str, ...] = (
        "params",
        "largest_layer_params",
        "gpu_memory",
        "zero",
        "seq",
        "micro_batches",
    )
    names += ("gpus_per_node", "nodes", *SIZE_FIELDS)
    texts = {name: getattr(args, name) for name in names}
    if texts["lora_rank"] is None:
        del texts["lora_rank"]  # not given: the spec's default rank
    for name, text in texts.items():
        # The engine reads an empty optional field as not given (an app form left blank);
        # a flag given empty (`--seq ''`, a shell variable unset) is a mistake, as for --dp.
        if text is not None and not text.strip():
            raise InputError(name, _("is empty; enter a number"))
    values = numeric_fields_from_text(texts)
    values.update(shape_values(args, units.parse_int))
    return LedgerSpec(
        dtype=args.dtype,
        optimizer=args.optimizer,
        master_weights=args.master_weights,
        fp32_grads=args.fp32_grads,
        fp32_grad_accumulation=args.fp32_grad_accumulation,
        recompute=args.recompute,
        sequence_parallel=args.sequence_parallel,
        schedule=args.schedule,
        convention=args.convention,
        finetune=args.finetune,
        lora_targets=parse_lora_targets(args.lora_targets),
        offload=args.offload,
        zero_init=args.zero_init,
        **values,
    )


def run(args: argparse.Namespace) -> int:
    """Compute and print the ledger. Returns 0; raises :class:`CliError` on bad input."""
    try:
        result = compute_ledger(spec_from_args(args))
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    if args.json:
        print(json.dumps(result.as_dict(), allow_nan=False, ensure_ascii=False))
        return 0
    _print_table(result)
    return 0


def _print_table(result: LedgerResult) -> None:
    console = Console(markup=False, highlight=False, emoji=False)
    title = _("per-rank memory, convention {convention}").format(convention=result.convention)
    table = Table(title=title, title_justify="left")
    table.add_column(_("term"))
    table.add_column("GB (1e9 B)", justify="right")
    table.add_column("GiB (2^30 B)", justify="right")
    per_rank = result.per_rank_bytes
    for key in TERM_KEYS:
        label = _(_TERM_LABELS[key])
        if key == "activations" and not result.activations_computed:
            label = _("{term} (not computed)").format(term=label)
        table.add_row(label, _gb(per_rank[key]), _gib(per_rank[key]))
    table.add_section()
    table.add_row(_("total"), _gb(per_rank["total"]), _gib(per_rank["total"]))
    table.add_row(
        _("model states"), _gb(result.model_states_bytes), _gib(result.model_states_bytes)
    )
    table.add_row(_("naive: params x precision"), _gb(result.naive_bytes), _gib(result.naive_bytes))
    console.print(table)
    count = units.format_count(result.params_total)
    exact = units.format_fixed(result.params_total, 0)
    if result.spec.model:
        parameters = _(
            "parameters N = {count} ({exact}), model {model}; world size {world}"
        ).format(count=count, exact=exact, model=result.spec.model, world=result.world_size)
    else:
        parameters = _("parameters N = {count} ({exact}); world size {world}").format(
            count=count, exact=exact, world=result.world_size
        )
    lines = [
        # The bytes used here first: the convention's note is its sources' case (Adam).
        bytes_per_param_note(result),
        _("convention {convention}: {note}").format(
            convention=result.convention, note=_(CONVENTION_NOTES[result.convention])
        ),
        parameters,
    ]
    if result.spec.finetune != "full":
        lines.append(
            _("{finetune}: trainable parameters {count} (rank {rank} on {targets})").format(
                finetune=result.spec.finetune,
                count=units.format_fixed(result.trainable_params, 0),
                rank=result.spec.lora_rank,
                targets=",".join(result.spec.lora_targets),
            )
        )
    if result.offloaded_bytes or result.spec.offload != "none":
        lines.append(
            _("host memory per node: {size} ({gib} GiB); {formula}").format(
                size=units.format_bytes(result.offloaded_bytes),
                gib=_gib(result.offloaded_bytes),
                formula=result.host["formula"],
            )
        )
    if result.per_stage_bytes:
        totals = ", ".join(
            f"{int(stage['stage']) + 1}: {_gb(stage['total'])}" for stage in result.per_stage_bytes
        )
        lines.append(
            _(
                "per stage total GB: {totals}; figures above are stage {stage}, the most loaded"
            ).format(totals=totals, stage=result.most_loaded_stage + 1)
        )
    if not result.activations_computed:
        lines.append(_("activations not computed: give --seq, --layers, --hidden and --heads"))
    if result.fits is not None:
        device = units.format_bytes(result.spec.gpu_memory or 0.0)
        verdict = (
            _("fits in {device} of device memory")
            if result.fits
            else _("does NOT fit in {device} of device memory")
        )
        lines.append(verdict.format(device=device))
    # A note naming an input names its flag here (--largest-layer-params); the JSON keeps the
    # engine's words, as every front end but this table shows them.
    lines.extend(_flags_named(note) for note in result.notes)
    lines.append(_("formulas:"))
    for term in result.terms:
        # Headed by the term's label in the table above, as the app's list of formulas is.
        formula = _("{term}: {formula}").format(
            term=_(_TERM_LABELS[term.name]), formula=_flags_named(term.formula)
        )
        lines.append(f"  {formula}  [{term.source}]")
    for line in lines:
        console.print(Text(line))


def _flags_named(text: str) -> str:
    """``text`` with the inputs it names written as their flags (see FieldNote)."""
    if isinstance(text, FieldNote):
        return text.naming(lambda key: FLAGS.get(key, key))
    return text


def _gb(value: float) -> str:
    return units.format_gb(value, 3).removesuffix(" GB")


def _gib(value: float) -> str:
    return units.format_gib(value, 3).removesuffix(" GiB")
