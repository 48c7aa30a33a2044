"""``explain`` per person: the expected error across ``max_contributions``, from a public model of the
rows per person, weighing the rows dropped against the noise of k rows."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist.accuracy import Explanation, explain
from dpdist.cli import main
from dpdist.errors import InvalidParameterError


def _errors(explanation, metric):
    return explanation[metric], np.array([p.errors[metric].standard_error for p in explanation.predictions])


def test_without_a_person_effect_a_larger_bound_only_adds_noise():
    """Values independent of persons, most persons with one or two rows: dropping rows costs no bias and few rows, so
    the error grows with k (epsilon/k per row over about as many rows)."""
    found = explain("cdf", 400, bounds=(0, 1), rows_per_person=("geometric", 1.5), person_correlation=0.0,
                    max_contributions=[1, 32], epsilons=[0.5], repeats=6)
    assert list(found.bounds) == [1, 32] and found.n == 400
    (small, large), (se_small, se_large) = _errors(found, "ks")
    assert large - small > 3 * np.hypot(se_small, se_large)


@pytest.mark.slow  # a bias measured over repeated releases, 0.5 CPU-s: the fast loop keeps the effect-free case above
def test_when_the_persons_with_many_rows_differ_dropping_their_rows_is_a_bias_a_larger_bound_removes():
    found = explain("quantiles", 1_000, bounds=(0, 1), rows_per_person=("geometric", 8.0), person_correlation=0.8,
                    max_contributions=[1, 16], epsilons=[2.0], repeats=6)
    (one, sixteen), (se_one, se_sixteen) = _errors(found, "quantile_mae")
    assert one - sixteen > 3 * np.hypot(se_one, se_sixteen)
    assert "max_contributions" in found.describe() and "persons" in found.describe()
    assert Explanation.from_dict(found.to_dict()) == found
    assert list(found.table()["max_contributions"]) == [1, 16]


@pytest.mark.parametrize("params, named", [
    ({"rows_per_person": 0}, "'rows_per_person'"), ({"rows_per_person": ("zipf", 1.0)}, "'rows_per_person'"),
    ({"rows_per_person": [0, 3]}, "'rows_per_person'"), ({"rows_per_person": 3, "person_correlation": 1.0},
                                                         "'person_correlation'"),
    ({"rows_per_person": 3, "max_contributions": [0]}, "'max_contributions'"),
    ({"max_contributions": [2]}, "give 'rows_per_person'"), ({"privacy_id": [1]}, "give 'rows_per_person'"),
])
def test_a_bad_model_is_refused_by_name(params, named):
    with pytest.raises(InvalidParameterError, match=named):
        explain("cdf", 100, bounds=(0, 1), epsilons=[1.0], repeats=2, **params)


def test_the_command_line_explains_a_release_per_person(capsys):
    code = main(["explain", "--release", "cdf", "--n", "300", "--bounds", "0,1", "--rows-per-person", "geometric:3",
                 "--max-contributions", "1,4", "--epsilons", "1", "--repeats", "3", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0 and "max_contributions" in out and "n = 300 persons" in out
    assert main(["explain", "--release", "cdf", "--n", "300", "--bounds", "0,1", "--max-contributions", "2"]) == 2
    assert "'--max-contributions' option needs '--rows-per-person'" in capsys.readouterr().err
