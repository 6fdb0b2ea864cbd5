"""``shardbook models``: the model presets with their parameter counts, and the model-shape flags
``calc ledger`` and ``calc step`` share (``--model NAME`` and the custom-shape flags).

Flag names are fixed: scripts rely on them. Values are checked by the engine
(:mod:`engine.model_size`, :mod:`engine.model_presets`), so a bad value is one line naming the
flag, exit 2. No Textual import here: the headless command must start fast.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cli.main import add_choice_argument
from engine import units
from engine.i18n import gettext as _
from engine.model_presets import model_presets
from engine.model_size import ATTENTION_KERNELS, MLP_KINDS, NORM_KINDS, POSITION_KINDS

# Shape field -> its flag, for the engine's errors (the boolean flags by what sets them).
SHAPE_FLAGS: dict[str, str] = {
    "model": "--model",
    "layers": "--layers",
    "hidden": "--hidden",
    "heads": "--heads",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "ffn_hidden": "--ffn-hidden",
    "vocab": "--vocab",
    "vocab_multiple": "--vocab-multiple",
    "mlp": "--mlp",
    "norm": "--norm",
    "bias": "--no-bias",
    "tied_embeddings": "--untied-embeddings",
    "positions": "--positions",
    "final_norm": "--final-norm",
    "dropout": "--dropout",
    "attention": "--attention",
    "experts": "--experts",
    "top_k": "--top-k",
    "shared_experts": "--shared-experts",
    "expert_ffn_hidden": "--expert-ffn-hidden",
}
# Whole-number shape flags, parsed by the calculator's own parser (their text -> int).
SHAPE_COUNTS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn_hidden",
    "vocab",
    "vocab_multiple",
    "experts",
    "top_k",
    "shared_experts",
    "expert_ffn_hidden",
)
SHAPE_CHOICES = ("mlp", "norm", "positions", "attention")
SHAPE_SWITCHES = ("bias", "tied_embeddings", "final_norm", "dropout")


def _preset_names() -> list[str]:
    """The presets' names, for shell completion only (reading them is not free)."""
    return list(model_presets())


def add_shape_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--model`` and the custom-shape flags; each defaults to ``None`` (the preset's value,
    else the engine's default)."""
    # The names are not listed in the usage: reading the presets would slow every command's
    # start; the completion script, made once, lists them.
    add_choice_argument(
        parser,
        "--model",
        choices=_preset_names,
        metavar="NAME",
        help=_("a model preset (`shardbook models` lists them)"),
    )
    parser.add_argument("--layers", help=_("transformer layers L"))
    parser.add_argument("--hidden", help=_("hidden size h"))
    parser.add_argument("--heads", help=_("attention heads a"))
    parser.add_argument("--kv-heads", help=_("key/value heads (GQA/MQA; default = heads)"))
    parser.add_argument("--head-dim", help=_("size of one head (default hidden / heads)"))
    parser.add_argument("--ffn-hidden", help=_("MLP hidden size f (default 4h)"))
    parser.add_argument("--vocab", help=_("vocabulary size V"))
    parser.add_argument("--vocab-multiple", help=_("pad V up to a multiple of this (default 1)"))
    add_choice_argument(parser, "--mlp", choices=MLP_KINDS, help=_("MLP kind"))
    add_choice_argument(
        parser,
        "--norm",
        choices=NORM_KINDS,
        help=_("norm kind; rmsnorm also means rotary positions, a final norm and no dropout"),
    )
    parser.add_argument(
        "--no-bias", dest="bias", action="store_const", const=False, help=_("no linear biases")
    )
    parser.add_argument(
        "--untied-embeddings",
        dest="tied_embeddings",
        action="store_const",
        const=False,
        help=_("a separate output layer (V·h more parameters)"),
    )
    add_choice_argument(
        parser, "--positions", choices=POSITION_KINDS, help=_("position embeddings")
    )
    parser.add_argument(
        "--final-norm",
        action=argparse.BooleanOptionalAction,
        help=_("a norm after the last layer (default: with rmsnorm)"),
    )
    parser.add_argument(
        "--dropout",
        action=argparse.BooleanOptionalAction,
        help=_("dropout masks kept for backward (default: with layernorm)"),
    )
    add_choice_argument(
        parser,
        "--attention",
        choices=ATTENTION_KERNELS,
        help=_("eager (scores stored, the default) or flash (none stored)"),
    )
    parser.add_argument("--experts", help=_("MoE routed experts per layer (default 1)"))
    parser.add_argument("--top-k", help=_("experts per token (default 1)"))
    parser.add_argument("--shared-experts", help=_("MoE shared experts per layer (default 0)"))
    parser.add_argument("--expert-ffn-hidden", help=_("one expert's MLP size (default ffn-hidden)"))


def shape_values(args: argparse.Namespace, parse_int: Callable[..., int]) -> dict[str, Any]:
    """The shape fields the flags gave (absent ones left out), whole numbers parsed with
    ``parse_int(field, text, minimum=...)``.

    Raises:
        InputError: a whole number that does not parse (named by its field).
    """
    values: dict[str, Any] = {}
    if args.model is not None:
        values["model"] = args.model
    for name in SHAPE_COUNTS:
        text = getattr(args, name)
        if text is not None:
            minimum = 0 if name == "shared_experts" else 1
            values[name] = parse_int(name, text, minimum=minimum)
    for name in (*SHAPE_CHOICES, *SHAPE_SWITCHES):
        value = getattr(args, name)
        if value is not None:
            values[name] = value
    return values


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``models`` to the ``shardbook`` commands."""
    del add_paths  # the presets are packaged with the engine: no folder to point at
    parser = commands.add_parser(
        "models",
        help=_("model presets with their parameter counts and sources"),
        description=(
            _(
                "The model presets of --model (calc ledger, calc step): each shape, the parameter "
                "count it gives and the count its source publishes."
            )
        ),
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help=_('one JSON object: {"models": [{"name", "params_total", "source", "shape"}, ...]}'),
    )
    parser.set_defaults(func=run_models)


def run_models(args: argparse.Namespace) -> int:
    """Print the presets; returns 0."""
    presets = model_presets()
    if args.json:
        models = [preset.as_dict() for preset in presets.values()]
        print(json.dumps({"models": models}, ensure_ascii=False))
        return 0
    console = Console(markup=False, highlight=False, emoji=False)
    table = Table(title=_("model presets (--model NAME)"), title_justify="left")
    table.add_column(_("name"), no_wrap=True)
    table.add_column(_("parameters"), justify="right", no_wrap=True)
    table.add_column(_("published"), justify="right", no_wrap=True)
    table.add_column(_("shape"))
    for preset in presets.values():
        shape = preset.shape
        kind = f"L{shape.layers} h{shape.hidden} a{shape.heads}"
        if shape.kv_width != shape.q_width:
            kind += f" kv{shape.kv_heads}"
        kind += f" f{shape.ffn} {shape.mlp} {shape.norm} V{shape.padded_vocab}"
        if shape.experts > 1:
            kind += f" E{shape.experts} k{shape.top_k}"
        published = (
            f"{preset.published:,.0f}"
            if preset.digits is None
            else _("{count} ({digits} digits)").format(
                count=units.format_count(preset.published), digits=preset.digits
            )
        )
        table.add_row(preset.name, f"{preset.size.total:,.0f}", published, kind)
    console.print(table)
    for preset in presets.values():
        console.print(Text(f"{preset.name}: {preset.shown_title}; {preset.source}"))
    return 0
