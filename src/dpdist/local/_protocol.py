"""The contract every local-DP protocol follows.

A protocol object is immutable and holds the public parameters that the client
(``privatize``) and the collector (``aggregator``, ``estimate``) share.  Its
parameters are validated once, in the constructor, against the class's
``_constraints`` table.

The server side is :class:`~dpdist.local._aggregator.Aggregator` and the
registry :mod:`dpdist.local._registry`, both below the contract (they know a
protocol only by what they read of it) and re-exported here, with the registry's
builders under their typed names :func:`make` and :func:`from_config`.  This
module does no file I/O: report files and saved states are :mod:`dpdist.io`'s
business.
"""

from __future__ import annotations

import json
import warnings
from abc import ABC, abstractmethod
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from .._guarantee import PrivacyGuarantee, local_guarantee
from .._rng import check_rng
from .._types import ArrayLike, Seed
from .._validation import (  # noqa: F401  (EPSILON: re-exported, it used to live here)
    EPSILON,
    Constraint,
    Options,
    Relation,
    check_options,
    check_params,
    check_relations,
    unknown_names_error,
    validate_params,
)
from ..errors import (
    EachValueANewUserWarning,
    EmptyAggregateError,
    InvalidParameterError,
)
from ._aggregator import Aggregator
from ._registry import (
    CONFIG_VERSION,
    available,
    build,
    describe,
    needs_population_size,
    parameter_names,
    rebuild,
    register,
    stored_defaults,
)
from ._report_format import ON_INVALID, ReportBatch, ReportFormat

#: the method whose values are being checked, as a refusal names it (``privatize``; ``simulate`` while it checks).
#: A context variable rather than an argument of ``_check_values``: protocol authors override that method with the
#: signature ``_check_values(self, values)`` (docs/how-to/prove-a-protocol.md's walk-through), which an added argument would break.
_CHECKED_FOR: ContextVar[str] = ContextVar("dpdist_values_checked_for", default="privatize")

__all__ = [
    "LocalProtocol", "Aggregator", "ReportBatch", "ReportFormat", "ProtocolTags",
    "register", "make", "available", "from_config", "describe", "needs_population_size", "parameter_names",
]


@dataclass(frozen=True)
class ProtocolTags:
    """What a protocol offers; the conformance suite switches checks on these.

    Attributes
    ----------
    kind : {"frequency", "heavy_hitters", "numerical", "multi", "key_value"}
        ``"frequency"``: items 0..d-1, returns a FrequencyEstimate; ``"heavy_hitters"``:
        items 0..d-1 of a domain too large to enumerate (or words), returns the
        :class:`~dpdist.local.HeavyHitters` it finds; ``"numerical"``: reals in bounds,
        returns a Distribution or a mean/variance estimate; ``"multi"``: records of
        several attributes (``protocol.attributes``, :mod:`dpdist.local.multi`), returns
        one estimate per attribute (or marginals, range queries); ``"key_value"``: sets of
        (key, value) pairs of ``domain_size`` keys (:mod:`dpdist.local.keyvalue`), returns each
        key's frequency and mean.
    finite_channel : bool
        ``channel()`` gives the exact output law for small instances.
    exact_simulate : bool
        ``simulate`` samples the aggregate exactly (not privatize + add).
    unbiased : bool
        ``estimate(agg, postprocess="none")`` is an unbiased frequency estimator with the
        analytic ``variance``.
    memoized : bool
        A device reports through a memo of permanent responses (``client()``), and the
        protocol states its guarantees over time (``epsilon_over_changes``,
        ``stable_guarantee``; ``dpdist.local.frequency._memoized``).
    fixed_support_size : bool
        Every report supports the same number of items (``"frequency"`` oracles: GRR one,
        subset selection ``k``), so the support counts sum to a constant and the support
        noise has no power at frequency 0 (paper 001, Theorem 3).
    closed_form_mle : bool
        ``maximum_likelihood(counts)`` gives the maximum-likelihood frequencies in closed
        form, so ``estimate(estimator="mle")`` applies.
    words : bool
        ``privatize`` also takes words (strings over the protocol's ``codec.alphabet``),
        each randomized as the item it encodes to.
    bernoulli_support : bool
        Each report supports each item independently of the other reports, with
        probability exactly ``support_probabilities()[0]`` (p*) if it is its user's
        item and ``[1]`` (q*) otherwise, whatever the population
        (``"frequency"`` oracles: GRR, the unary encodings, local hashing and its
        count-mean-sketch variant OCMS, SS, RWS, L-GRR, L-OSUE), so an item's support
        count lies between Bin(n, q*) and Bin(n, p*) in the stochastic order: the service's poisoning test (``dpdist.serve._diagnostics``).
    independent_bits : bool
        A report is one independent Bernoulli bit per item (unary encodings), so the
        number of bits it sets does not depend on its user's item.
    """

    kind: str = "frequency"
    finite_channel: bool = True
    exact_simulate: bool = False
    unbiased: bool = True
    memoized: bool = False
    fixed_support_size: bool = False
    closed_form_mle: bool = False
    words: bool = False
    bernoulli_support: bool = False
    independent_bits: bool = False

    @property
    def takes_items(self) -> bool:
        """Whether the inputs are items ``0 .. domain_size - 1`` (``"frequency"`` and ``"heavy_hitters"``)."""
        return self.kind in ("frequency", "heavy_hitters")


class ParameterDependentTags:
    """Tags that depend on a protocol's parameters, declared once on the class.

    On the class it is ``base`` (the kind and what every instance offers, which
    the registry lists); on an instance ``refine(instance, base)``.  Protocols
    use it instead of overwriting ``tags`` in their constructor.
    """

    def __init__(self, base: ProtocolTags, refine: Callable[[Any, ProtocolTags], ProtocolTags]):
        self.base, self.refine = base, refine

    def __get__(self, instance: Any, owner: type | None = None) -> ProtocolTags:
        return self.base if instance is None else self.refine(instance, self.base)


class LocalProtocol(ABC):
    """Base class of local-DP protocols.

    Subclasses set ``name``, ``summary``, ``tags``, ``_constraints``, ``_relations``,
    ``_defaults`` and ``estimate_options`` and implement the abstract methods.  Users get instances from
    :func:`make` or :func:`from_config`.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    tags: ClassVar[ProtocolTags] = ProtocolTags()
    _constraints: ClassVar[dict[str, Constraint]] = {}
    #: Rules between parameters (``epsilon_1`` below ``epsilon``), checked after each parameter's own rule.
    _relations: ClassVar[tuple[Relation, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    #: The keyword options of :meth:`estimate` and what each allows, checked in one
    #: place (:meth:`estimate`) like the constructor's ``_constraints``.
    estimate_options: ClassVar[dict[str, Constraint]] = {}
    #: An option of the table that, when given, takes the options outside it and checks them itself.
    estimate_delegate: ClassVar[str | None] = None
    #: Why ``make("auto")`` chose this protocol (set on the protocol it builds; ``None`` otherwise);
    #: :meth:`estimate` copies it into the estimate's ``details["auto_choice"]``.
    auto_choice: dict[str, Any] | None = None

    def __init__(self, **params: Any):
        merged = {**self._defaults, **params}
        unknown = set(params) - set(self._constraints)
        if unknown:  # before the missing ones: make("oue", eps=1) is a misspelt epsilon, not a missing one
            raise unknown_names_error(self.display_name, unknown, self._constraints)
        missing = sorted(set(self._constraints) - set(merged))
        if missing:
            raise InvalidParameterError(
                f"{self.display_name} needs the parameter(s) {missing}; "
                + "; ".join(f"{m!r} must be {self._constraints[m].describe()}" for m in missing)
                + "."
            )
        self._params = check_params(self.display_name, merged, self._constraints)
        check_relations(self.display_name, self._params, self._relations)
        self._check_memory()
        with stored_defaults():  # an inner protocol's config is named by this one's: built as stored configs are
            self._setup()

    # ------------------------------------------------------------------ identity
    @property
    def display_name(self) -> str:
        return self.name.upper()

    @property
    def epsilon(self) -> float:
        return self._params["epsilon"]

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """What the randomizer promises, as a value: pure epsilon-LDP (any two inputs of one user).

        The conformance kit proves it: the exact channel check compares every
        output's probability ratio with ``e ** guarantee.epsilon``.
        """
        return local_guarantee(self.epsilon)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def labels(self) -> tuple[str, ...] | None:
        """The public label of each item, for a protocol with a label domain (a frequency oracle made
        with ``labels``); ``None`` otherwise."""
        return None

    def config(self) -> dict[str, Any]:
        """JSON-safe description; ``local.from_config(proto.config())`` rebuilds the protocol."""
        return {"protocol": self.name, "version": CONFIG_VERSION, **_json_safe(self._params)}

    def __eq__(self, other):
        return type(self) is type(other) and self.config() == other.config()

    def __hash__(self):
        return hash(json.dumps(self.config(), sort_keys=True))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"

    def _setup(self) -> None:
        """Derive internal constants from ``self._params`` (called once)."""

    def _check_memory(self) -> None:
        """Refuse parameters whose largest array would exceed ``MAX_ALLOCATION_BYTES`` (before ``_setup``).

        Protocols whose reports, aggregate or estimate grow with a parameter call
        :func:`dpdist._validation.check_allocation` here.
        """

    # ------------------------------------------------------------------ client side
    def privatize(self, values: ArrayLike, rng: Seed = None, *, secure: bool = False) -> np.ndarray:
        """Randomize each user's value; one report per value.

        A longitudinal (memoized) protocol randomizes each value here as a different
        user and says so with :class:`~dpdist.errors.EachValueANewUserWarning`; one
        device reporting over time keeps its memo in ``protocol.client()``.

        Parameters
        ----------
        values : array_like
            The users' true values (items ``0..d-1``, whole floats such as ``3.0`` included,
            or reals in ``bounds``).
        rng : None, int or Generator
            Randomness for simulation; ignored in favour of a CSPRNG when ``secure``.
        secure : bool
            Draw from AES-CTR keyed by the OS CSPRNG (see :mod:`dpdist._rng`).
        """
        values = self._check_values(values)
        if self.tags.memoized and len(values):


            warnings.warn(
                f"{self.display_name}.privatize randomizes each value as a different user (a fresh permanent "
                "response each): the guarantee over time holds only for a device that keeps its memo. One device "
                "reporting over rounds uses protocol.client() or a dpdist.local.ledger.PrivacyLedger "
                "(dpdist privatize --memo FILE).",
                EachValueANewUserWarning,
                stacklevel=2,
            )
        return self._privatize(values, check_rng(rng, secure=secure, owner=f"{self.display_name}.privatize"))

    @abstractmethod
    def _check_values(self, values) -> np.ndarray: ...

    def _values_owner(self) -> str:
        """Who a refusal of the values names: ``GRR.privatize``, or ``GRR.simulate`` while :meth:`simulate` checks."""
        return f"{self.display_name}.{_CHECKED_FOR.get()}"

    @abstractmethod
    def _privatize(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    # ------------------------------------------------------------------ server side
    @property
    def report_format(self) -> ReportFormat:
        """The declared format of this protocol's reports (:meth:`_report_format`, under the protocol's name), as
        data: dtype, row shape, ``describe()``, read, select, count, JSON rows."""
        cached = vars(self)
        report_format = cached.get("_named_report_format")
        if report_format is None:
            report_format = cached["_named_report_format"] = self._report_format().named(self.display_name)
        return report_format

    def _report_format(self) -> ReportFormat:
        """Declare the reports: a kind of :mod:`dpdist.local._report_kinds` (``ItemReports(d)``, ...).

        Protocol authors implement this (from the parameters, after ``_setup``).
        The base class declares none: such a protocol has no wire format and reads no batch.
        """
        return ReportFormat()

    def client_view(self) -> dict[str, Any]:
        """What a client of another language needs to randomize under this config, as JSON.

        ``config``; ``format``, the declared report format (``report_format.describe()``);
        and ``design``, the constants the randomizer of dpdist's JavaScript client uses,
        derived from the config (``keep``, thresholds, hash ranges, ...).  The collection
        service publishes it with each campaign's config; the JavaScript client checks
        the format and every constant against its own derivation from epsilon and
        refuses a view that differs, so a collector cannot weaken the randomizer.
        """
        return {"config": self.config(), "format": self.report_format.describe(), "design": self._client_design()}

    def _client_design(self) -> dict[str, Any]:
        """The named design constants of :meth:`client_view` (none unless a client implements the protocol)."""
        return {}

    @property
    def _report_dtype(self) -> np.dtype:
        """``report_format.dtype``, the dtype ``_privatize`` returns."""
        return self.report_format.dtype

    def aggregator(self) -> Aggregator[LocalProtocol]:
        """An empty aggregator for reports of this protocol."""
        return Aggregator(self)

    @property
    @abstractmethod
    def statistic_size(self) -> int:
        """Length of the aggregator's sufficient-statistic vector."""

    #: Whether adding a report to the statistic touches only the report's own cells (a count per item it names, per bit
    #: it holds: a ``bincount``), so that :attr:`aggregation_work` is the report's bits rather than the statistic's size.
    counts_report_cells: ClassVar[bool] = False

    @property
    def aggregation_work(self) -> int:
        """Element operations the collector spends adding one report to the statistic, at most: the report's bits when
        :attr:`counts_report_cells` (GRR, HR, the unary and numerical encodings), else the statistic's size.  OLH and its
        kin hash every item for each report (``d`` operations: about 0.7 ms a report at ``d = 10^5``), RWS and SS mark
        ``k`` positions, a protocol of several attributes runs its inner protocols.

        ``dpdist serve`` bounds a batch's work by it (``--max-batch-work``: a batch holds at most that many operations'
        worth of reports), so that one batch cannot hold its committer, and every other campaign's batches, for minutes.
        """
        if self.counts_report_cells:
            return max(1, 8 * int(self.report_format.row_bytes))
        return max(1, int(self.statistic_size))

    @property
    def statistic_dtype(self) -> type:
        """The type of the statistic's entries (counts: int64)."""
        return np.int64

    #: Whether statistic entries may be negative (signed sums such as Haar coefficients).
    statistic_signed: ClassVar[bool] = False

    @property
    def statistic_total_per_report(self) -> int | None:
        """What every report adds to the sum of the statistic's entries when that is the same for all
        reports (1 for a histogram of one output per report, k for k-subset selection), else None.  A
        loaded or merged state whose statistic does not sum to this times ``n`` is refused."""
        return None

    # The reports, over what the format reads: the protocol's own rules (check_reports), the one way a batch is
    # validated (validate_reports) and the sufficient statistic of valid rows (statistic).  Protocol authors declare
    # ``_report_format`` and implement ``_accumulate``; ``_check_reports`` adds checks the declared kind cannot state.
    def check_reports(self, reports: Any) -> tuple[Any, dict[str, np.ndarray]]:
        """Read a batch: the batch in the declared format and, by reason, a mask of its invalid rows
        (``report_format.read``, then the protocol's own checks).

        Raises :class:`~dpdist.errors.MalformedReportError` when the batch as a
        whole cannot be read (wrong type, number of dimensions, width or dtype).
        """
        reports, invalid = self.report_format.read(reports)
        return reports, self._check_reports(reports, invalid)

    def _check_reports(self, reports: Any, invalid: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The protocol's own checks of rows the declared kind read (``invalid``: its masks by reason).

        Returns the masks by reason (``invalid`` with the protocol's reasons added);
        the base class adds none.
        """
        return invalid

    @validate_params({"on_invalid": Options(ON_INVALID)}, owner="LocalProtocol.validate_reports")
    def validate_reports(
        self, reports: Any, *, invalid: dict[str, np.ndarray] | None = None, on_invalid: str = "count"
    ) -> ReportBatch:
        """Check every row of ``reports``; keep the valid ones, count the others by reason.

        The one way reports become a :class:`ReportBatch`, which :meth:`Aggregator.add_batch
        <dpdist.local.Aggregator.add_batch>` adds.

        Parameters
        ----------
        reports
            A batch in the protocol's format.
        invalid : dict[str, ndarray], optional
            Rows already found bad while decoding the batch from a file (wrong
            shape, missing, not representable), by reason; those rows hold
            placeholders and are not counted again under the protocol's reasons.
        on_invalid : {"count", "raise"}
            Count invalid rows in ``rejected`` (default) or raise
            :class:`~dpdist.errors.MalformedReportError` naming the first one.
        """
        reports, found = self.check_reports(reports)
        return self.report_format.batch(reports, found, config=self.config(), decoded=invalid, on_invalid=on_invalid)

    def statistic(self, reports: Any) -> np.ndarray:
        """The sufficient statistic of a batch of *valid* reports (shape ``(statistic_size,)``).

        The reports are not checked: pass ``ReportBatch.reports`` or rows that
        :meth:`check_reports` did not flag.  Summing it over batches gives the
        aggregator's statistic.
        """
        return self._accumulate(reports)

    @abstractmethod
    def _accumulate(self, reports) -> np.ndarray:
        """Sufficient statistic of a batch of valid reports (shape ``(statistic_size,)``)."""

    def _check_statistic(self, statistic: np.ndarray, n: int) -> str | None:
        """Why ``statistic`` cannot come from ``n`` reports (None if it can); for loading states.

        Called by the state validator (:mod:`dpdist.local._state_validation`) after
        the checks every protocol shares (finite, integral, ``|entry| <= n``,
        non-negative unless :attr:`statistic_signed`, the sum declared by
        :attr:`statistic_total_per_report`).  Protocols whose statistic has more
        structure (per-row or per-level counts) say here what no ``n`` reports can
        produce, as precisely as the statistic alone allows.
        """
        return None

    def simulate(self, values: ArrayLike, rng: Seed = None) -> Aggregator[LocalProtocol]:
        """An aggregator distributed exactly as one that added ``privatize(values)``.

        Protocols with an exact aggregate sampler override :meth:`_simulate`
        (then the cost does not grow with the number of users).
        """
        called = _CHECKED_FOR.set("simulate")  # a refusal of the values names simulate, not privatize
        try:
            values = self._check_values(values)
        finally:
            _CHECKED_FOR.reset(called)
        generator = check_rng(rng, owner=f"{self.display_name}.simulate")
        aggregator = self.aggregator()
        statistic = self._simulate(values, generator)
        aggregator._add_statistic(statistic, self._count_values(values))
        return aggregator

    def _count_values(self, values) -> int:
        return len(values)

    def _simulate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        for start in range(0, len(values), self._simulate_chunk):
            statistic += self._accumulate(self._privatize(values[start : start + self._simulate_chunk], rng))
        return statistic

    @property
    def _simulate_chunk(self) -> int:
        """Users per privatized chunk of the default ``_simulate``."""
        return 1 << 16

    def estimate(self, data: Aggregator[Any] | ArrayLike, **options: Any) -> Any:
        """Estimate from an :class:`Aggregator` or a batch of reports.

        Options are protocol-specific (e.g. ``postprocess="norm-sub"``), declared in
        :attr:`estimate_options`; an unknown option or a value outside its
        constraint raises :class:`~dpdist.errors.InvalidParameterError`.
        """
        options = check_options(
            f"{self.display_name}.estimate", options, self.estimate_options, self.estimate_delegate
        )
        aggregator = data if isinstance(data, Aggregator) else self.aggregator().add(data, on_invalid="raise")
        aggregator._check_protocol(self)
        if aggregator.n == 0:
            raise EmptyAggregateError(
                f"{self.display_name}.estimate needs at least one report; the aggregator holds none."
            )
        estimate = self._estimate(aggregator, **options)
        if self.auto_choice is not None:
            estimate.details["auto_choice"] = self.auto_choice
        return estimate

    @abstractmethod
    def _estimate(self, aggregator: "Aggregator", *args: Any, **options: Any) -> Any:
        """The estimate of an aggregator holding reports, under the options of :attr:`estimate_options`
        (already checked; a protocol declares the ones it takes as keywords)."""

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Analytic variance of the unbiased estimator for ``n`` users."""
        raise NotImplementedError(f"{self.display_name} has no analytic variance.")

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact output probabilities ``P[i, y] = Pr[output y | input values[i]]``.

        Only for small instances with a finite output space; outputs are ordered
        as by :meth:`report_index`.  Categorical protocols take ``values=None``
        to mean every item ``0 .. d-1``; numerical protocols need the inputs.
        """
        raise NotImplementedError(f"{self.display_name} has no finite channel.")

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        """Index of each report in the output order of :meth:`channel`."""
        raise NotImplementedError(f"{self.display_name} has no finite channel.")


def _json_safe(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in params.items():
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, np.generic):
            value = value.item()
        out[key] = value
    return out


def make(name: str, **params: Any) -> LocalProtocol:
    """Build a registered protocol, e.g. ``make("oue", epsilon=1.0, domain_size=1024)``.

    Names are case-insensitive (``"OUE"`` is ``"oue"``); the config keeps the registry's spelling.
    ``"auto"`` chooses a protocol for the parameters (:mod:`dpdist.local.frequency.auto`).
    """
    return build(name, **params)


def from_config(config: dict[str, Any], *, new: bool = False) -> LocalProtocol:
    """Rebuild a protocol from :meth:`LocalProtocol.config`.

    A parameter the config leaves out takes the default configs were written with (``ss``'s ``subset_size``:
    :func:`~dpdist.local._registry.stored_defaults`), so stored reports are read as they were made; ``new=True``,
    for a config of reports still to be made (``dpdist serve`` creating a campaign), takes today's defaults (then
    recorded in its :meth:`~LocalProtocol.config`)."""
    return rebuild(config, new)
