"""The auditor against randomizers that try to fool it or break it: an honest result or a named error, never a lie."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit, local
from dpdist.audit._black_box import KEPT_ENTRIES, single_value_plan
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


def test_calls_look_like_ordinary_use():
    """Calls vary in size and make-up as a column of ordinary use would (every call held every
    input exactly equally often, and a seeded audit handed a PCG64 generator): unbalanced calls, calls missing
    inputs, calls of one value; the generator handed over is dpdist's CSPRNG type, seeded or not."""
    calls = []

    def recording(values, rng):
        counts = np.bincount(np.asarray(values), minlength=D)
        calls.append((len(values), int(counts.max() - counts[counts > 0].min()), int(np.count_nonzero(counts)),
                      type(rng.bit_generator).__name__))
        return honest(values, rng)

    audit.audit(recording, 1.0, D, samples=20_000, white_box=False, rng=1)
    sizes = [size for size, _, _, _ in calls]
    assert len(set(sizes)) > 5 and max(sizes) > 1000 and sizes.count(1) >= 256 * D
    mixed = [(imbalance, present) for size, imbalance, present, _ in calls if size >= 4 * D and present > 1]
    assert sum(imbalance == 0 for imbalance, _ in mixed) <= len(mixed) // 10 and any(p < D for _, p in mixed)
    calls.clear()
    audit.audit(recording, 1.0, D, samples=2_000, white_box=False, rng=None)
    assert {generator for _, _, _, generator in calls} == {"AESCounter"}


def test_a_randomizer_that_sorts_or_shuffles_its_call_is_caught():
    """Outputs that are the inputs, only not in their positions (certified 0.000 before), and an
    identity only on one-value calls (what a device makes), GRR on any call of several values."""

    def sorted_identity(values):
        return np.sort(np.asarray(values))

    def shuffled_identity(values, rng):
        return rng.permutation(np.asarray(values))

    def identity_alone(values, rng):
        return np.asarray(values).copy() if len(values) == 1 else honest(values, rng)

    for randomizer in (sorted_identity, shuffled_identity, identity_alone):
        result = audit.audit(randomizer, 1.0, D, samples=20_000, white_box=False, rng=2)
        assert result.violates, randomizer.__name__


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
    assert len(calls) == 1 and calls[0] <= 2 * D and 1000 * D * 100_000 > KEPT_ENTRIES  # one call, of at most 2 D


@pytest.mark.slow  # 0.83 CPU-s: a seeded audit
def test_an_exception_that_depends_on_the_value_is_certified_as_a_leak():
    """An exception raised only for item 3 (w.p. 1e-2 a value) was a usage error (exit 2); it is
    what leaves the device, so the call is made again value by value and the refusal is an output certified."""

    def raises_on_three(values, rng):
        values = np.asarray(values)
        if ((values == 3) & (rng.random(values.size) < 1e-2)).any():
            raise ValueError("refused: rate limit")
        return honest(values, rng)

    result = audit.audit(raises_on_three, 1.0, D, white_box=False, rng=0)
    assert result.violates and result.witness["input"] == 3 and "-3e+300" in result.witness["event"]


def test_the_rng_goes_to_a_parameter_named_rng_and_never_to_a_bound_default():
    """A call f(values, mech=mech) was made as f(values, rng) (an AttributeError on the generator)."""
    seen, own = [], np.random.default_rng(17)  # the randomizer's own generator, seeded: a correct audit's verdict is fixed

    def own_randomness(values, mechanism=honest):
        seen.append(mechanism is honest)
        return mechanism(np.asarray(values), own)

    def keyword_rng(values, *, rng):
        return honest(values, rng)

    assert audit.audit(own_randomness, 1.0, D, samples=2000, white_box=False, rng=5).verdict == "no violation found"
    assert all(seen)
    first = audit.audit(keyword_rng, 1.0, D, samples=2000, white_box=False, rng=3)
    assert first.certified_epsilon == audit.audit(keyword_rng, 1.0, D, samples=2000, white_box=False, rng=3).certified_epsilon


def test_a_randomizer_that_raises_is_named_with_its_error():
    def broken(values, rng):
        raise RuntimeError("the key file is missing")

    with pytest.raises(InvalidParameterError, match="'randomizer' .*broken raised RuntimeError.*alone.*key file.*leak"
                       ) as caught:
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



def test_a_randomizer_stating_repeated_value_calls_gets_one_input_per_call_in_its_last_stage():
    """dpdist's protocols state that a call of k copies of a value is k calls of it alone: their one-value stage is
    drawn in calls of one input each (one call per input, not a Python call per output), so a sort or shuffle within
    a call still moves no output to another input: the sorted and shuffled identities stay certified to violate."""
    calls = []

    def recording(values, rng):
        calls.append(np.bincount(np.asarray(values), minlength=D))
        return honest(values, rng)

    assert audit.protocol_randomizer(local.make("grr", epsilon=1.0, domain_size=D)).repeated_value_calls
    # WAVELET's assignment="fixed" splits a batch as a whole (and refuses one value): no such statement
    assert audit.protocol_randomizer(local.make("wavelet", epsilon=1.0, levels=3)).repeated_value_calls
    assert not audit.protocol_randomizer(local.make("wavelet", epsilon=1.0, levels=3, assignment="fixed")).repeated_value_calls
    result = audit.audit(audit.Randomizer(recording, epsilon=1.0, domain=D, repeated_value_calls=True),
                         samples=20_000, white_box=False, rng=2)
    assert result.verdict == "no violation found" and any("one input repeated" in note for note in result.notes)
    pilot, stage = single_value_plan(20_000, 1.0)
    last = np.array(calls[-2 * D:])  # the one-value stage's pilot, then its stage: one call per input each
    assert np.all(np.count_nonzero(last, axis=1) == 1)
    assert np.array_equal(last[:D].sum(axis=0), np.full(D, pilot)) and np.array_equal(last[D:].sum(axis=0), np.full(D, stage))
    for randomizer in (lambda values, rng: np.sort(np.asarray(values)), lambda values, rng: rng.permutation(values)):
        stated = audit.Randomizer(randomizer, epsilon=1.0, domain=D, repeated_value_calls=True)
        assert audit.audit(stated, samples=20_000, white_box=False, rng=2).violates
