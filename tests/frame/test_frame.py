"""dpdist.frame: columns of every DataFrame engine narwhals reads in and out, group-by with parallel composition,
the array API's errors.

Each test runs on pandas, Polars (eager and lazy), PyArrow, DuckDB, Dask, Ibis and PySpark (``local[2]``; marked
slow: a JVM starts; Dask and Ibis slow too: their imports), and checks that frames come back in the engine that
went in.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpdist import central, frame, local, privacy
from dpdist.budget import BudgetSession
from dpdist.errors import (
    ContributionBoundWarning,
    InvalidParameterError,
    MissingValuesError,
    MissingValuesWarning,
    InvalidValueTypeError,
    MalformedReportError,
    OutOfDomainError,
    PrivacyBudgetError,
)

nw = pytest.importorskip("narwhals.stable.v2")
pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

N = 4000
RNG = np.random.default_rng(5)
COLUMNS = {
    "age": RNG.uniform(18, 90, N),
    "city": RNG.choice(["lyon", "oslo", "pune"], N),
    "page": RNG.choice(["home", "cart", "pay"], N),
    "item": RNG.integers(0, 8, N),
}

# Dask's and Ibis's cases run in the whole suite only: their first import costs the fast loop ~1 CPU-s each, and
# dpdist reads their frames through narwhals' lazy path, which the fast cases of Polars' LazyFrame and DuckDB's
# relations run (only frame.table(like=...)'s Dask branch, _tables._dask_frame, is then left to the whole suite).
ENGINES = ["pandas", "polars", "polars-lazy", "pyarrow", "duckdb", pytest.param("dask", marks=pytest.mark.slow),
           pytest.param("ibis", marks=pytest.mark.slow), pytest.param("pyspark", marks=pytest.mark.slow)]


def make_frame(engine: str, columns: dict):
    """A frame of ``engine`` holding ``columns`` (several partitions where the engine has them)."""
    arrow = pa.table(columns)
    if engine == "pandas":
        return pd.DataFrame(columns)
    if engine == "polars":
        return pl.DataFrame(columns)
    if engine == "polars-lazy":
        return pl.LazyFrame(columns)
    if engine == "pyarrow":
        return arrow
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        return duckdb.from_arrow(arrow)
    if engine == "dask":
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(pd.DataFrame(columns), npartitions=3)
    if engine == "ibis":
        ibis = pytest.importorskip("ibis")
        return ibis.memtable(arrow)
    assert engine == "pyspark"
    from spark_support import spark_session

    return spark_session().createDataFrame(arrow)


def engine_of(native) -> tuple[str, bool]:
    """narwhals' name of a frame's engine, and whether it is lazy."""
    wrapped = nw.from_native(native)
    return str(wrapped.implementation.value), isinstance(wrapped, nw.LazyFrame)


def to_pandas(native):
    """Any frame's content as a pandas DataFrame (collected from a lazy engine)."""
    wrapped = nw.from_native(native)
    if isinstance(wrapped, nw.LazyFrame):
        wrapped = wrapped.collect()
    return wrapped.to_pandas()


@pytest.fixture(params=ENGINES)
def table(request):
    return make_frame(request.param, COLUMNS)


def _library(result) -> tuple[str, bool]:
    return engine_of(result)


@pytest.mark.parametrize("protocol", [
    local.make("grr", epsilon=1.0, domain_size=8),
    local.make("oue", epsilon=1.0, domain_size=8),
    local.make("olh", epsilon=1.0, domain_size=8),
    local.make("hh", epsilon=1.0, bounds=(0, 8)),
], ids=lambda p: p.name)
def test_privatize_then_aggregate_equals_the_array_api(table, protocol):
    reports = frame.privatize(table, "item", protocol, rng=3)
    assert _library(reports) == _library(table) and to_pandas(reports).shape == (N, 1)
    aggregate = frame.aggregate(reports, "report", protocol)
    direct = protocol.aggregator().add(protocol.privatize(COLUMNS["item"], rng=np.random.default_rng(3)))
    # the same draws (one generator), put in a random order: the aggregate is the same
    assert aggregate.n == N and np.array_equal(aggregate.statistic, direct.statistic)


def test_reports_leave_in_a_random_order_not_the_rows(table):
    protocol = local.make("grr", epsilon=30.0, domain_size=8)  # nearly every report is the true item
    reports = frame.privatize(table, "item", protocol, rng=0)
    cells = to_pandas(reports)["report"].to_numpy()
    assert np.mean(cells == COLUMNS["item"]) < 0.3  # 1/8 matches by chance; in row order ~1.0


def test_labels_and_estimates_come_back_as_frames_of_the_same_library(table):
    protocol = local.make("oue", epsilon=2.0, labels=["home", "cart", "pay"])
    estimate = frame.estimate(table, "page", protocol, rng=1)
    truth = {label: float(np.mean(COLUMNS["page"] == label)) for label in ["home", "cart", "pay"]}
    # unbiased, 4.5 standard errors at this n (a seeded draw)
    for label, value in estimate.by_label().items():
        assert abs(value - truth[label]) < 4.5 * np.sqrt(protocol.variance(N).max())
    out = frame.table(estimate, like=table)
    assert _library(out) == _library(table)
    out = to_pandas(out)
    assert list(out.columns)[:2] == ["item", "label"] and list(out["label"]) == ["home", "cart", "pay"]


def test_release_is_the_central_release_of_the_column(table):
    released = frame.release(table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), rng=4)
    direct = central.cdf(COLUMNS["age"], epsilon=1.0, bounds=(0, 100), rng=4)
    assert np.array_equal(released.cdf(np.linspace(0, 100, 11)), direct.cdf(np.linspace(0, 100, 11)))


def test_release_per_person_reads_the_id_column_with_the_values(table):
    """``privacy_id`` names a column: read in the same query as the values (a key stays with its row), the release is
    the array release with those ids, its guarantee per person."""
    ids = COLUMNS["item"]  # 8 "persons" of about N / 8 rows each
    with pytest.warns(ContributionBoundWarning):
        released = frame.release(table, "age", central.quantiles, [0.5], epsilon=1.0, bounds=(0, 100), rng=4,
                                 privacy_id="item", max_contributions=3)
    with pytest.warns(ContributionBoundWarning):
        direct = central.quantiles(COLUMNS["age"], [0.5], epsilon=1.0, bounds=(0, 100), rng=4, privacy_id=ids,
                                   max_contributions=3)
    assert np.array_equal(released.values, direct.values) and released.guarantee.unit == "person"
    with pytest.raises(InvalidParameterError, match="'privacy_id' parameter of frame.release must be a column of the frame"):
        frame.release(table, "age", central.cdf, epsilon=1.0, bounds=(0, 100), privacy_id="nobody", max_contributions=1)


def test_group_release_composes_in_parallel_and_releases_every_listed_group(table):
    session = BudgetSession(1.0, neighbouring="add-remove", reproducible=True)  # seeded releases are compared
    grouped = frame.group_release(table, "age", "city", central.quantiles, [0.5], epsilon=0.8, bounds=(0, 100),
                                  groups=["lyon", "oslo", "pune", "rome"], rng=2, session=session)
    # the steps of a release add up to 0.8 up to the rounding of their shares (the session's 1e-12 relative slack)
    assert grouped.guarantee == privacy.PrivacyGuarantee(grouped.guarantee.epsilon, 0.0, "add-remove", "central")
    assert grouped.guarantee.epsilon == pytest.approx(0.8, rel=1e-12)
    assert session.spent.epsilon == 0.8  # once, not 4 x 0.8
    assert list(grouped.keys()) == ["lyon", "oslo", "pune", "rome"]  # rome: no row, released all the same
    assert "numbers of records are not released" in grouped.covers
    summary = grouped.summary()
    # the summary keeps each quantile's interval (it showed the quantiles alone)
    assert _library(summary) == _library(table)
    summary = to_pandas(summary)
    assert list(summary.columns) == ["city", "0.5 quantile", "0.5 quantile low", "0.5 quantile high", "level"]
    lows = summary["0.5 quantile low"].to_list()
    assert lows == [float(grouped[city].low[0]) for city in ["lyon", "oslo", "pune", "rome"]]
    for city in ["lyon", "oslo", "pune"]:  # each group's median near its true one (the tree's interval)
        release = grouped[city]
        truth = np.median(COLUMNS["age"][COLUMNS["city"] == city])
        assert release.low[0] - 1 <= truth <= release.high[0] + 1
    with pytest.raises(PrivacyBudgetError, match="0.2 left"):  # refused before any group is released
        frame.group_release(table, "age", "city", central.cdf, epsilon=0.5, bounds=(0, 100), groups=["lyon"],
                            session=session)


def test_groups_draw_independent_noise_from_one_seed(table):
    grouped = frame.group_release(table, "age", "city", central.histogram_queries, epsilon=1.0, bounds=(0, 100),
                                  bins=16, groups=["x", "y"], rng=7)  # two empty groups: noise alone
    assert not np.array_equal(grouped["x"].probabilities, grouped["y"].probabilities)
    assert grouped["x"].n == 0 and "treated as public" in grouped.covers


def test_a_seeded_frame_release_is_refused_by_name_in_a_session_that_is_not_reproducible(table):
    session = BudgetSession(10.0, 1e-5, neighbouring="add-remove")
    grr = local.make("grr", epsilon=1.0, domain_size=8)
    calls = {"frame.privatize": lambda: frame.privatize(table, "item", grr, rng=3, session=session),
             "frame.group_estimate": lambda: frame.group_estimate(table, "item", "city", grr, rng=3, session=session),
             "frame.group_release": lambda: frame.group_release(table, "age", "city", central.cdf, epsilon=0.5,
                                                                bounds=(0, 100), groups=["lyon"], rng=3, session=session)}
    for owner, call in calls.items():
        with pytest.raises(InvalidParameterError, match=f"The 'rng' argument of {owner} is 3 .* not reproducible"):
            call()
    with pytest.raises(InvalidParameterError, match="The 'rng' argument of frame.group_release is 3 .* not reproducible"):
        frame.group_release(table, "age", "city", central.count, epsilon=0.5, groups=None, rng=3, session=session,
                            selection_epsilon=0.5, selection_delta=1e-6)  # keys chosen privately
    assert session.charges == ()


def test_group_estimate_charges_the_protocol_once_and_names_keys_of_several_columns(table):
    session = BudgetSession(1.0)
    protocol = local.make("grr", epsilon=1.0, domain_size=8)
    grouped = frame.group_estimate(table, "item", ["city", "page"], protocol, session=session)
    assert len(grouped) == 9 and ("lyon", "cart") in grouped.keys()
    assert session.spent.epsilon == 1.0 and grouped.guarantee == protocol.guarantee
    stacked = grouped.table()
    assert _library(stacked) == _library(table)
    stacked = to_pandas(stacked)
    assert stacked.shape == (9 * 8, 7) and list(stacked.columns)[:2] == ["city", "page"]
    summary = to_pandas(grouped.summary())
    assert summary.shape[0] == 9 and {"item 0 low", "item 0 high", "level", "n"} <= set(summary.columns)
    assert grouped.library == _library(table)[0]


def test_errors_are_the_array_apis_naming_the_column(table):
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(OutOfDomainError, match="Column 'item'"):
        frame.privatize(table, "item", protocol)  # items 4..7 outside the domain of 4
    with pytest.raises(InvalidParameterError, match="must be a column of the frame"):
        frame.estimate(table, "nope", protocol)
    with pytest.raises(InvalidValueTypeError, match="Column 'city'"):
        frame.release(table, "city", central.cdf, epsilon=1.0, bounds=(0, 1))
    with pytest.raises(InvalidValueTypeError, match=r"a DataFrame of an engine narwhals reads .* Got builtins.dict"):
        frame.estimate(COLUMNS, "item", protocol)
    with pytest.raises(InvalidValueTypeError, match="pass the DataFrame and the column's name"):
        frame.estimate(pd.Series([1, 2]), "item", protocol)
    with pytest.raises(InvalidParameterError, match=r"'groups' parameter of frame.group_release must be None or a list "
                       r"of the public keys, at least one\. Got \[\] instead"):
        frame.group_release(table, "age", "city", central.cdf, epsilon=1.0, bounds=(0, 100), groups=[])
    with pytest.raises(InvalidParameterError, match="distinct public keys"):
        frame.group_release(table, "age", "city", central.cdf, epsilon=1.0, bounds=(0, 100), groups=["x", "x"])
    with pytest.raises(InvalidParameterError, match="tuples of 2 values"):
        frame.group_release(table, "age", ["city", "page"], central.cdf, epsilon=1.0, bounds=(0, 100),
                            groups=["lyon"])


@pytest.mark.parametrize("engine", ENGINES)
def test_missing_values_and_missing_keys_in_every_engine(engine):
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    table = make_frame(engine, {"x": [1.0, None, 3.0, 2.0], "key": ["a", "b", None, "a"]})
    with pytest.raises(OutOfDomainError, match="1 missing value"):
        frame.estimate(table, "x", protocol)
    with pytest.raises(MissingValuesError, match="'x' argument of cdf "):
        frame.release(table, "x", central.cdf, epsilon=1.0, bounds=(0, 4), rng=0)  # the curator says what NaN is
    released = frame.release(table, "x", central.cdf, epsilon=1.0, bounds=(0, 4), rng=0, missing=0.0)
    assert released.guarantee.epsilon == 1.0 and any("counted as 0.0" in note for note in released.notes())
    # a row whose key is missing: refused, left out and counted, or a group of its own (dropped in
    # silence); keys come back as the values typed, sorted, the missing one last
    keyed = make_frame(engine, {"x": [1, 0, 3, 2], "key": ["b", "a", None, "b"]})
    with pytest.raises(MissingValuesError, match=r"key column\(s\) \['key'\] .* has 1 record\(s\) with a missing value"):
        frame.group_estimate(keyed, "x", "key", protocol, rng=1)
    with pytest.warns(MissingValuesWarning, match="1 missing value"):
        grouped = frame.group_estimate(keyed, "x", "key", protocol, rng=1, missing_keys="drop")
    assert list(grouped.keys()) == ["a", "b"] and grouped["a"].n == 1 and grouped["b"].n == 2 and grouped.dropped == 1
    kept = frame.group_estimate(keyed, "x", "key", protocol, rng=1, missing_keys="group")
    assert list(kept.keys()) == ["a", "b", None] and kept[None].n == 1 and kept.dropped == 0


def test_missing_values_are_refused_unless_the_caller_says_what_they_are():
    with_missing = pd.DataFrame({"x": pd.array([1, None, 3], dtype="Int64")})
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(OutOfDomainError, match="1 missing value"):
        frame.estimate(with_missing, "x", protocol)
    with pytest.raises(OutOfDomainError, match="missing='drop'"):
        frame.privatize(pl.DataFrame({"x": [1.0, None]}), "x", protocol)
    with pytest.warns(MissingValuesWarning, match="1 missing value"):
        reports = frame.privatize(pl.DataFrame({"x": [1.0, None]}), "x", protocol, missing="drop")
    assert len(reports) == 1  # that user sent no report
    dropped = frame.estimate(with_missing, "x", protocol, missing="drop", rng=0)
    assert dropped.n == 2 and any("a user without a value sent no report" in note for note in dropped.notes())
    frame.release(with_missing, "x", central.cdf, epsilon=1.0, bounds=(0, 4), rng=0, missing="drop")


def test_a_central_group_by_refuses_or_leaves_out_rows_without_a_key_and_never_states_their_count():
    """Rows whose key is missing vanished without a word; a central group-by's count is private."""
    table = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "key": ["a", None, "b", "a"]})
    release = {"epsilon": 1.0, "bounds": (0.0, 1.0), "rng": 0}
    with pytest.raises(MissingValuesError) as refused:
        frame.group_release(table, "x", "key", central.cdf, groups=["a", "b"], **release)
    assert refused.value.count == 1 and "1 " not in str(refused.value)
    with pytest.warns(MissingValuesWarning) as warned:
        grouped = frame.group_release(table, "x", "key", central.cdf, groups=["a", "b"], missing_keys="drop", **release)
    assert grouped.dropped is None and [w.message.count for w in warned if w.category is MissingValuesWarning] == [1]
    mine = frame.group_release(table, "x", "key", central.cdf, groups=["a", "b", None], missing_keys="group", **release)
    assert list(mine.keys()) == ["a", "b", None]


def test_malformed_report_columns_are_refused():
    protocol = local.make("oue", epsilon=1.0, domain_size=8)
    with pytest.raises(MalformedReportError, match="rows of 1 bytes"):
        frame.aggregate(pd.DataFrame({"report": [b"\x01\x02"]}), "report", protocol)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    aggregate = frame.aggregate(pd.DataFrame({"report": [0, 1, 9]}), "report", grr)  # 9 is out of range
    assert aggregate.n == 2 and sum(aggregate.rejected.values()) == 1


def test_importing_dpdist_frame_imports_no_engine_and_not_narwhals():
    code = ("import sys, dpdist, dpdist.frame; "
            "print(*(name in sys.modules for name in ('narwhals', 'pandas', 'polars', 'pyarrow', 'duckdb', 'pyspark')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == [
        "False"] * 6


def test_a_session_is_charged_only_for_a_column_that_is_randomized():
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    session = BudgetSession(1.5)
    with pytest.raises(OutOfDomainError):  # a missing value: nothing randomized, nothing charged
        frame.privatize(pd.DataFrame({"x": [1.0, None]}), "x", protocol, session=session)
    with pytest.raises(OutOfDomainError):
        frame.group_estimate(pd.DataFrame({"x": [1.0, None], "g": ["a", "b"]}), "x", "g", protocol, session=session)
    assert session.charges == ()
    frame.privatize(pd.DataFrame({"x": [1, 2]}), "x", protocol, session=session)
    with pytest.raises(PrivacyBudgetError, match="0.5 left"):
        frame.privatize(pd.DataFrame({"x": [1, 2]}), "x", protocol, session=session)


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_uint64_ids_of_2_to_the_63_and_more_are_persons_by_exact_value(engine):
    """A Polars UInt64 id column holding 2**63 or more was refused by an engine
    error that printed the raw ids, and pandas wrapped them to negative int64. Now they are read exactly (uint64)."""
    ids = np.array([2**64 - 1] * 4 + [2**63] * 3 + [5] * 2 + [2**63 - 1], dtype=np.uint64)
    columns = {"id": ids, "v": np.linspace(0, 1, ids.size)}
    table = pl.DataFrame(columns) if engine == "polars" else pd.DataFrame(columns)
    with pytest.warns(ContributionBoundWarning) as warned:
        released = frame.release(table, "v", central.cdf, epsilon=1.0, bounds=(0, 1), privacy_id="id",
                                 max_contributions=1, rng=1)
    assert released.guarantee.unit == "person" and [w.message.count for w in warned] == [ids.size - 4]


def test_a_refusal_of_the_ids_names_the_id_column_not_the_values_column():
    """``frame.release`` prefixed an id refusal with the values column."""
    table = pd.DataFrame({"v": np.linspace(0, 1, 4), "customer": [1, "a", 2, "b"]})
    with pytest.raises(InvalidValueTypeError, match=r"^Column 'customer': The 'privacy_id' argument of cdf"):
        frame.release(table, "v", central.cdf, epsilon=1.0, bounds=(0, 1), privacy_id="customer", max_contributions=1)
