"""Matching items: a strategy, to be matched with what it splits and the collectives it runs.

One item per strategy of :data:`engine.strategies.STRATEGIES` (``matching:<strategy>``); four
choices, the wrong ones keep one half of the right pair, so both halves are tested. A wrong option
is wrong by the strategy data: its split names something the strategy does not divide
(:attr:`~engine.strategies.Strategy.shards`), or its collectives differ from the strategy's even
after writing each all-reduce as a reduce-scatter plus an all-gather
(:func:`~engine.strategies.collective_signature`). An option that is right by that test is never
offered as a wrong one, and graded right if a replayed asking holds one.
"""

from __future__ import annotations

import random

from engine import sources
from engine.errors import InputError
from engine.i18n import gettext as _
from engine.quiz.model import Params, Question, QuizItem
from engine.strategies import (
    SHARDS,
    STRATEGIES,
    Strategy,
    collective_signature,
    covered_shards,
)


def shards_summary(strategy: Strategy) -> str:
    """What ``strategy`` divides among its ranks, in the quiz's words (:data:`SHARDS`), joined
    with ' + '."""
    return " + ".join(_(SHARDS[shard]) for shard in strategy.shards)


def collectives_summary(strategy: Strategy) -> str:
    """The collectives ``strategy`` runs, in order of first use, joined with ' + '."""
    return " + ".join(strategy.collective_names())


def split_is_wrong(option: Strategy, strategy: Strategy) -> bool:
    """Whether "``strategy`` splits what ``option`` splits" is false by the strategy data: the
    option names something ``strategy`` does not divide. Naming only part of what it divides
    (DP's "the batch" for ZeRO-1) is incomplete but true, so not wrong."""
    return not set(option.shards) <= covered_shards(strategy)


def collectives_are_wrong(option: Strategy, strategy: Strategy) -> bool:
    """Whether "``strategy`` runs ``option``'s collectives" is false by the strategy data: they
    differ even with every all-reduce written as a reduce-scatter plus an all-gather
    (:func:`~engine.strategies.collective_signature`). So DP's "all-reduce" and ZeRO's
    "reduce-scatter + all-gather" are each right for the other."""
    return collective_signature(option.collective_names()) != collective_signature(
        strategy.collective_names()
    )


def matching_params(strategy_name: str, rng: random.Random) -> Params:
    """Four (split-of, collectives-of) strategy pairs, the right one among them, shuffled.

    The wrong options keep the right split with other collectives, the right collectives with
    another split, and neither, so each half of the pair is tested. Every other half comes from a
    strategy for which it is wrong (:func:`split_is_wrong`, :func:`collectives_are_wrong`), so no
    option but the right one is defensible."""
    right = STRATEGIES[strategy_name]
    others = [s for s in STRATEGIES.values() if s.name != strategy_name]
    wrong_split = [s for s in others if split_is_wrong(s, right)]
    wrong_coll = [s for s in others if collectives_are_wrong(s, right)]
    a = rng.choice(wrong_coll)
    b = rng.choice(wrong_split)
    c_split = rng.choice(
        [s for s in wrong_split if shards_summary(s) != shards_summary(b)] or wrong_split
    )
    c_coll = rng.choice(
        [
            s
            for s in wrong_coll
            if collective_signature(s.collective_names())
            != collective_signature(a.collective_names())
        ]
        or wrong_coll
    )
    pairs = [
        [right.name, right.name],
        [right.name, a.name],
        [b.name, right.name],
        [c_split.name, c_coll.name],
    ]
    rng.shuffle(pairs)
    return {"strategy": strategy_name, "options": pairs}


def make_matching(item: QuizItem, params: Params) -> Question:
    """The matching ``item`` asked with ``params`` (from the session's RNG or the log).

    The expected option is the one that states exactly what the strategy divides and runs. An
    option that is right by the strategy data too (:func:`split_is_wrong` and
    :func:`collectives_are_wrong` both false) is graded right as well: new askings never hold
    one, but a replayed asking from an older version may.

    Raises:
        InputError: field ``params`` when they do not name known strategies or hold no right
            option.
    """
    try:
        right = STRATEGIES[item.ref]
        pairs = [(STRATEGIES[str(s)], STRATEGIES[str(c)]) for s, c in params["options"]]
    except (KeyError, TypeError, ValueError):
        raise InputError("params", _("matching options name unknown strategies")) from None
    options = tuple(
        _("splits {shards} | runs {collectives}").format(
            shards=shards_summary(s), collectives=collectives_summary(c)
        )
        for s, c in pairs
    )
    accepted = tuple(
        index
        for index, (s, c) in enumerate(pairs)
        if not split_is_wrong(s, right) and not collectives_are_wrong(c, right)
    )
    exact = [
        index
        for index in accepted
        if set(pairs[index][0].shards) == set(right.shards)
        and collectives_summary(pairs[index][1]) == collectives_summary(right)
    ]
    if not accepted:
        raise InputError("params", _("no option of {item} is right").format(item=item.id))
    expected = (exact or list(accepted))[0]
    # The lesson's Chinese name beside the English title; a translated title already holds it.
    title = _(right.title)
    name = f"{title} ({right.name_zh})" if title == right.title else title
    prompt = _(
        "{strategy}: what does it split, and which collectives does it run? Choose a-d."
    ).format(strategy=name)
    uses = "\n".join(
        _("- {collective} ({phase}): {payload}; {volume}").format(
            collective=use.collective,
            phase=_(use.phase),
            payload=_(use.payload),
            volume=_(use.volume),
        )
        for use in right.collectives
    )
    solution = _("Splits: {split}\nCollectives:\n{uses}\nHolds: {holds}").format(
        split=_(right.split), uses=uses, holds=_(right.holds)
    )
    if {"all-reduce", "reduce-scatter", "all-gather"} & set(right.collective_names()):
        solution += "\n" + _(
            "An all-reduce is a reduce-scatter followed by an all-gather, so either form is "
            "right where one is; no option here differs from the answer only by that."
        )
    cited = tuple(dict.fromkeys(use.source for use in right.collectives))
    if {"all-reduce", "reduce-scatter", "all-gather"} & set(right.collective_names()):
        cited += sources.ALL_REDUCE_DECOMPOSITION
    return Question(
        item, prompt, "choice", dict(params), expected, options=options,
        solution=solution, sources=cited, accepted=accepted,
    )  # fmt: skip
