"""A state the statistic alone contradicts is refused on every path (the state validator, design.md "Aggregator state").

GRR's counts sum to ``n`` (one item per report), subset selection's to ``k n``, a
sketch's row counts to ``n``, a tree's level counts to ``n``...  A state with
``n = 4000`` and counts summing to 1000 used to load and give negative
frequencies.  Each protocol declares its invariant
(``statistic_total_per_report``, ``_check_statistic``); here every registered
protocol's valid states (from ``add`` and from ``simulate``) must be accepted and
its forged ones refused, through ``from_dict``, ``merge``, the Dask merge of
partial states and the collection service's stored row.

Which protocols have an exact relation to ``n`` is observed, not read from the
protocols' declarations (which are what is under test): a protocol has one when
``n`` is the same linear function of the statistic on every state its reports
produce (:func:`_has_exact_relation`: a least-squares fit over more states than the
statistic has entries, exact to rounding).  The unary encodings and the local
hashing oracles have none -- their support counts only lie in [0, n] -- so
``n * 4`` is a state they can produce; a new protocol is classified the same way,
with no list to join.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from conformance._examples import CASES, case_id, lightest_cases, make, population
from dpdist import local
from dpdist.errors import EachValueANewUserWarning, IncompatibleStateError
from dpdist.local import Aggregator


def _has_exact_relation(protocol) -> bool:
    """Whether ``n`` is one fixed linear function of the statistic on every state of ``protocol``'s reports.

    Observed on ``2 s + 8`` states (``s`` entries of the statistic) of 5 to 59 reports each: with more
    states than unknowns, an exact fit ``statistic @ w == n`` (to rounding) is a relation every state
    obeys -- a total (GRR: the counts sum to ``n``), a level's or a row's total, a group count -- and a
    forged ``n`` breaks it; without one the residual is of the order of a count.
    """
    key = json.dumps(protocol.config(), sort_keys=True)
    cached = _RELATIONS.get(key)
    if cached is not None:
        return cached
    generator = np.random.default_rng(0)
    statistics, sizes = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EachValueANewUserWarning)
        for index in range(2 * protocol.statistic_size + 8):
            values = population(protocol, int(generator.integers(5, 60)), rng=index)
            aggregator = protocol.aggregator().add(protocol.privatize(values, rng=1000 + index))
            statistics.append(np.asarray(aggregator.statistic, dtype=np.float64))
            sizes.append(float(aggregator.n))
    matrix, n = np.array(statistics), np.array(sizes)
    weights = np.linalg.lstsq(matrix, n, rcond=None)[0]
    exact = bool(np.max(np.abs(matrix @ weights - n)) < 1e-6)
    _RELATIONS[key] = exact
    return exact


_RELATIONS: dict[str, bool] = {}  # by config: each protocol is observed once


def test_the_observed_relation_tells_the_protocols_apart():
    """The classifier is not vacuous: counts that sum to n have a relation, unary bits do not."""
    assert _has_exact_relation(local.make("grr", epsilon=1.0, domain_size=5))
    assert _has_exact_relation(local.make("hh", epsilon=1.0, bins=4, branching=2))  # level by level
    assert not _has_exact_relation(local.make("oue", epsilon=1.0, domain_size=5))
    assert not _has_exact_relation(local.make("olh", epsilon=1.0, domain_size=5, hash_prime=7))


def _states(protocol):
    values = population(protocol, 400, rng=5)
    added = protocol.aggregator().add(protocol.privatize(values, rng=6))
    return {"add": added, "simulate": protocol.simulate(values, rng=7)}


def _forgeries(aggregator):
    """``(name, n, statistic, refused_by_every_protocol)`` of impossible or suspicious states."""
    n, statistic = aggregator.n, aggregator.statistic
    above = statistic.copy()
    above[0] = n + 1
    return [
        ("n * 4", 4 * n, statistic, False),
        ("n - 1", n - 1, statistic, False),
        ("every count + 1", n, statistic + 1, False),
        ("a count above n", n, above, True),
    ]


def _unchecked(protocol, n, statistic) -> Aggregator:
    """An aggregator holding a state as a buggy or hostile worker would build it (no validation)."""
    forged = protocol.aggregator()
    forged.statistic = np.asarray(statistic, dtype=protocol.statistic_dtype)
    forged.n = n
    return forged


def _expect(refused: bool, action):
    """A forgery is refused when the protocol's states obey an exact relation it breaks (``refused``); otherwise
    the protocol may still know a bound it breaks (RWS: each report supports between k - (m - d) and k items)
    and refuse it as corrupt, or accept it -- never fail in another way.  Genuine states are never refused
    (checked on every state before its forgeries)."""
    if refused:
        with pytest.raises(IncompatibleStateError, match="corrupt|differs|2\\*\\*53"):
            action()
        return
    try:
        action()
    except IncompatibleStateError as error:
        assert "corrupt" in str(error), error


#: one example of each protocol, the lightest (``lightest_cases``); the dask and service tests below take the same
#: ones, so each protocol's relation is observed once in the fast loop
LIGHTEST = lightest_cases()


@pytest.mark.parametrize(
    "case",  # every example in the whole suite; the fast loop: the lightest of each protocol (the same checks)
    [pytest.param(case, marks=[] if case in LIGHTEST else [pytest.mark.slow], id=case_id(case)) for case in CASES],
)
def test_from_dict_and_merge_refuse_what_the_statistic_contradicts(case):
    protocol = make(case)
    exact = _has_exact_relation(protocol)
    for how, aggregator in _states(protocol).items():
        state = aggregator.to_dict()
        assert Aggregator.from_dict(state) == aggregator, how
        assert aggregator.copy().merge(aggregator).n == 2 * aggregator.n
        for name, n, statistic, always in _forgeries(aggregator):
            if name == "n - 1" and n < 0:
                continue
            refused = always or exact
            forged = {**state, "n": n, "statistic": np.asarray(statistic).tolist()}
            _expect(refused, lambda: Aggregator.from_dict(forged))
            _expect(refused, lambda: aggregator.copy().merge(_unchecked(protocol, n, statistic)))
            _expect(refused, lambda: _unchecked(protocol, n, statistic) + aggregator)


def test_the_reported_case_grr_n_4000_with_counts_summing_to_1000():
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    state = grr.simulate(np.arange(1000) % 5, rng=0).to_dict()
    with pytest.raises(IncompatibleStateError, match=r"n=4000 .*sum to n x 1 = 4000 .*they sum to 1000"):
        Aggregator.from_dict({**state, "n": 4000})
    ss = local.make("ss", epsilon=0.2, domain_size=9, subset_size=5)  # k = 5 items per report
    state = ss.simulate(np.arange(1000) % 9, rng=0).to_dict()
    assert sum(state["statistic"]) == 5 * 1000
    with pytest.raises(IncompatibleStateError, match=r"sum to n x 5 = 20000 .*they sum to 5000"):
        Aggregator.from_dict({**state, "n": 4000})


def test_tree_and_haar_states_are_checked_level_by_level():
    hh = local.make("hh", epsilon=2.0, bins=9, branching=3, oracle="grr")
    state = hh.simulate(np.linspace(0, 1, 300), rng=0).to_dict()
    statistic = list(state["statistic"])
    # move one report of level 1's GRR table into level 2's: level counts still sum to n
    statistic[hh.height] -= 1
    statistic[-1] += 1
    with pytest.raises(IncompatibleStateError, match="level 1"):
        Aggregator.from_dict({**state, "statistic": statistic})
    haar = local.make("haar-hrr", epsilon=1.0, bins=8)
    state = haar.simulate(np.linspace(0, 1, 300), rng=0).to_dict()
    statistic = list(state["statistic"])
    statistic[-1] = statistic[2] + 2  # level 3 has one row: its sum of +-1s cannot exceed its count (parity kept)
    with pytest.raises(IncompatibleStateError, match="level 3"):
        Aggregator.from_dict({**state, "statistic": statistic})
    wavelet = local.make("wavelet", epsilon=1.0, levels=2)
    state = wavelet.simulate(np.linspace(0, 1, 300), rng=0).to_dict()
    statistic = list(state["statistic"])
    statistic[-1] += 1  # one more +-1 on level 2: the parity of m_2 * count breaks
    with pytest.raises(IncompatibleStateError, match="level 2"):
        Aggregator.from_dict({**state, "statistic": statistic})


def test_exact_sums_are_not_fooled_by_overflow():
    """Entries near 2**53 summed in int64 would wrap; the validator sums them exactly."""
    from dpdist.local._state_validation import exact_sum

    big = np.full(4096, 2.0**53)
    assert exact_sum(big) == 4096 * 2**53
    assert exact_sum(np.array([2.0**53, -(2.0**53), 3.0])) == 3


@pytest.mark.parametrize("case", LIGHTEST, ids=lambda c: c[0])
def test_partial_states_are_checked_when_merged_in_either_order(case):
    """What each task of the Dask merge runs (``dpdist.distributed._parts.merge_states``, the tree reduction's
    function), here without Dask: a forged partial state is refused whether it comes first or second."""
    from dpdist.distributed._parts import merge_states

    protocol = make(case)
    exact = _has_exact_relation(protocol)
    good = _states(protocol)["add"]
    merged = merge_states(good, good.copy())
    assert merged.n == 2 * good.n
    for name, n, statistic, always in _forgeries(good):
        forged = _unchecked(protocol, n, statistic)
        for order in ([good, forged], [forged, good]):
            _expect(always or exact, lambda: merge_states(*order))


# Dask and its scheduler (importing Dask is 0.4 CPU-s, and no other fast test loads it): the whole suite; the test
# above runs the same merge function on the same states and forgeries in the fast loop
@pytest.mark.slow
@pytest.mark.parametrize("case", LIGHTEST, ids=lambda c: c[0])
def test_dask_partial_states_are_checked_when_merged(case):
    dask = pytest.importorskip("dask")
    from dpdist.distributed.dask import _tree_merge

    protocol = make(case)
    exact = _has_exact_relation(protocol)
    good = _states(protocol)["add"]
    with dask.config.set(scheduler="synchronous"):
        merged = _tree_merge([dask.delayed(good), dask.delayed(good.copy())], protocol, 2).compute()
        assert merged.n == 2 * good.n
        for name, n, statistic, always in _forgeries(good):
            forged = _unchecked(protocol, n, statistic)
            for order in ([good, forged], [forged, good]):
                delayed = _tree_merge([dask.delayed(state) for state in order], protocol, 2)
                _expect(always or exact, delayed.compute)


@pytest.mark.parametrize("case", LIGHTEST, ids=lambda c: c[0])
def test_the_services_stored_aggregate_is_checked_when_read_and_when_extended(case, tmp_path):
    """The service's aggregate is its folded parts plus its ingest log: a forged part is refused when read and is
    never extended by a fold (the batches counted meanwhile stay in the log)."""
    pytest.importorskip("starlette")
    from dpdist.serve._database import open_database
    from dpdist.serve._deltas import statistic_bytes
    from dpdist.serve._store import Store

    protocol = make(case)
    exact = _has_exact_relation(protocol)
    store = Store(open_database(str(tmp_path / "campaigns.sqlite")))
    store.create("c", protocol.config())
    store.transition("c", "open")
    good = _states(protocol)["add"]
    batch = protocol.validate_reports(protocol.privatize(population(protocol, 400, rng=5), rng=6))  # good's reports
    store.ingest("c", "b1", "0" * 64, batch)
    assert store.get("c", statistic=True).aggregator() == good  # from the log
    assert store.fold("c") == 1
    assert store.get("c", statistic=True).aggregator() == good  # from the part

    def part():
        return store.db.execute("SELECT n, statistic FROM campaign_parts WHERE campaign_id = 'c'")[0]

    for name, n, statistic, always in _forgeries(good):
        store.db.execute(
            "UPDATE campaign_parts SET n = ?, statistic = ? WHERE campaign_id = ?",
            (n, statistic_bytes(np.asarray(statistic, dtype=protocol.statistic_dtype)), "c"),
        )
        before = part()
        _expect(always or exact, lambda: store.get("c", statistic=True).aggregator())
        batch_id = f"b-{name.replace(' ', '-').replace('*', 'x')}"
        store.ingest("c", batch_id, "1" * 64, batch)  # into the log: the part is not touched
        _expect(always or exact, lambda: store.fold("c"))
        if always or exact:  # refused: the corrupt part was not extended
            assert part() == before