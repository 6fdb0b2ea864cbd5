"""Model presets: published architectures with their parameter counts and sources.

The presets are data, in ``model_presets.yaml`` beside this module (safe YAML loader, duplicate
keys rejected); each has the fields of :class:`engine.model_size.ModelShape`, the count its source
publishes and how many significant digits it gives. :func:`resolve_shape` merges a preset with the
fields a spec gives (given fields win) and the defaults of the norm kind's layout.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.model_size import (
    LAYOUTS,
    SHAPE_DEFAULTS,
    SHAPE_FIELDS,
    ModelShape,
    ModelSize,
    check_shape_fields,
    shape_param_count,
)

PRESETS_FILE = "model_presets.yaml"
_PRESET_KEYS = frozenset({"title", "short", "published", "digits", "source", "context", "shape"})
# The titles of model_presets.yaml that describe a model rather than name it, for the catalog:
# they are shown in the interface language (a model's own name, Llama 2 7B, is the same in both).
DESCRIBED_TITLES = (
    N_("the lesson's 1B-class GPT (GPT-3 XL shape)"),
    N_("the lesson's 1B GPT"),
)


@dataclass(frozen=True)
class ModelPreset:
    """One published model.

    Attributes:
        name: what ``--model`` takes (``llama2-7b``).
        title: the model's name as its authors write it.
        shape: the architecture.
        published: the parameter count the source gives.
        digits: significant digits the source gives (``None``: the exact count).
        source: paper, model card or ``config.json`` and where the count comes from.
        context: the longest sequence the model was built for (``None``: the learned positions).
        short: what a picker shows where :attr:`title` is long (``None``: the title).
    """

    name: str
    title: str
    shape: ModelShape
    published: float
    digits: int | None
    source: str
    context: int | None
    short: str | None = None

    @functools.cached_property
    def size(self) -> ModelSize:
        """The parameter count of :attr:`shape`."""
        return shape_param_count(self.shape)

    @property
    def shown_title(self) -> str:
        """:attr:`title` as the interface shows it: a description in the interface language,
        a model's name as its authors write it."""
        return _(self.title)

    @property
    def picker_title(self) -> str:
        """What a picker shows: :attr:`short` (else :attr:`title`), in the interface language
        where it describes the model."""
        return _(self.short or self.title)

    @property
    def max_seq(self) -> int | None:
        """The longest sequence: ``context``, else the learned positions."""
        return self.context if self.context is not None else self.shape.position_count

    def as_dict(self) -> dict[str, Any]:
        """``shardbook models --json``'s object: name, params_total, source, shape, and more."""
        return {
            "name": self.name,
            "title": self.title,
            "params_total": self.size.total,
            "published_params": self.published,
            "published_digits": self.digits,
            "source": self.source,
            "context": self.max_seq,
            "shape": self.shape.as_dict(),
        }


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key written twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _value in node.value:
                key = key_node.value
                if key != "<<" and key in seen:
                    line = key_node.start_mark.line + 1
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (line {line})", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_presets(text: str, where: str = PRESETS_FILE) -> dict[str, ModelPreset]:
    """Presets from the YAML ``text`` (the format of ``model_presets.yaml``).

    Raises:
        InputError: (field ``model``) the text is not valid YAML, a key is repeated, a preset
            lacks a required key or has an unknown one, or its shape is invalid; the message
            names ``where`` and the preset.
    """
    try:
        data = yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader
    except yaml.YAMLError as error:
        raise InputError("model", _("{where}: {error}").format(where=where, error=error)) from None
    if not isinstance(data, dict):
        raise InputError(
            "model", _("{where}: expected a mapping of preset names").format(where=where)
        )
    presets: dict[str, ModelPreset] = {}
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError(
                "model", _("{where}: {name}: expected a mapping").format(where=where, name=name)
            )
        unknown = set(entry) - _PRESET_KEYS
        missing = {"title", "published", "source", "shape"} - set(entry)
        if unknown or missing:
            problem = f"unknown key {sorted(unknown)[0]!r}" if unknown else "missing "
            problem += ", ".join(sorted(missing)) if missing and not unknown else ""
            raise InputError(
                "model",
                _("{where}: {name}: {problem}").format(where=where, name=name, problem=problem),
            )
        shape_values = entry["shape"]
        if not isinstance(shape_values, dict) or set(shape_values) - set(SHAPE_FIELDS):
            raise InputError(
                "model",
                _("{where}: {name}: shape has unknown fields").format(where=where, name=name),
            )
        try:
            resolved = _with_defaults({**dict.fromkeys(SHAPE_FIELDS), **shape_values})
            shape = ModelShape(**resolved)
        except (InputError, TypeError) as error:
            raise InputError(
                "model", _("{where}: {name}: {error}").format(where=where, name=name, error=error)
            ) from None
        presets[str(name)] = ModelPreset(
            name=str(name),
            title=str(entry["title"]),
            shape=shape,
            published=float(entry["published"]),
            digits=None if entry.get("digits") is None else int(entry["digits"]),
            source=" ".join(str(entry["source"]).split()),
            context=None if entry.get("context") is None else int(entry["context"]),
            short=None if entry.get("short") is None else str(entry["short"]),
        )
    return presets


@functools.cache
def model_presets() -> Mapping[str, ModelPreset]:
    """Every preset by name, in the file's order (read once)."""
    text = resources.files("engine").joinpath(PRESETS_FILE).read_text(encoding="utf-8")
    return parse_presets(text)


def get_preset(name: str) -> ModelPreset:
    """The preset called ``name``.

    Raises:
        InputError: unknown name (field ``model``), listing the presets.
    """
    presets = model_presets()
    if name not in presets:
        raise InputError(
            "model",
            _("unknown model {name!r}; use one of {choices}").format(
                name=name, choices=", ".join(presets)
            ),
        )
    return presets[name]


def _with_defaults(values: dict[str, Any]) -> dict[str, Any]:
    values.update(check_shape_fields(values))
    for name, default in SHAPE_DEFAULTS.items():
        if values[name] is None:
            values[name] = default
    for name, default in LAYOUTS[values["norm"]].items():
        if values[name] is None:
            values[name] = default
    return values


def resolve_shape(values: Mapping[str, Any], model: str | None) -> dict[str, Any]:
    """The shape fields of a spec: ``model``'s preset, overridden by the given (non-None) fields
    of ``values``, the rest from the defaults (module docstring of :mod:`engine.model_size`).

    Returns:
        Every :data:`~engine.model_size.SHAPE_FIELDS` key; ``layers``, ``hidden``, ``heads``,
        ``kv_heads``, ``head_dim``, ``ffn_hidden``, ``vocab``, ``position_count`` and
        ``expert_ffn_hidden`` may stay ``None``.

    Raises:
        InputError: an unknown ``model`` (field ``model``), or a field that
            :func:`~engine.model_size.check_shape_fields` refuses.
    """
    return dict(zip(SHAPE_FIELDS, resolve_shape_key(_key(values), model)[0], strict=True))


def _key(values: Mapping[str, Any]) -> tuple[tuple[type, Any], ...]:
    # The type is part of the key: True == 1 and 2.0 == 2 must not share a cached answer.
    return tuple((type(value), value) for value in map(values.get, SHAPE_FIELDS))


def resolve_shape_key(
    key: tuple[tuple[type, Any], ...], model: str | None
) -> tuple[tuple[Any, ...], ModelShape | None]:
    """:func:`resolve_shape` for the (type, value) pairs of :data:`SHAPE_FIELDS` (in order), with
    the :class:`ModelShape` they describe (``None`` without layers or hidden size). Answers are
    cached: a sweep asks the same shape thousands of times.

    Raises:
        InputError: as :func:`resolve_shape`.
    """
    try:
        return _resolved(key, model)
    except TypeError:  # an unhashable value: resolve without the cache (it is refused there)
        return _resolve(key, model)


@functools.lru_cache(maxsize=4096)
def _resolved(
    key: tuple[tuple[type, Any], ...], model: str | None
) -> tuple[tuple[Any, ...], ModelShape | None]:
    return _resolve(key, model)


def _resolve(
    key: tuple[tuple[type, Any], ...], model: str | None
) -> tuple[tuple[Any, ...], ModelShape | None]:
    merged = {name: value for name, (_type, value) in zip(SHAPE_FIELDS, key, strict=True)}
    if model is not None:
        preset = get_preset(model)
        for name, value in preset.shape.as_dict().items():
            if merged[name] is None:
                merged[name] = value
    resolved = _with_defaults(merged)
    shape = None
    if resolved["layers"] is not None and resolved["hidden"] is not None:
        shape = ModelShape(**resolved)
    return tuple(resolved[name] for name in SHAPE_FIELDS), shape
