"""The conformance checks: one function per promise of the local-protocol contract.

Every check takes a protocol instance (a *small* one: the privacy checks
enumerate its channel) and returns ``None`` or raises ``AssertionError`` naming
the broken promise.  :func:`checks_for` lists the checks a protocol's tags call
for, cheapest first.  The statistical checks are seeded, so they are
deterministic, and run at level :data:`~dpdist.testing.ALPHA` with Bonferroni
corrections, so a correct protocol fails one for a given seed with probability
about one in a million.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import warnings
from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np

from ..errors import (
    ClippedValuesWarning,
    MissingValuesError,
    MissingValuesWarning,
    DPDistError,
    EmptyAggregateError,
    IncompatibleStateError,
    InvalidParameterError,
    InvalidValueTypeError,
    MalformedReportError,
    OutOfDomainError,
)
from ..local import Aggregator, LocalProtocol, from_config
from ..local._registry import registered_class
from ..local.keyvalue import KeyValueSets

if TYPE_CHECKING:
    from ..local.frequency._memoized import MemoizedProtocol
from ._declared import (
    check_maximum_likelihood_is_the_maximum,
    check_reports_support_a_fixed_number_of_items,
    check_words_are_randomized_as_their_items,
)
from ._inputs import channel_inputs, domain_size, population, record_attributes
from ._over_time import (
    all_histories,
    history_log_laws,
    largest_loss,
    largest_reports,
    memo_channels,
)
from ._statistics import (
    assert_channel_is_stochastic,
    assert_epsilon_ldp,
    assert_privatize_samples_channel,
    assert_simulate_matches_privatize,
    assert_unbiased_with_analytic_variance,
    privatize_population,
)

__all__ = [
    "Check",
    "checks_for",
    "check_config_round_trip",
    "check_state_round_trip",
    "check_unknown_parameter_is_rejected",
    "check_invalid_parameters_are_rejected",
    "check_values_outside_the_domain_are_rejected",
    "check_values_outside_the_bounds_are_clipped",
    "check_values_of_the_wrong_type_are_rejected",
    "check_refusals_show_no_value",
    "check_unreadable_reports_are_rejected",
    "check_reports_conform_to_the_declared_format",
    "check_empty_aggregator_is_refused",
    "check_estimate_options_are_declared",
    "check_estimate_states_the_guarantee",
    "check_privatize_is_reproducible_and_secure",
    "check_merge_in_any_order",
    "check_merge_of_another_config_is_refused",
    "check_channel_is_epsilon_ldp",
    "check_privatize_samples_the_channel",
    "check_privatize_samples_the_channel_with_a_32_bit_generator",
    "check_unbiased_with_the_analytic_variance",
    "check_simulate_matches_privatize",
    "check_reports_over_time",
    "check_attribute_guarantee",
    "check_reports_support_a_fixed_number_of_items",
    "check_maximum_likelihood_is_the_maximum",
    "check_words_are_randomized_as_their_items",
]

Check = Callable[[LocalProtocol], None]


def _aggregate(protocol, values, rng) -> Aggregator:
    return protocol.aggregator().add(privatize_population(protocol, values, rng=rng), on_invalid="raise")


def _is_registered(protocol) -> bool:
    """Whether ``local.from_config`` rebuilds this very class (a subclass under a borrowed name is not)."""
    return registered_class(protocol.name) is type(protocol)


def _expect(error: type[BaseException], what: str, call, *, match: str | None = None) -> None:
    """``call()`` must raise ``error`` (whose message contains ``match``)."""
    try:
        call()
    except error as raised:
        if match is not None and match not in str(raised):
            raise AssertionError(f"{what}: raised {error.__name__} without naming {match!r}: {raised}") from None
        return
    except Exception as raised:  # noqa: BLE001 - the wrong exception is the finding
        raise AssertionError(f"{what}: raised {type(raised).__name__} ({raised}), expected {error.__name__}") from None
    raise AssertionError(f"{what}: nothing was raised, expected {error.__name__}")


# ---------------------------------------------------------------------- round trips
def check_config_round_trip(protocol: LocalProtocol) -> None:
    """``config()`` is JSON-safe and rebuilds an equal protocol (via the registry when registered)."""
    config = json.loads(json.dumps(protocol.config()))
    assert config["protocol"] == protocol.name, f"config names {config['protocol']!r}, not {protocol.name!r}"
    params = {k: v for k, v in config.items() if k not in ("protocol", "version")}
    try:
        rebuilt = type(protocol)(**params)
    except DPDistError as error:
        raise AssertionError(f"{type(protocol).__name__}(**config) fails: {error}") from None
    assert rebuilt == protocol, f"{type(protocol).__name__}(**config) gives {rebuilt!r}, not {protocol!r}"
    assert rebuilt.config() == protocol.config(), "config of the rebuilt protocol differs"
    if _is_registered(protocol):
        assert from_config(config) == protocol, "local.from_config(config) does not rebuild the protocol"


def check_state_round_trip(protocol: LocalProtocol) -> None:
    """``Aggregator.to_dict`` survives JSON and ``from_dict`` rebuilds an equal aggregator."""
    aggregator = _aggregate(protocol, population(protocol, 200), rng=1)
    state = json.loads(json.dumps(aggregator.to_dict()))
    assert Aggregator.from_dict(state, protocol) == aggregator, "from_dict(to_dict()) differs from the aggregator"
    if _is_registered(protocol):
        assert Aggregator.from_dict(state) == aggregator, "from_dict without the protocol differs"


# ---------------------------------------------------------------------- bad input
def check_unknown_parameter_is_rejected(protocol: LocalProtocol) -> None:
    """An unknown constructor parameter raises ``InvalidParameterError`` saying "unknown"."""
    _expect(
        InvalidParameterError,
        "an unknown parameter",
        lambda: type(protocol)(**protocol.params, not_a_parameter=1),
        match="unknown",
    )


def check_invalid_parameters_are_rejected(protocol: LocalProtocol) -> None:
    """Every invalid example of every constraint raises the constraint's error naming the parameter."""
    for key, constraint in type(protocol)._constraints.items():
        for bad in constraint.invalid_examples():
            _expect(
                constraint.error,
                f"parameter {key}={bad!r}",
                lambda bad=bad, key=key: type(protocol)(**{**protocol.params, key: bad}),
                match=key,
            )


def _values_outside_the_domain(protocol) -> list:
    if protocol.tags.takes_items:
        return [[protocol.domain_size], [-1], [0, 1, protocol.domain_size + 5]]
    if protocol.tags.kind == "multi":
        return _records_outside_the_domain(protocol)
    if protocol.tags.kind == "key_value":
        return _sets_outside_the_domain(protocol)
    lo, hi = protocol.bounds
    return [[hi + 1.0], [lo - 1e-3], [math.nan], [math.inf]]


def _records_outside_the_domain(protocol) -> list:
    """Records with one attribute outside its domain (an item past the end, -1; a real outside the bounds, NaN)."""
    out = []
    for j, attribute in enumerate(protocol.attributes):
        if attribute.categorical:
            bad = [attribute.domain_size, -1]
        else:
            lo, hi = attribute.bounds
            bad = [hi + 1.0, math.nan]
        for value in bad:
            records = np.array(population(protocol, 3), dtype=np.float64)
            records[1, j] = value
            out.append(records)
    return out


def _sets_outside_the_domain(protocol) -> list:
    """Sets with a value above 1, below -1 or infinite, and a key past the domain (a :class:`KeyValueSets`)."""
    out: list[Any] = []
    for value in (1.5, -1.0 - 1e-9, math.inf):
        sets = np.array(population(protocol, 3), dtype=np.float64)
        sets[1, 0] = value
        out.append(sets)
    out.append(KeyValueSets(np.array([0, domain_size(protocol)]), np.array([0.5, 0.5]), np.array([1, 1])))
    return out


def _clips(protocol) -> bool:
    """Whether ``privatize`` and ``simulate`` take ``clip`` (the numerical protocols of dpdist do)."""
    return all("clip" in inspect.signature(method).parameters for method in (protocol.privatize, protocol.simulate))


def check_values_outside_the_domain_are_rejected(protocol: LocalProtocol) -> None:
    """``privatize`` and ``simulate`` refuse values outside the items (or the bounds, with ``clip=False``)
    with ``OutOfDomainError``."""
    strict = {"clip": False} if _clips(protocol) else {}
    for values in _values_outside_the_domain(protocol):
        _expect(
            OutOfDomainError, f"privatize({values}, {strict})", lambda v=values: protocol.privatize(v, rng=0, **strict),
            match="values",
        )
        _expect(OutOfDomainError, f"simulate({values}, {strict})", lambda v=values: protocol.simulate(v, rng=0, **strict))


def check_values_outside_the_bounds_are_clipped(protocol: LocalProtocol) -> None:
    """With ``clip=True`` (the default) a value outside the bounds is randomized exactly as the bound it is
    clipped to, and a ``ClippedValuesWarning`` gives the count; a missing value (NaN) is refused unless
    ``missing=`` says what it is (``MissingValuesError``; given ``lo``, it is randomized as ``lo`` with a
    ``MissingValuesWarning``); nothing else changes."""
    lo, hi = cast(Any, protocol).bounds  # a numerical protocol (tags.kind) has bounds
    inside = np.linspace(lo, hi, 7)
    outside = np.concatenate([inside, [hi + 1.0, lo - 1e-3, math.nan, math.inf, -math.inf]])
    clipped = np.concatenate([inside, [hi, lo, lo, hi, lo]])
    for method in ("privatize", "simulate"):
        _expect(MissingValuesError, f"{method} of a NaN without missing=",
                lambda m=method: getattr(protocol, m)(outside, rng=13), match="has 1 missing value(s)")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = getattr(protocol, method)(outside, rng=13, missing=lo)
        expected = getattr(protocol, method)(clipped, rng=13, clip=False)
        if method == "simulate":
            got, expected = got.statistic, expected.statistic
        assert np.array_equal(np.asarray(got), np.asarray(expected)), (
            f"{method} of values outside the bounds differs from {method} of the clipped values (same seed)"
        )
        counts = [str(w.message) for w in caught if issubclass(w.category, ClippedValuesWarning)]
        assert len(counts) == 1 and " 4 of 12 " in counts[0], (
            f"{method} must warn once with the count of clipped values (4 of 12); got {counts}"
        )
        missing = [w.message for w in caught if issubclass(w.category, MissingValuesWarning)]
        assert len(missing) == 1 and cast(Any, missing[0]).count == 1, (
            f"{method} must warn once with the count of missing values (1); got {missing}")


def check_values_of_the_wrong_type_are_rejected(protocol: LocalProtocol) -> None:
    """Non-integral items, strings and 2-D arrays raise ``InvalidValueTypeError`` naming ``values``."""
    if protocol.tags.kind == "multi":
        bad = _records_of_the_wrong_type(protocol)
    elif protocol.tags.kind == "key_value":  # a row of one key too many, a 3-D array, strings
        d = domain_size(protocol)
        bad = [np.zeros((2, d + 1)), np.zeros((2, d, 2)), np.full((2, d), "a")]
    else:
        bad = [np.array([0.5, 1.5])] if protocol.tags.takes_items else [np.array(["a", "b"])]
        bad.append(np.zeros((2, 2), dtype=int))
    for values in bad:
        _expect(
            InvalidValueTypeError,
            f"privatize of a {values.dtype} array of shape {values.shape}",
            lambda v=values: protocol.privatize(v, rng=0),
            match="values",
        )


def _records_of_the_wrong_type(protocol) -> list:
    """A 1-D array, a 3-D array, rows of one column too many, and a fraction in a categorical column."""
    k = len(protocol.attributes)
    records = np.array(population(protocol, 2), dtype=np.float64)
    bad = [np.zeros(k + 1), np.zeros((2, k, 2)), np.zeros((2, k + 1))]
    categorical = [j for j, attribute in enumerate(protocol.attributes) if attribute.categorical]
    if categorical:
        fraction = records.copy()
        fraction[0, categorical[0]] = 0.5
        bad.append(fraction)
    return bad


#: what the refused inputs of :func:`check_refusals_show_no_value` are marked with
_MARKS = ("73519", "hovercraft", "\u0416")


def _marked_inputs(protocol) -> list[tuple[Any, Callable[[], Any]]]:
    """``(protocol, values)`` pairs ``privatize`` refuses, each holding a marked value: out of the domain or the bounds,
    of the wrong kind, an unknown label or word (``values`` a function making them: a key-value set built from pairs
    is refused as it is built)."""
    tags = protocol.tags
    if tags.takes_items:
        d = domain_size(protocol)
        cases: list[tuple[Any, Callable[[], Any]]] = [
            (protocol, lambda: [0, d + 73519]), (protocol, lambda: [-73519]), (protocol, lambda: [0.0, 73519.5]),
            (protocol, lambda: ["hovercraft-73519"])]
        if tags.words:
            cases.append((protocol, lambda: ["hovercraft\u0416"]))
        if "labels" in protocol.params and d <= 64:
            labelled = type(protocol)(**{**protocol.params, "labels": [f"l{item}" for item in range(d)]})
            cases.append((labelled, lambda: ["l0", "hovercraft-73519"]))
        return cases
    if tags.kind == "multi":
        cases = []
        for j, attribute in enumerate(record_attributes(protocol)):
            records = np.array(population(protocol, 3), dtype=np.float64)
            records[1, j] = attribute.domain_size + 73519 if attribute.categorical else attribute.bounds[1] + 73519.5
            cases.append((protocol, functools.partial(np.copy, records)))
        return cases
    if tags.kind == "key_value":
        d = domain_size(protocol)
        dense = np.array(population(protocol, 3), dtype=np.float64)
        dense[1, 0] = 73519.5
        return [(protocol, lambda: dense), (protocol, lambda: KeyValueSets(np.array([0, d + 73519]), np.array([0.5, 0.5]),
                                                                            np.array([1, 1]))),
                (protocol, lambda: KeyValueSets.from_pairs([{0: "hovercraft-73519"}])),
                (protocol, lambda: KeyValueSets.from_pairs([[(0, 0.5, 73519)]]))]
    lo, hi = cast(Any, protocol).bounds
    return [(protocol, lambda: [hi + 73519.5]), (protocol, lambda: [lo - 73519.5]), (protocol, lambda: [lo, 73519 * 10**400]),
            (protocol, lambda: np.array(["hovercraft-73519"]))]


def _texts(error: BaseException) -> list[str]:
    """The text of ``error`` and of the exceptions it was raised from or during."""
    texts: list[str] = []
    raised: BaseException | None = error
    while raised is not None and len(texts) < 100:
        texts += [str(raised), *map(str, raised.args)]
        raised = raised.__cause__ or raised.__context__
    return texts


def check_refusals_show_no_value(protocol: LocalProtocol) -> None:
    """A refusal of ``privatize`` (a value out of the domain or the bounds, of the wrong kind, an unknown label or word)
    shows none of the values it was given, nor do its warnings: a value given to a protocol is a person's, and the
    text of an error travels (a phone's crash reporter, a log).  It says how many and where the first is."""
    strict = {"clip": False} if _clips(protocol) else {}
    for owner, values in _marked_inputs(protocol):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                owner.privatize(values(), rng=0, **strict)
            except DPDistError as raised:
                texts = _texts(raised)
            else:
                raise AssertionError(f"privatize of a marked value outside {owner.name}'s domain raised nothing")
        texts += [str(warning.message) for warning in caught]
        shown = [text for text in texts if any(mark in text for mark in _MARKS)]
        assert not shown, f"a refusal of {owner.name}.privatize shows the value it was given: {shown[0]}"


def check_unreadable_reports_are_rejected(protocol: LocalProtocol) -> None:
    """A batch that is not reports at all raises ``MalformedReportError``."""
    for reports in (np.zeros((2, 2, 2)), "reports"):
        _expect(MalformedReportError, f"add({reports!r})", lambda r=reports: protocol.aggregator().add(r))


def check_reports_conform_to_the_declared_format(protocol: LocalProtocol) -> None:
    """``privatize`` writes exactly the declared ``report_format``: its dtype and row shape, no row it rejects;
    ``describe()`` is JSON that states them, and the reports survive the format's JSON rows unchanged."""
    report_format = protocol.report_format
    assert report_format.kind != "undeclared", (
        "the protocol declares no report format (LocalProtocol._report_format): its reports have no wire format"
    )
    n = 300
    reports = np.asarray(privatize_population(protocol, population(protocol, n), rng=17))
    assert reports.dtype == report_format.dtype, f"privatize returns dtype {reports.dtype}, the format declares {report_format.dtype}"
    assert reports.shape == (n, *report_format.row_shape), (
        f"privatize returns shape {reports.shape}, the format declares rows of shape {report_format.row_shape}"
    )
    batch = protocol.validate_reports(reports)
    assert batch.n_valid == n, f"the declared format rejects {batch.n_rejected_rows} of {n} privatized reports: {batch.rejected}"
    description = json.loads(json.dumps(report_format.describe()))
    stated = (description["kind"], description["dtype"], tuple(description["row_shape"]))
    descr = json.loads(json.dumps(np.lib.format.dtype_to_descr(reports.dtype)))  # JSON: tuples become lists
    assert stated == (report_format.kind, descr, reports.shape[1:]), (
        f"describe() states {stated}, not the reports' dtype and row shape"
    )
    rows = json.loads(json.dumps(report_format.to_json_rows(reports)))
    array, invalid = report_format.from_json_rows(rows, booleans=False)
    unread = {reason: int(mask.sum()) for reason, mask in invalid.items() if mask.any()}
    assert not unread and np.array_equal(array, reports), f"the reports do not survive their JSON rows ({unread})"


def check_estimate_states_the_guarantee(protocol: LocalProtocol) -> None:
    """``estimate`` returns a result whose ``guarantee`` is the protocol's (local, pure)."""
    guarantee = protocol.guarantee
    assert guarantee.model == "local" and guarantee.pure, f"a local randomizer must state pure LDP, got {guarantee}"
    result = protocol.estimate(_aggregate(protocol, population(protocol, 200), rng=2))
    assert getattr(result, "guarantee", None) == guarantee, (
        f"the estimate states {getattr(result, 'guarantee', None)}, the protocol {guarantee}"
    )


def check_estimate_options_are_declared(protocol: LocalProtocol) -> None:
    """``estimate`` options are data: declared in ``estimate_options``, checked, unknown ones refused.

    Every keyword-only option of ``_estimate`` is in the table; an unknown
    option and every invalid example of every declared option raise
    ``InvalidParameterError`` naming the option.
    """
    table = type(protocol).estimate_options
    signature = inspect.signature(type(protocol)._estimate).parameters.values()
    keywords = {p.name for p in signature if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords <= set(table), f"options of _estimate not declared in estimate_options: {sorted(keywords - set(table))}"
    aggregator = _aggregate(protocol, population(protocol, 200), rng=3)
    _expect(
        InvalidParameterError,
        "estimate(..., not_an_option=1)",
        lambda: protocol.estimate(aggregator, not_an_option=1),
        match="not_an_option",
    )
    for name, constraint in table.items():
        for bad in constraint.invalid_examples():
            if bad is None:
                continue
            _expect(
                InvalidParameterError,
                f"estimate option {name}={bad!r}",
                lambda bad=bad, name=name: protocol.estimate(aggregator, **{name: bad}),
                match=name,
            )


def check_empty_aggregator_is_refused(protocol: LocalProtocol) -> None:
    """``estimate`` of an aggregator holding no report raises ``EmptyAggregateError``."""
    _expect(EmptyAggregateError, "estimate of an empty aggregator", lambda: protocol.estimate(protocol.aggregator()))


# ---------------------------------------------------------------------- randomness and merging
def check_privatize_is_reproducible_and_secure(protocol: LocalProtocol) -> None:
    """A seed reproduces the reports; ``secure=True`` gives valid reports and refuses a seed."""
    values = population(protocol, 500)
    first, second = privatize_population(protocol, values, rng=11), privatize_population(protocol, values, rng=11)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second), err_msg="same seed, different reports")
    secure = protocol.aggregator().add(privatize_population(protocol, values, secure=True), on_invalid="raise")
    assert secure.n == len(values) and not secure.rejected, f"secure reports: n={secure.n}, {secure.rejected}"
    _expect(
        InvalidParameterError, "privatize with a seed and secure=True",
        lambda: privatize_population(protocol, values, rng=1, secure=True), match="secure",
    )


def check_merge_in_any_order(protocol: LocalProtocol) -> None:
    """Merging the aggregators of three shards, in either order, equals aggregating their union."""
    values = population(protocol, 1500)
    reports = privatize_population(protocol, values, rng=21)
    parts = np.random.default_rng(22).integers(0, 3, size=len(values))
    union = protocol.aggregator().add(reports)
    shards = [protocol.aggregator().add(protocol.report_format.select(reports, parts == k)) for k in range(3)]
    forward = shards[0].copy().merge(shards[1]).merge(shards[2])
    backward = shards[2].copy().merge(shards[1].copy().merge(shards[0]))
    assert forward == union, "merging shards 0, 1, 2 differs from the aggregate of the union"
    assert backward == union, "merging shards 2, (1, 0) differs from the aggregate of the union"
    assert union.copy().merge(protocol.aggregator()) == union, "merging an empty aggregator changed the state"


def _with_another_epsilon(protocol):
    for epsilon in (protocol.epsilon * 2, protocol.epsilon / 2):
        try:
            return type(protocol)(**{**protocol.params, "epsilon": epsilon})
        except InvalidParameterError:
            continue
    raise AssertionError(f"{protocol!r}: neither twice nor half its epsilon is accepted")


def check_merge_of_another_config_is_refused(protocol: LocalProtocol) -> None:
    """States of another configuration cannot be merged or estimated (``IncompatibleStateError``)."""
    other = _with_another_epsilon(protocol)
    _expect(
        IncompatibleStateError, "merge of another config",
        lambda: protocol.aggregator().merge(other.aggregator()), match="config",
    )
    aggregator = _aggregate(other, population(other, 50), rng=0)
    _expect(IncompatibleStateError, "estimate of another config's aggregator", lambda: protocol.estimate(aggregator))


# ---------------------------------------------------------------------- privacy
def check_channel_is_epsilon_ldp(protocol: LocalProtocol) -> None:
    """Exact: the channel is stochastic and every output's probability ratio is within the stated guarantee.

    The guarantee is ``protocol.guarantee`` (a pure, local
    :class:`~dpdist.privacy.PrivacyGuarantee`): the claim as a value is what is proved.
    """
    guarantee = protocol.guarantee
    assert guarantee.model == "local" and guarantee.pure, f"a local randomizer must state pure LDP, got {guarantee}"
    channel = protocol.channel(channel_inputs(protocol))
    assert_channel_is_stochastic(channel)
    assert_epsilon_ldp(channel, guarantee.epsilon)


#: cells of the largest joint law (key histories x output sequences) the over-time check enumerates
_OVER_TIME_CELLS = 1 << 22


def check_reports_over_time(protocol: LocalProtocol) -> None:
    """Exact: one device's T reports through its memo never lose more than the protocol states.

    For every T whose joint law fits (:data:`_OVER_TIME_CELLS` cells; T = 10 for two keys
    and two outputs), the law of T reports is computed for *every* history of memo keys
    (values that change included) and every output sequence
    (``dpdist.testing._over_time``).  The largest loss between any two histories must be at
    most ``epsilon_over_changes(T)`` (the ``"history"`` relation), and between two constant
    histories at most ``stable_guarantee.epsilon`` (the ``"stable"`` relation).  A protocol
    without a second randomization (``epsilon_instantaneous`` infinite) must not claim a
    finite bound beyond one report.
    """
    protocol = cast("MemoizedProtocol", protocol)  # tags.memoized: it states its guarantees over time
    stable = protocol.stable_guarantee.epsilon
    if math.isinf(protocol.epsilon_instantaneous):
        assert math.isinf(protocol.epsilon_over_changes(2)), (
            f"{protocol.name} repeats its memo as it is: two reports show whether the value changed, so it may "
            f"not claim epsilon_over_changes(2) = {protocol.epsilon_over_changes(2)!r}"
        )
        return
    permanent, instantaneous = memo_channels(protocol)
    keys, outputs = permanent.shape[0], instantaneous.shape[1]
    for reports in range(1, largest_reports(keys, outputs, _OVER_TIME_CELLS) + 1):
        laws = history_log_laws(permanent, instantaneous, all_histories(keys, reports))
        claimed = protocol.epsilon_over_changes(reports)
        loss = largest_loss(laws)
        assert loss <= claimed * (1 + 1e-9) + 1e-12, (
            f"{protocol.name}: {reports} reports of one device lose {loss:.6g} between two histories of values, "
            f"above the stated epsilon_over_changes({reports}) = {claimed:.6g}"
        )
        constant = np.repeat(np.arange(keys)[:, None], reports, axis=1)
        constant_laws = history_log_laws(permanent, instantaneous, constant)
        loss = largest_loss(constant_laws)
        assert loss <= stable * (1 + 1e-9) + 1e-12, (
            f"{protocol.name}: {reports} reports of an unchanged value lose {loss:.6g}, above the stated "
            f"stable guarantee {stable:.6g}"
        )


def check_attribute_guarantee(protocol: LocalProtocol) -> None:
    """Exact: records that differ in one attribute are within the stated ``attribute_guarantee``.

    For a multi-attribute protocol (``tags.kind == "multi"``), the channel rows of every
    pair of :func:`channel_inputs` records that differ in exactly one attribute have
    probability ratios at most ``e ** attribute_guarantee.epsilon`` (``"attribute"``
    relation), which must not exceed the record-level ``guarantee``.
    """
    stated = cast(Any, protocol).attribute_guarantee
    assert stated.neighbouring == "attribute" and stated.model == "local" and stated.pure, (
        f"the attribute-level guarantee must be pure local LDP under 'attribute', got {stated}"
    )
    assert stated.epsilon <= protocol.guarantee.epsilon * (1 + 1e-12), (
        f"an attribute-level epsilon {stated.epsilon} above the record-level {protocol.guarantee.epsilon} is no guarantee"
    )
    inputs = channel_inputs(protocol)
    log_channel = np.log(protocol.channel(inputs))
    for j in range(inputs.shape[1]):
        others = np.delete(inputs, j, axis=1)
        _, group = np.unique(others, axis=0, return_inverse=True)
        for label in np.unique(group):
            rows = log_channel[group.ravel() == label]
            loss = float(np.max(rows.max(axis=0) - rows.min(axis=0)))
            assert loss <= stated.epsilon * (1 + 1e-9) + 1e-9, (
                f"records differing in attribute {record_attributes(protocol)[j].name!r} lose {loss:.6g}, above the stated "
                f"attribute-level epsilon {stated.epsilon:.6g}"
            )


def _reports_per_input(protocol, low: int, high: int, per_output: int) -> int:
    outputs = protocol.channel(channel_inputs(protocol)[:1]).shape[1]
    return min(high, max(low, per_output * outputs))


def check_privatize_samples_the_channel(protocol: LocalProtocol) -> None:
    """Chi-square: ``privatize`` of each input follows that input's channel row."""
    n = _reports_per_input(protocol, 20_000, 200_000, 50)
    assert_privatize_samples_channel(protocol, channel_inputs(protocol), n_per_input=n, rng=3)


def check_privatize_samples_the_channel_with_a_32_bit_generator(protocol: LocalProtocol) -> None:
    """The same with MT19937, whose raw words are 32 bits: samplers must not assume 64-bit words."""
    n = _reports_per_input(protocol, 10_000, 100_000, 30)
    generator = np.random.Generator(np.random.MT19937(4))
    assert_privatize_samples_channel(protocol, channel_inputs(protocol), n_per_input=n, rng=generator)


# ---------------------------------------------------------------------- statistics
def check_unbiased_with_the_analytic_variance(protocol: LocalProtocol) -> None:
    """Repeated estimates average to the truth with the spread ``protocol.variance`` promises."""
    assert_unbiased_with_analytic_variance(protocol, rng=5)


def check_simulate_matches_privatize(protocol: LocalProtocol) -> None:
    """``simulate`` gives statistics with the means and variances of privatize + aggregate."""
    assert_simulate_matches_privatize(protocol, rng=9)


_ALWAYS: tuple[Check, ...] = (
    check_config_round_trip,
    check_state_round_trip,
    check_unknown_parameter_is_rejected,
    check_invalid_parameters_are_rejected,
    check_values_outside_the_domain_are_rejected,
    check_values_of_the_wrong_type_are_rejected,
    check_refusals_show_no_value,
    check_unreadable_reports_are_rejected,
    check_reports_conform_to_the_declared_format,
    check_empty_aggregator_is_refused,
    check_estimate_options_are_declared,
    check_estimate_states_the_guarantee,
    check_privatize_is_reproducible_and_secure,
    check_merge_in_any_order,
    check_merge_of_another_config_is_refused,
)
_FINITE_CHANNEL: tuple[Check, ...] = (
    check_channel_is_epsilon_ldp,
    check_privatize_samples_the_channel,
    check_privatize_samples_the_channel_with_a_32_bit_generator,
)


def checks_for(protocol: LocalProtocol) -> list[Check]:
    """The checks ``protocol.tags`` call for, cheapest first.

    Every protocol gets the round-trip, bad-input, reproducibility and merge
    checks; ``finite_channel`` adds the exact epsilon check and the chi-square
    tests of ``privatize`` (with a 64-bit and a 32-bit generator);
    ``kind="frequency"`` (or ``"multi"``) with ``unbiased`` adds the bias and variance check;
    ``kind="multi"`` with a finite channel adds the exact check of the attribute-level guarantee;
    ``exact_simulate`` adds the ``simulate`` check; ``memoized`` adds the exact check of
    one device's reports over time; a numerical protocol whose ``privatize`` takes ``clip``
    adds the clipping check; ``fixed_support_size``, ``closed_form_mle`` and ``words`` add
    a check that the protocol does what it declares (:mod:`dpdist.testing._declared`).
    """
    tags = protocol.tags
    checks = list(_ALWAYS)
    if tags.finite_channel:
        checks.extend(_FINITE_CHANNEL)
    if tags.kind == "multi" and tags.finite_channel:
        checks.insert(checks.index(check_channel_is_epsilon_ldp) + 1, check_attribute_guarantee)
    if tags.kind in ("frequency", "multi") and tags.unbiased:
        checks.append(check_unbiased_with_the_analytic_variance)
    if tags.exact_simulate:
        checks.append(check_simulate_matches_privatize)
    if tags.memoized:
        checks.append(check_reports_over_time)
    if tags.kind == "numerical" and _clips(protocol):
        checks.insert(checks.index(check_values_outside_the_domain_are_rejected) + 1, check_values_outside_the_bounds_are_clipped)
    declared = (
        (tags.fixed_support_size, check_reports_support_a_fixed_number_of_items),
        (tags.closed_form_mle, check_maximum_likelihood_is_the_maximum),
        (tags.words, check_words_are_randomized_as_their_items),
    )
    checks.extend(check for is_declared, check in declared if is_declared)
    return checks
