"""The checks of declared capabilities must fail on a protocol that declares what it does not do.

Code outside a protocol reads ``tags.fixed_support_size``, ``tags.closed_form_mle`` and
``tags.words`` instead of probing for methods; a protocol that declares one wrongly is caught
by the kit (:mod:`dpdist.testing._declared`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpdist import local, testing
from dpdist.local.frequency.grr import GRR
from dpdist.local.frequency.oue import OUE
from dpdist.local.frequency.pem import PEM


class OUEClaimsAFixedSupport(OUE):
    """OUE's reports support a binomial number of items, not a fixed one."""

    tags = dataclasses.replace(OUE.tags, fixed_support_size=True)


class GRRWithAWrongMaximum(GRR):
    """Its closed-form 'maximum likelihood' is the clipped unbiased estimate, not the maximum."""

    def maximum_likelihood(self, counts):
        estimate = np.clip((counts / counts.sum() - self._q) / (self._p - self._q), 0.0, None)
        estimate[0] += 0.05
        return estimate / estimate.sum()


class OUEClaimsAMaximumLikelihood(OUE):
    tags = dataclasses.replace(OUE.tags, closed_form_mle=True)


class PEMReadsWordsBackwards(PEM):
    """Declares words but randomizes each word as the item of the word reversed."""

    def _check_values(self, values):
        array = np.asarray(values)
        if array.dtype.kind == "U":
            array = np.array([word[::-1] for word in array.tolist()])
        return super()._check_values(array)


class PEMClaimsWordsWithoutAnAlphabet(PEM):
    tags = dataclasses.replace(PEM.tags, words=True)


WORDS = {"epsilon": 2.0, "alphabet": "abc", "max_chars": 3, "k": 1, "step": 2, "hash_count": 3}


@pytest.mark.parametrize(
    "protocol, check, message",
    [
        (OUEClaimsAFixedSupport(epsilon=1.0, domain_size=5), testing.check_reports_support_a_fixed_number_of_items,
         "not one number"),
        (GRRWithAWrongMaximum(epsilon=1.0, domain_size=5), testing.check_maximum_likelihood_is_the_maximum,
         "log-likelihood"),
        (OUEClaimsAMaximumLikelihood(epsilon=1.0, domain_size=5), testing.check_maximum_likelihood_is_the_maximum,
         "estimator='mle' fails"),
        (PEMReadsWordsBackwards(**WORDS), testing.check_words_are_randomized_as_their_items, "differs"),
        (PEMClaimsWordsWithoutAnAlphabet(epsilon=1.0, bits=4, k=2, step=1, hash_count=4),
         testing.check_words_are_randomized_as_their_items, "no codec"),
    ],
    ids=lambda value: getattr(value, "__name__", None) or type(value).__name__,
)
def test_a_wrong_declaration_fails_its_check(protocol, check, message):
    assert check in testing.checks_for(protocol)
    with pytest.raises(AssertionError, match=message):
        check(protocol)


def test_the_declarations_of_the_shipped_protocols():
    """What named protocols declare (a declaration silently dropped loses the Wiener filters' exact spectrum or the
    MLE); which protocols hold a declaration is checked by the conformance suite over the registry, not listed here."""
    assert all(_example(name).tags.fixed_support_size for name in ("grr", "ss", "l-grr"))
    assert not any(_example(name).tags.fixed_support_size for name in ("oue", "olh"))
    assert _example("grr").tags.closed_form_mle and not _example("oue").tags.closed_form_mle
    assert local.make("pem", **WORDS).tags.words and not local.make("pem", epsilon=1.0, bits=4).tags.words
    assert local.make("pem", **WORDS).takes_strings


def _example(name):
    from conformance._examples import EXAMPLES  # the conformance examples: loaded by the one test that names them

    return local.make(name, **EXAMPLES[name][0])
