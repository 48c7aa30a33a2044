"""The white-box audit (dpdist.audit._white_box): the stated channel is checked, and fitted to the outputs
without false alarms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit, local
from dpdist.audit import Randomizer
from dpdist.errors import InvalidParameterError


def test_a_correct_oue_at_high_epsilon_is_no_channel_mismatch():
    protocol = local.make("oue", epsilon=7.7, domain_size=8)
    # seeds 17, 29, 32, 45 of 0..99 gave "channel mismatch" (fit p down to 1.6e-4 < alpha 0.001)
    verdicts = [audit.audit(protocol, samples=200, rng=seed).verdict for seed in (17, 29, 32, 45)]
    assert verdicts == ["no violation found"] * 4


# a stated channel that is not a channel (negative, or rows not summing to 1) was used as is:
# a raw ValueError, or a "channel mismatch" verdict about the randomizer.
def _grr(values, rng, d=4):
    values = np.asarray(values)
    keep = math.e / (math.e + d - 1)
    return np.where(rng.random(values.size) < keep, values, (values + rng.integers(1, d, values.size)) % d)


@pytest.mark.parametrize("channel", [
    lambda x: -np.ones((len(x), 4)),
    lambda x: np.ones((len(x), 4)),
])
def test_a_stated_channel_that_is_not_one_is_refused(channel):
    stated = Randomizer(_grr, epsilon=1.0, domain=4, channel=channel, output_index=np.asarray)
    with pytest.raises(InvalidParameterError, match="channel"):
        audit.audit(stated, samples=400, rng=0)
