"""Checks of the capabilities a protocol declares in its tags (``ProtocolTags``).

Code outside a protocol reads its capabilities from the tags, never by probing
for methods; these checks hold a protocol to what its tags say:
``fixed_support_size`` (every report supports as many items), ``closed_form_mle``
(``maximum_likelihood`` maximizes the likelihood) and ``words`` (a word is
randomized as the item it encodes to).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DPDistError
from ..local import LocalProtocol
from ._inputs import population
from ._statistics import privatize_population

__all__ = [
    "check_reports_support_a_fixed_number_of_items",
    "check_maximum_likelihood_is_the_maximum",
    "check_words_are_randomized_as_their_items",
]


def check_reports_support_a_fixed_number_of_items(protocol: LocalProtocol) -> None:
    """``tags.fixed_support_size``: the support counts of every single report sum to the same number."""
    support_counts: Any = getattr(protocol, "support_counts", None)
    assert callable(support_counts), "tags.fixed_support_size is declared, but there is no support_counts()"
    counts_of: Any = support_counts  # (kept Any: callable() narrows it to a function returning object)
    reports = privatize_population(protocol, population(protocol, 200), rng=21)
    sizes = {
        float(np.sum(counts_of(protocol.aggregator().add(reports[index : index + 1], on_invalid="raise"))))
        for index in range(len(reports))
    }
    assert len(sizes) == 1, (
        f"tags.fixed_support_size is declared, but 200 reports support {sorted(sizes)[:5]} items: not one number"
    )


def check_maximum_likelihood_is_the_maximum(protocol: LocalProtocol) -> None:
    """``tags.closed_form_mle``: ``estimate(estimator="mle")`` is a distribution whose log-likelihood is
    the maximum, as certified by the iterative Bayesian update (a duality gap below 1e-9)."""
    aggregator = protocol.simulate(population(protocol, 2_000), rng=22)
    try:
        closed_form = np.asarray(protocol.estimate(aggregator, estimator="mle").frequencies, dtype=np.float64)
    except (AttributeError, NotImplementedError, DPDistError) as error:
        raise AssertionError(f"tags.closed_form_mle is declared, but estimator='mle' fails: {error}") from None
    gap = 1e-9
    iterated = np.asarray(protocol.estimate(aggregator, estimator="ibu", tolerance=gap).frequencies, dtype=np.float64)
    assert np.all(closed_form >= 0) and abs(closed_form.sum() - 1.0) < 1e-9, (
        f"estimator='mle' is not a distribution: {closed_form}"
    )
    channel = protocol.channel()
    counts = np.asarray(aggregator.statistic, dtype=np.float64)
    observed = counts > 0

    def loglikelihood(frequencies):
        with np.errstate(divide="ignore"):
            return float(counts[observed] @ np.log((frequencies @ channel)[observed]))

    best, reached = loglikelihood(iterated), loglikelihood(closed_form)
    rounding = 1e-9 * abs(best)
    assert best - gap - rounding <= reached <= best + gap + rounding, (
        f"estimator='mle' has log-likelihood {reached!r}; the maximum (IBU, certified within {gap}) is {best!r}"
    )


def check_words_are_randomized_as_their_items(protocol: LocalProtocol) -> None:
    """``tags.words``: ``privatize`` of words gives the reports of the items they encode to (same seed)."""
    codec = getattr(protocol, "codec", None)
    assert codec is not None, "tags.words is declared, but there is no codec (alphabet) to read words with"
    generator = np.random.default_rng(23)
    symbols = list(codec.alphabet)
    words = np.array(["".join(generator.choice(symbols, size=generator.integers(1, codec.max_chars + 1)))
                      for _ in range(50)])
    items = codec.encode(words)
    from_words = privatize_population(protocol, words, rng=24)
    from_items = privatize_population(protocol, items, rng=24)
    assert np.array_equal(from_words, from_items), "privatize(words) differs from privatize(the items they encode to)"
