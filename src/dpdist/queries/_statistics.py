r"""The contract of an aggregate, and the one registry the query layer asks.

An aggregate (a count, a sum, quantiles, ...) is one subclass of :class:`Statistic` that carries everything about it:
its ``dpdist.central`` release (:meth:`~Statistic.release`), its expected error for the plan
(:meth:`~Statistic.expected`), its cells in the released table (:meth:`~Statistic.cells`), its SQL spellings
(``sql_forms`` and :meth:`~Statistic.from_sql`), whether it counts rows (``counts_rows``), and how it reads the rows
the query kept (:meth:`~Statistic.staged_rows`, :meth:`~Statistic.contributions`).  The planner
(:mod:`~dpdist.queries._plan`), the query (:mod:`~dpdist.queries._query`), the SQL front end
(:mod:`~dpdist.queries._sql`) and the result (:mod:`~dpdist.queries._result`) ask it and never switch on its name.

**Adding an aggregate** touches :mod:`dpdist.queries._aggregates` alone: subclass :class:`Statistic` there (or an
aggregate it resembles) with a new ``kind`` (defining the class registers it in :data:`AGGREGATES`), give it its
``sql_forms`` and :meth:`~Statistic.from_sql`, its :meth:`~Statistic.release` (a ``dpdist.central`` release, whose
guarantee the query composes), its :meth:`~Statistic.expected` error from public parameters, and its
:meth:`~Statistic.cells` if the release's ``summary_row()`` is not what the table should show; then a builder function
for Python callers, added to that module's ``__all__``.  ``tests/queries/test_aggregates.py`` runs every registered
aggregate through SQL, the plan, a release and its cells; the how-to's list of SQL forms is checked against the
registry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar

import numpy as np

from .._validation import Described, Interval, Text, check_param
from ..errors import InvalidParameterError

__all__ = ["Statistic", "SqlCall", "AGGREGATES", "aggregates_named", "sql_forms", "laplace_sd", "WEIGHT"]

#: ``weight``: a finite float > 0 (the statistic's share of the budget is its weight over the query's total)
WEIGHT = Interval(0.0, math.inf, closed="neither")
#: every aggregate, by its kind, in the order they were defined (what the SQL front end tries, and lists)
AGGREGATES: dict[str, type["Statistic"]] = {}


@dataclass(frozen=True)
class SqlCall:
    """One aggregate of a SELECT as the SQL front end read it: what :meth:`Statistic.from_sql` takes.

    Attributes
    ----------
    name : str
        The function's name, upper case (``"AVG"``; sqlglot's first spelling, ``"VARIANCE_POP"`` for ``VAR_POP``).
    text : str
        The call as written, for refusals.
    column : str or None
        The frame's column among its arguments, if any (an expression's is a column derived for it).
    numbers : tuple of int or float
        Its number arguments, in order.
    star, distinct : bool
        ``COUNT(*)``; ``COUNT(DISTINCT c)``.
    privacy_id : str or None
        The query's column of persons' ids.
    given_bounds : dict
        The public bounds given to ``dpdist.sql`` (read through :meth:`bounds`).
    names : tuple of str
        Every spelling of the function (``("VARIANCE_POP", "VAR_POP")``).
    written : str or None
        The column's argument as written, where it is an expression (``"income * 0.1"``).
    """

    name: str
    text: str
    column: str | None = None
    numbers: tuple = ()
    star: bool = False
    distinct: bool = False
    privacy_id: str | None = None
    given_bounds: dict = field(default_factory=dict, repr=False)
    names: tuple[str, ...] = ()
    written: str | None = None

    def bounds(self, column: str) -> tuple[float, float]:
        """The public bounds of ``column``, refused by name when ``dpdist.sql`` was not given them."""
        if not isinstance(self.given_bounds, dict) or column not in self.given_bounds:
            shown = self.written or column
            what = "column" if self.written is None else "expression (or of its columns, or its alias)"
            raise InvalidParameterError(f"The 'bounds' argument of dpdist.sql must give the public bounds of the {what} "
                                        f"{shown!r} (bounds={{{shown!r}: (lo, hi)}}). Got {self.given_bounds!r:.100}.")
        return self.given_bounds[column]

    def of_distinct(self) -> str | None:
        """The column of ``F(DISTINCT c)``, or None for another form."""
        return self.column if self.distinct and not self.star and not self.numbers else None

    def of_column(self, numbers: tuple[int, int]) -> str | None:
        """The column of ``F(c, n1, ...)`` with between ``numbers[0]`` and ``numbers[1]`` numbers after it, or None
        for another form (no column, ``*``, ``DISTINCT``, another count of numbers)."""
        if self.column is None or self.star or self.distinct or not numbers[0] <= len(self.numbers) <= numbers[1]:
            return None
        return self.column


#: a statistic's name in the released table (SQL's AS)
_NAME = Described(Text(pattern=r"(?s).*\S.*"), "a non-empty string, not only white space")


@dataclass(frozen=True)
class Statistic:
    """One statistic of a query: an aggregate (its subclass) of a column, with its weight and its name.

    Attributes
    ----------
    column : str or None
        The column it reads (``None`` for :func:`~dpdist.queries.count`, which counts rows).
    options : dict
        Its release's public arguments (``bounds``, ``q``, ``bins``).
    weight : float
        Its share of the budget, relative to the query's other statistics.
    name : str or None
        Its name in the released table (:meth:`named`), else its ``kind`` and column name its cells.
    title : str or None
        Its column as the released table writes it, where that is not the frame's column (a derived column's
        expression as the statement wrote it, ``"income * 0.1"``).
    """

    #: its name in labels and plans (``"sum"``); a subclass with one is registered in :data:`AGGREGATES`
    kind: ClassVar[str] = ""
    #: its SQL spellings as the docs show them (``c`` a column, ``<privacy_id>`` the ids' column, parameters named)
    sql_forms: ClassVar[tuple[str, ...]] = ()
    #: it counts rows (a count's noise; no value of its column is aggregated)
    counts_rows: ClassVar[bool] = False
    #: what its column holds: "numbers" (or booleans, as 0 and 1), "booleans", or "values" of any type
    reads: ClassVar[str] = "numbers"
    #: its rows may hold missing values of its column (``COUNT(c)`` counts the present ones): none is refused
    keeps_missing: ClassVar[bool] = False
    #: its rows hold every person kept, so it may choose private keys (a deduplication by value does not)
    chooses_groups: ClassVar[bool] = True
    #: it counts persons: the query needs its ``privacy_id``
    needs_privacy_id: ClassVar[bool] = False
    #: the statistic of one Gaussian vector over the groups it may be released as instead
    #: (:mod:`dpdist.central._grouped_gaussian`), or None
    gaussian: ClassVar[str | None] = None
    #: the parts of the budget its Laplace release splits a group's value's noise into (a mean: its sum and count)
    laplace_parts: ClassVar[int] = 1
    #: what an expression in its SQL argument is: "value" (its value; a condition as 1, 0 or missing) or "truth" (a
    #: condition: the rows where it is true, a boolean column)
    argument: ClassVar[str] = "value"

    column: str | None
    options: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    name: str | None = None
    title: str | None = None

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            AGGREGATES[cls.kind] = cls

    @property
    def label(self) -> str:
        """``kind(column)``, or ``count()``: the name of the statistic in a plan, a result and errors."""
        return f"{self.kind}({self.written or ''})"

    @property
    def written(self) -> str | None:
        """Its column as the released table and the plan write it (:attr:`title`, else the column's name)."""
        return self.title or self.column

    @property
    def stem(self) -> str:
        """What its cells' names start with, which :meth:`named` replaces."""
        return f"{self.written}"

    def weighted(self, weight: Any) -> "Statistic":
        """This statistic with another ``weight``."""
        return replace(self, weight=check_param(self.kind, "weight", weight, WEIGHT))

    def named(self, name: str) -> "Statistic":
        """This statistic named ``name`` in the released table (SQL's ``AS``): a count's, sum's or mean's cell is
        ``name`` (its interval ``name low``, ``name high``); the cells of quantiles, a CDF or a histogram read
        ``name`` where they would read the column's name (``name 0.5 quantile``)."""
        return replace(self, name=check_param("Statistic.named", "name", name, _NAME))

    def release(self) -> tuple[Callable[..., Any], tuple, dict[str, Any]]:
        """``(function, args after the data, keyword arguments)`` of its ``dpdist.central`` release, budget aside."""
        raise NotImplementedError

    def expected(self, epsilon: float, n: int, rows_per_person: int, repeats: int) -> dict[str, Any]:
        """``{"metric": ..., "error": ...}``: its expected error in one group of ``n`` rows released at ``epsilon``
        with ``rows_per_person`` rows of a person at most (public parameters only).  By default the seeded simulation
        of :func:`dpdist.explain` (its KS distance)."""
        return self.simulated(epsilon, n, rows_per_person, repeats, "ks")

    def value_sensitivity(self) -> float:
        """What one row moves its noised value by (a count's 1, a sum's largest bound, a mean's half range)."""
        return 1.0

    def noise_sds(self, epsilon: float, delta: float, max_groups: int, rows_per_person: int) -> tuple[float, float]:
        """``(Laplace, Gaussian)``: the standard deviation of one group's noised value when released per group at
        ``epsilon / max_groups`` (Laplace) or as one Gaussian vector at ``(epsilon, delta)`` over the groups; public
        parameters only (the plan chooses the smaller: :mod:`dpdist.queries._plan`)."""
        from ..central._grouped_gaussian import noise_sd  # lazy: loads scipy (0.4-2 s)

        assert self.gaussian is not None
        parts = self.laplace_parts
        laplace = laplace_sd(epsilon / max_groups / parts / rows_per_person) * self.value_sensitivity()
        gaussian = noise_sd(self.gaussian, epsilon, delta, max_groups, rows_per_person,
                            self.options.get("bounds"), self.options.get("bins"))
        return laplace, gaussian

    def gaussian_expected(self, epsilon: float, delta: float, n: int, max_groups: int,
                          rows_per_person: int) -> dict[str, Any]:
        """Its expected error in one group of ``n`` rows released as one Gaussian vector at ``(epsilon, delta)``:
        the standard deviation of its noise (:meth:`noise_sds`)."""
        _, sd = self.noise_sds(epsilon, delta, max_groups, rows_per_person)
        return {"metric": f"{self.kind} standard deviation (Gaussian)", "error": sd}

    def cells(self, result: Any) -> dict[str, float]:
        """A group's cells: the release's ``summary_row()``, each name read by :meth:`cell_name`, under the
        statistic's name (:meth:`named`) where it has one."""
        row = result.summary_row()
        level = {"level": float(row["level"])} if "level" in row else {}
        named = {self.cell_name(name): float(value) for name, value in row.items() if name != "level"}
        return {**self.renamed(named), **level}

    def cell_names(self) -> list[str]:
        """The names of its cells, from its release run on no record (its public arguments alone: no data is read):
        what an empty table's columns are, and what two statistics must not both name."""
        function, args, kwargs = self.release()  # no statistic warns of no record: no warning filter is touched
        return list(self.cells(function(np.zeros(0), *args, epsilon=1.0, rng=0, **kwargs)))

    def value_cell(self) -> str | None:
        """The name of its one value's cell in the released table (what SQL's HAVING compares), or None where it
        releases several values (a histogram's shares, a CDF's summary)."""
        return self.name or self.stem

    def cell_name(self, name: str) -> str:
        """The table's name of the summary row's cell ``name`` (by default ``"<column> <name>"``)."""
        return f"{self.written} {name}"

    def renamed(self, cells: dict[str, float]) -> dict[str, float]:
        """``cells`` with their :attr:`stem` replaced by the statistic's name, when it has one."""
        if self.name is None:
            return cells
        stem = self.stem
        return {(self.name + name[len(stem):] if name.startswith(stem) else name): value for name, value in cells.items()}

    def staged_rows(self, data: dict[str, np.ndarray], by: tuple[str, ...], privacy_id: str | None,
                    missing: Any) -> dict[str, np.ndarray]:
        """The rows its release reads, from the query's rows kept ``data`` (``{column: values}``): by default those."""
        return data

    def contributions(self, max_contributions: int) -> int:
        """The rows of one person per group its release reads (by default the query's ``max_contributions``)."""
        return max_contributions

    def left_out(self, rows: int, groups: int | None) -> int | None:
        """What the bounding of each person's rows left out of it, of the ``rows`` and the (person, group) pairs
        ``groups`` it left out of the table (by default the rows; None where not counted)."""
        return rows

    @classmethod
    def from_sql(cls, call: SqlCall) -> "Statistic | None":
        """The statistic of the SQL aggregate ``call``, or None when ``call`` is not one of its forms."""
        raise NotImplementedError

    def simulated(self, epsilon: float, n: int, rows_per_person: int, repeats: int, metric: str) -> dict[str, Any]:
        """:func:`dpdist.explain`'s seeded simulation of one group's release at ``n`` rows: its ``metric``
        (``"quantile_mae"``, ``"ks"``)."""
        from ..accuracy import explain  # lazy: loads scipy (0.4-2 s)

        function, _, options = self.release()
        unit: dict[str, Any] = ({"max_contributions": rows_per_person, "rows_per_person": rows_per_person}
                                if rows_per_person > 1 else {})
        prediction = explain(function, n, epsilons=[epsilon], repeats=repeats, **options, **unit).predictions[0]
        names = {"quantile_mae": "quantiles' mean absolute error", "ks": "KS distance"}
        return {"metric": names[metric], "error": prediction.errors[metric].value}


def laplace_sd(epsilon: float) -> float:
    """The standard deviation of the discrete Laplace law of one unit at ``epsilon``."""
    rho = math.exp(-epsilon)
    return math.sqrt(2 * rho) / (1 - rho)


def aggregates_named(names: Any) -> list[type[Statistic]]:
    """The aggregates one of whose SQL forms is a call of one of ``names`` (upper case: a function's spellings)."""
    names = {names} if isinstance(names, str) else set(names)
    return [kind for kind in AGGREGATES.values() if any(form.split("(")[0] in names for form in kind.sql_forms)]


def sql_forms(kinds: Any = None) -> str:
    """The SQL forms of ``kinds`` (every aggregate by default), as a list in words."""
    forms = [form for kind in (AGGREGATES.values() if kinds is None else kinds) for form in kind.sql_forms]
    return ", ".join(forms[:-1]) + (" and " if len(forms) > 1 else "") + forms[-1]
