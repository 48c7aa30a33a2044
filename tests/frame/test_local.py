"""The group-by's keys (dpdist.frame._local): a missing key listed in 'groups' is refused, and a frame with no
row with a key is named."""

from __future__ import annotations

import pytest

from dpdist import central, frame, local
from dpdist.errors import EmptyAggregateError, InvalidParameterError

pd = pytest.importorskip("pandas")


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_missing_key_in_groups_is_refused(missing):
    # a row whose key is missing belongs to no group, so a listed key None (or NaN) was released as an empty
    # group, noise alone, beside the rows that have no key: a silent wrong answer. The groups are checked alone
    # (public input), so the refusal does not depend on the data.
    people = pd.DataFrame({"x": [1.0, 2.0, 3.0], "g": ["a", None, None]})
    with pytest.raises(InvalidParameterError, match="'groups' argument of frame.group_release .*missing"):
        frame.group_release(people, "x", "g", central.cdf, epsilon=1.0, bounds=(0, 4), groups=["a", missing], rng=0)
    with pytest.raises(InvalidParameterError, match="'groups' argument of frame.group_estimate .*missing"):
        frame.group_estimate(people, "x", "g", local.make("grr", epsilon=1.0, domain_size=4), groups=[("a"), missing])
    with pytest.raises(InvalidParameterError, match="'groups' argument of frame.group_release .*missing"):
        frame.group_release(people.assign(h=1), "x", ["g", "h"], central.cdf, epsilon=1.0, bounds=(0, 4),
                            groups=[("a", 1), (missing, 1)], rng=0)


def test_a_group_estimate_of_a_frame_without_keys_names_the_frame():
    # an empty frame (or one whose every key is missing) gave "privacy.parallel needs at least one
    # guarantee", naming a function the caller never called.
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    for people in (pd.DataFrame({"x": pd.Series([], dtype=float), "g": pd.Series([], dtype=object)}),
                   pd.DataFrame({"x": [1.0, 2.0], "g": [None, None]})):
        with pytest.raises(EmptyAggregateError, match=r"'frame' argument of frame\.group_estimate has no row with a key"):
            frame.group_estimate(people, "x", "g", protocol, missing_keys="drop")  # (refused first by default)


def test_frame_and_explain_name_a_bad_argument(pandas_table):
    from dpdist import frame
    from dpdist.accuracy import explain

    oue = local.make("oue", epsilon=1.0, domain_size=2)
    sw = local.make("sw", epsilon=1.0, bounds=(0, 100))
    calls = [
        (lambda: frame.estimate(pandas_table, "age", sw, session="budget"), "session"),
        (lambda: frame.privatize(pandas_table, "group", oue, report_column=["r"]), "report_column"),
        (lambda: frame.group_estimate(pandas_table, "group", None, oue), "by"),
        (lambda: frame.release(pandas_table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), session=1.0), "session"),
        (lambda: frame.table(None, like=pandas_table), "result"),
        (lambda: explain("cdf", 100, bounds=3, repeats=2), "bounds"),
        (lambda: explain("cdf", 100, bounds=(0, 1), shape=["normal"], repeats=2), "shape"),
    ]
    for call, argument in calls:
        with pytest.raises(InvalidParameterError, match=rf"'{argument}'"):
            call()
