"""The auditor against randomizers that try to fool it or break it: an honest result or a named error, never a lie."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit
from dpdist.audit._black_box import KEPT_ENTRIES
from dpdist.errors import InvalidParameterError

D = 4
KEEP = math.e / (math.e + D - 1)


def honest(values, rng):
    values = np.asarray(values, dtype=np.int64)
    other = (values + rng.integers(1, D, values.size)) % D
    return np.where(rng.random(values.size) < KEEP, values, other)


def test_a_randomizer_honest_only_on_batches_of_one_repeated_value_is_caught():
    """Calls mix the audited inputs: a randomizer that randomizes only when every value of a call is the same
    (what an auditor repeating one input would send) leaks everywhere else, and is certified to."""

    def cheat(values, rng):
        values = np.asarray(values)
        return honest(values, rng) if np.all(values == values[0]) else values

    assert audit.audit(cheat, 1.0, D, samples=8000, rng=0).violates


def test_calls_mix_the_inputs_and_vary_in_size():
    sizes, mixed = [], []

    def recording(values, rng):
        sizes.append(len(values))
        mixed.append(len(np.unique(values)) == D)
        return honest(values, rng)

    audit.audit(recording, 1.0, D, samples=20_000, white_box=False, rng=1)
    assert all(mixed) and len(set(sizes)) > 5 and min(sizes) < 100 and max(sizes) > 1000


def test_outputs_whose_length_depends_on_the_value_are_certified_to_violate():
    def framing(values, rng):
        return [np.full(1 + int(v) % 2, r) for v, r in zip(np.asarray(values).tolist(), honest(values, rng).tolist())]

    result = audit.audit(framing, 1.0, D, samples=8000, rng=2)
    assert result.violates and result.certified_epsilon > 3


def test_nan_and_inf_outputs_are_cells_like_any_other():
    def nan_for_zero(values, rng):
        out = honest(values, rng).astype(float)
        out[np.asarray(values) == 0] = np.nan
        return out

    assert audit.audit(nan_for_zero, 1.0, D, samples=8000, rng=3).violates

    def inf_at_random(values, rng):
        out = honest(values, rng).astype(float)
        out[rng.random(out.size) < 0.01] = np.inf
        return out

    assert audit.audit(inf_at_random, 1.0, D, samples=8000, rng=3).verdict == "no violation found"


def test_outputs_changing_shape_between_calls_are_refused():
    calls = []

    def shifting(values, rng):
        calls.append(1)
        out = honest(values, rng)
        return out if len(calls) % 2 else np.stack([out, out], axis=1)

    with pytest.raises(InvalidParameterError, match="one shape across calls"):
        audit.audit(shifting, 1.0, D, samples=4000, rng=4)


def test_outputs_changing_numeric_type_between_calls_are_audited():
    calls = []

    def retyping(values, rng):
        calls.append(1)
        return honest(values, rng).astype([np.int64, np.float32, np.uint8, bool][len(calls) % 4] if D > 2 else int)

    result = audit.audit(retyping, 1.0, D, samples=4000, white_box=False, rng=4)
    assert result.verdict == "no violation found"


def test_huge_outputs_are_refused_before_the_pilot_is_drawn():
    calls = []

    def huge(values, rng):
        calls.append(len(values))
        return np.zeros((len(values), 100_000), dtype=np.uint8)

    with pytest.raises(InvalidParameterError, match="'features'.*'pilot'"):
        audit.audit(huge, 1.0, D, samples=8000, rng=5)
    assert calls == [D] and 1000 * D * 100_000 > KEPT_ENTRIES  # one call of one value per input, then refused


def test_a_randomizer_that_raises_is_named_with_its_error():
    def broken(values, rng):
        raise RuntimeError("the key file is missing")

    with pytest.raises(InvalidParameterError, match="'randomizer' .*broken raised RuntimeError.*key file") as caught:
        audit.audit(broken, 1.0, D, samples=4000)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_claim_of_zero_is_audited_and_infinite_or_nan_claims_are_refused():
    constant = audit.audit(lambda values, rng: np.zeros(len(values)), 0.0, D, samples=2000, rng=6)
    assert constant.verdict == "no violation found" and constant.certified_epsilon == 0.0
    assert audit.audit(honest, 0.0, D, samples=4000, rng=6).violates  # GRR at epsilon 1 is not 0-DP
    for claim in (math.inf, math.nan, -0.5):
        with pytest.raises(InvalidParameterError, match="'epsilon'"):
            audit.audit(honest, claim, D)


def test_a_domain_of_a_billion_items_audits_a_designed_set():
    seen = set()

    def modular(values, rng):
        seen.update(np.asarray(values).tolist())
        return honest(np.asarray(values) % D, rng)

    result = audit.audit(modular, 1.0, 10**9, samples=2000, rng=7)
    assert len(seen) == 16 and {0, 1, 7, 8, 5 * 10**8, 10**9 - 1} <= seen and "16 of 1000000000 items" in result.inputs


@pytest.mark.parametrize("kwargs, named", [
    ({"alpha": 0.0}, "'alpha'"), ({"alpha": 1.0}, "'alpha'"), ({"alpha": math.nan}, "'alpha'"),
    ({"samples": 0}, "'samples'"), ({"samples": 2.5}, "'samples'"),
    ({"domain": np.arange(100)}, "'domain'.*shape \\(100,\\)"), ({"domain": (0.0, math.inf)}, "'domain'"),
])
def test_more_bad_arguments_are_refused_by_name(kwargs, named):
    with pytest.raises(InvalidParameterError, match=named):
        audit.audit(honest, **{"epsilon": 1.0, "domain": D, **kwargs})
