"""The server side of the contract: a mergeable aggregator of one protocol's reports.

Aggregator state is a fixed-size vector of sufficient statistics (counts or
sums) plus ``n`` and the rejected-report counts; ``merge`` adds them, so it is
associative and commutative.  Every state that enters from outside
(``from_dict``, ``merge``, a state file read by :func:`dpdist.io.load_state`) is
checked by :mod:`dpdist.local._state_validation`.  The aggregator knows no file:
:func:`dpdist.io.save_state` and :func:`dpdist.io.load_state` keep its state on disk.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from .._validation import InstanceOf, Options, validate_params
from ..errors import IncompatibleStateError
from ._registry import CONFIG_VERSION
from ._report_format import ON_INVALID, ReportBatch, ReportFormat
from ._state_validation import MAX_REPORTS, STATE_FORMAT, check_count, check_counts, check_state, check_statistic
from .._types import ArrayLike

__all__ = ["Aggregator", "StateOwner"]


class StateOwner(Protocol):
    """What an aggregator reads of its protocol (:class:`~dpdist.local.LocalProtocol` is one): its config, its
    report format, its validation and statistic of reports, and the shape and invariants of its sufficient statistic
    (checked by :mod:`dpdist.local._state_validation`, which also reads the class's ``statistic_signed``)."""

    @property
    def display_name(self) -> str: ...

    def config(self) -> dict[str, Any]: ...

    @property
    def report_format(self) -> ReportFormat: ...

    def validate_reports(self, reports: Any, *, on_invalid: str = ...) -> ReportBatch: ...

    def statistic(self, reports: Any) -> np.ndarray: ...

    @property
    def statistic_size(self) -> int: ...

    @property
    def statistic_dtype(self) -> type: ...

    @property
    def statistic_total_per_report(self) -> int | None: ...

    def _check_statistic(self, statistic: np.ndarray, n: int) -> str | None: ...


Owner = TypeVar("Owner", bound=StateOwner)


class Aggregator(Generic[Owner]):
    """Mergeable server-side state: sufficient statistics of the reports added so far.

    Attributes
    ----------
    statistic : ndarray
        The protocol's sufficient statistic (e.g. support counts).
    n : int
        Number of accepted reports.
    rejected : dict[str, int]
        Number of reports rejected, by reason.
    """

    def __init__(self, protocol: Owner):
        self.protocol = protocol
        self.statistic: np.ndarray = np.zeros(protocol.statistic_size, dtype=protocol.statistic_dtype)
        self.n = 0
        self.rejected: dict[str, int] = {}

    @property
    def config(self) -> dict[str, Any]:
        return self.protocol.config()

    @validate_params({"on_invalid": Options(ON_INVALID)}, owner="Aggregator.add")
    def add(self, reports: ArrayLike, *, on_invalid: str = "count") -> Aggregator[Owner]:
        """Validate a batch of reports and add it; return ``self``.

        Parameters
        ----------
        reports
            A batch in the protocol's report format (``protocol.report_format``).
        on_invalid : {"count", "raise"}
            Reports that are out of range are dropped and counted in
            :attr:`rejected` by reason (``"count"``, default: the valid reports of
            the batch are kept), or make the whole call fail (``"raise"``,
            nothing is added).  A batch that cannot be read as reports at all
            (wrong type, shape or dtype) always raises ``MalformedReportError``.

        Reports in memory carry no config: those drawn under another config of the same format (another epsilon,
        subset size or bounds) are decoded with this protocol's parameters wherever their values are in range.  Report
        files and the service's batches carry the config: rows under another are rejected (``other_config``).
        """
        return self.add_batch(self.protocol.validate_reports(reports, on_invalid=on_invalid))

    @validate_params({"batch": InstanceOf(ReportBatch, "a ReportBatch (from protocol.validate_reports)")},
                     owner="Aggregator.add_batch")
    def add_batch(self, batch: ReportBatch) -> Aggregator[Owner]:
        """Add a validated batch (:meth:`LocalProtocol.validate_reports`): its reports and its rejected counts.

        This is the one way reports enter an aggregator: :meth:`add`, the
        report files, Dask and the collection service all call it.
        """
        if batch.config != self.config:
            raise IncompatibleStateError(
                f"The batch's config {batch.config} differs from the aggregator's config {self.config}."
            )
        count = self.protocol.report_format.count(batch.reports)
        if count:
            self._add_statistic(self.protocol.statistic(batch.reports), count)
        for reason, number in batch.rejected.items():
            self.rejected[reason] = self.rejected.get(reason, 0) + number
        return self

    def _add_statistic(self, statistic: np.ndarray, n: int) -> None:
        self.statistic = self.statistic + statistic
        self.n += int(n)

    def _check_protocol(self, protocol: StateOwner) -> None:
        if protocol.config() != self.protocol.config():
            raise IncompatibleStateError(
                f"The aggregator's config {self.protocol.config()} differs from the protocol's "
                f"config {protocol.config()}."
            )

    def merge(self, other: Aggregator[Any]) -> Aggregator[Owner]:
        """Add another aggregator's state (same config) into this one; return ``self``."""
        if not isinstance(other, Aggregator):
            raise IncompatibleStateError(
                f"Aggregator.merge needs another Aggregator. Got {type(other).__name__} instead."
            )
        if other.config != self.config:
            raise IncompatibleStateError(
                f"Cannot merge aggregator states of different configs: {self.config} and {other.config}."
            )
        check_count(other.n, "'n'")
        check_counts(other.rejected)
        check_statistic(self.protocol, other.statistic, other.n)
        return self._merge_checked(other)

    def _merge_checked(self, other: Aggregator[Any]) -> Aggregator[Owner]:
        """:meth:`merge` of an aggregator of the same config whose state was validated already (an aggregator
        :meth:`from_dict` made from a stored state: checked once, not twice); only the total is checked here."""
        if self.n + other.n > MAX_REPORTS:
            raise IncompatibleStateError(
                f"Merging would hold {self.n + other.n} reports, more than the supported 2**53."
            )
        self._add_statistic(other.statistic, other.n)
        for reason, count in other.rejected.items():
            self.rejected[reason] = self.rejected.get(reason, 0) + count
        return self

    def __add__(self, other: Aggregator[Any]) -> Aggregator[Owner]:
        """A new aggregator holding both states (``a + b``); neither operand changes."""
        if not isinstance(other, Aggregator):
            return NotImplemented
        return self.copy().merge(other)

    def copy(self) -> Aggregator[Owner]:
        clone = Aggregator(self.protocol)
        clone.merge(self)
        return clone

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe state (config, n, statistic, rejected counts)."""
        return {
            "format": STATE_FORMAT,
            "version": CONFIG_VERSION,
            "config": self.config,
            "n": self.n,
            "statistic": self.statistic.tolist(),
            "rejected": dict(self.rejected),
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any], protocol: Any = None) -> Aggregator[Any]:
        """Rebuild from :meth:`to_dict`; with ``protocol``, the configs must agree.

        The state is validated by :func:`dpdist.local._state_validation.check_state`:
        a state no sequence of ``add`` calls could produce raises
        :class:`~dpdist.errors.IncompatibleStateError`.
        """
        protocol, statistic, n, rejected = check_state(state, protocol)
        aggregator = cls(protocol)
        aggregator.statistic = statistic
        aggregator.n = n
        aggregator.rejected = rejected
        return aggregator

    def __eq__(self, other):
        return (
            isinstance(other, Aggregator)
            and self.config == other.config
            and self.n == other.n
            and np.array_equal(self.statistic, other.statistic)
            and self.rejected == other.rejected
        )

    def __repr__(self):
        return f"Aggregator(protocol={self.protocol.config()['protocol']!r}, n={self.n}, rejected={self.rejected})"
