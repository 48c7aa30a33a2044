r"""Records of several attributes: the schema, the checked batch, and the guarantees every such protocol states.

:class:`RecordProtocol` is the base of every protocol whose users each hold a record
of the public schema ``attributes`` (:mod:`._schema`): it owns the records
(:meth:`privatize` and :meth:`simulate` take a batch in any form
:func:`~._records.record_columns` reads, each column checked by
:func:`~._values.check_column`, numerical values outside the bounds brought into them as each
attribute's protocol does with ``clip=True``: clipped, or wrapped around the circle when that protocol is
circular (``opm-circular``); the checked batch is an ``(n, k)`` float
array of items and values rescaled to [0, 1]) and the two guarantees: ``guarantee``
(pure :math:`\varepsilon`-LDP, ``"replace"``: any two records of one user) and
``attribute_guarantee`` (``"attribute"``: records that differ in one attribute).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._rng import check_rng
from ..._types import ArrayLike, Seed
from ..._validation import EPSILON, Boolean, check_param, clip_real_values
from ..._missing import missing_policy, records_missing
from ...errors import ClippedValuesWarning, DPDistError
from ..._guarantee import PrivacyGuarantee
from .._protocol import Aggregator, LocalProtocol, ProtocolTags
from ._records import record_columns
from ._schema import Attribute, Attributes
from ._values import check_column

__all__ = ["RecordProtocol"]


class RecordProtocol(LocalProtocol):
    """Base of the protocols over records of ``attributes`` (see the module docstring).

    Subclasses call :meth:`_setup_schema` (or set ``self._attributes``) in ``_setup``.
    """

    tags = ProtocolTags(kind="multi", finite_channel=True, exact_simulate=True, unbiased=False)
    _constraints = {"epsilon": EPSILON, "attributes": Attributes()}

    def _setup_schema(self) -> None:
        self._attributes = tuple(Attribute.from_dict(spec) for spec in self._params["attributes"])

    # ------------------------------------------------------------------ identity
    @property
    def params(self) -> dict[str, Any]:
        params = dict(self._params)
        params["attributes"] = [attribute.to_dict() for attribute in self._attributes]
        return params

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        """The schema: each attribute with the protocol that randomizes it."""
        return self._attributes

    @property
    def attribute_names(self) -> list[str]:
        return [attribute.name for attribute in self._attributes]

    @property
    def attribute_guarantee(self) -> PrivacyGuarantee:
        """The guarantee for two records of one user that differ in one attribute (``"attribute"``)."""
        return PrivacyGuarantee(self._attribute_epsilon(), 0.0, "attribute", "local")

    def _attribute_epsilon(self) -> float:
        return self.epsilon


    # ------------------------------------------------------------------ records
    def _column(self, index: int, column: np.ndarray, owner: str) -> np.ndarray:
        attribute = self._attributes[index]
        try:
            return check_column(attribute, column, owner)
        except DPDistError as error:
            raise type(error)(f"{owner}: attribute {attribute.name!r}: {error}") from None

    def _records(self, values, *, clip: bool, owner: str, missing: str = "refuse") -> np.ndarray:
        """The checked batch: an ``(n, k)`` float array (items; numerical values rescaled to [0, 1])."""
        clip = check_param(owner, "clip", clip, Boolean())
        policy = missing_policy(owner, missing, records=True)
        columns = records_missing(record_columns(values, self.attribute_names, owner), policy, owner,
                                  f"The 'values' argument of {owner} (records)")
        clipped = wrapped = 0
        if clip:
            for index, attribute in enumerate(self._attributes):
                if not attribute.categorical:
                    columns[index], count = self._into_attribute_bounds(index, columns[index], owner)
                    if self._circular(index):
                        wrapped += count
                    else:
                        clipped += count
        if clipped or wrapped:
            if clipped and wrapped:
                how = f"were clipped to them ({clipped}) or wrapped around the circle ({wrapped}, circular attributes)"
            else:
                how = "were clipped to them" if clipped else "were wrapped around the circle"
            warnings.warn(
                f"{owner}: {clipped + wrapped} numerical value(s) outside their attribute's bounds {how} "
                "before randomization (clip=True; the count is not sent). Pass clip=False to refuse them instead.",
                ClippedValuesWarning,
                stacklevel=3,
            )
        n = columns[0].shape[0] if columns else 0
        records = np.empty((n, len(columns)), dtype=np.float64)
        for index, column in enumerate(columns):
            records[:, index] = self._column(index, column, owner)
        return records

    def _circular(self, index: int) -> bool:
        """Whether the protocol of attribute ``index`` takes its bounds as one period of a circle (``opm-circular``)."""
        return False

    def _into_attribute_bounds(self, index: int, column, owner: str) -> tuple[np.ndarray, int]:
        """``(values, moved)``: a numerical attribute's column brought into its bounds as its protocol does (clipped)."""
        return clip_real_values(column, self._attributes[index].interval, owner=owner)

    def _check_values(self, values) -> np.ndarray:
        return self._records(values, clip=False, owner=self._values_owner())

    def _inner_values(self, records: np.ndarray, index: int) -> np.ndarray:
        """Column ``index`` as its inner protocol's checked values (int64 items or unit reals)."""
        column = records[:, index]
        return column.astype(np.int64) if self._attributes[index].categorical else column

    def privatize(self, values: ArrayLike, rng: Seed = None, *, secure: bool = False, clip: bool = True,
                  missing: str = "refuse") -> np.ndarray:
        """Randomize each user's record; one report per record.

        Parameters
        ----------
        values : records
            A 2-D array ``(n, k)`` (columns in the schema's order), a structured array, a dict of
            columns or a DataFrame (columns by attribute name).  Categorical columns hold items
            ``0 .. d-1`` or the attribute's labels; numerical columns reals.
        rng : None, int or Generator
            Randomness for simulation; ignored in favour of a CSPRNG when ``secure``.
        secure : bool
            Draw from AES-CTR keyed by the OS CSPRNG.
        clip : bool
            Numerical values outside their bounds are randomized as the bound
            they are clipped to (as the value wrapped around the circle when the attribute's
            protocol is circular, ``opm-circular``: 25 h is 01:00; ``±inf`` still clipped), with a
            :class:`~dpdist.errors.ClippedValuesWarning` counting both (default), or refused with :class:`~dpdist.errors.OutOfDomainError` (``False``).
        missing : {"refuse", "drop"}
            A record with a missing value (NaN, None) in any attribute: refused with the count (the
            default) or left out, its user sending no report (``"drop"``; a
            :class:`~dpdist.errors.MissingValuesWarning` counts them; :mod:`dpdist._missing`).
        """
        records = self._records(values, clip=clip, owner=f"{self.display_name}.privatize", missing=missing)
        return self._privatize(records, check_rng(rng, secure=secure, owner=f"{self.display_name}.privatize"))

    def simulate(self, values: ArrayLike, rng: Seed = None, *, clip: bool = True, missing: str = "refuse") -> Aggregator:
        """An aggregator distributed exactly as one that added ``privatize(values)`` (``clip`` and ``missing`` as
        there)."""
        records = self._records(values, clip=clip, owner=f"{self.display_name}.simulate", missing=missing)
        generator = check_rng(rng, owner=f"{self.display_name}.simulate")
        aggregator = self.aggregator()
        aggregator._add_statistic(self._simulate(records, generator), records.shape[0])
        return aggregator

    # ------------------------------------------------------------------ reports
