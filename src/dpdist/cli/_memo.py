"""``--memo FILE``: one device's reports from the command line, through its privacy ledger.

A longitudinal protocol (``l-grr``, ``l-osue``, ``loloha``, ``dbitflippm``) bounds
the leak of an unchanged value by :math:`\\varepsilon_\\infty` only if the device
reuses its permanent responses. ``dpdist privatize`` and ``dpdist submit``
randomize each row as a different user; with ``--memo FILE`` every row is a value
of this one device, reported through the device's privacy ledger kept in FILE
(:class:`dpdist.local.ledger.PrivacyLedger` JSON, the same the JavaScript client
keeps in ``localStorage``; a memo file of the earlier format is read as a ledger
holding that memo). The ledger charges every row before it is randomized and
refuses a run that would overspend the device's budget (``--budget``); it keeps
the memos per collector and config *without budgets*, so a changed epsilon cannot
make it draw them again. The file is created on first use (with its missing
directories), readable by its owner only (its keys are the device's true values,
or their buckets), locked while in use, and replaced atomically with the new
permanent responses and charges *before* any report is written or sent: a run
killed at any moment never lets a report out whose permanent response the device
forgot, or whose charge it did not record.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import numpy as np

from .._io._ledger_file import open_ledger
from .._validation import Described, Interval
from ..errors import IncompatibleStateError, InvalidParameterError, PrivacyBudgetError
from ..local.ledger import ACCOUNTINGS, DEFAULT_BUDGET
from ._arguments import Needs, state_rules

__all__ = ["is_longitudinal", "DeviceMemo", "open_device_memo"]

LONGITUDINAL = ("l-grr", "l-osue", "loloha", "dbitflippm")


def is_longitudinal(protocol) -> bool:
    """Whether ``protocol`` has a device client with a memo (the protocols of :data:`LONGITUDINAL`)."""
    return protocol.tags.memoized


class DeviceMemo:
    """One device's ledger, read from and saved to ``path``, reporting to ``collector``.

    ``seeded`` runs (``dpdist privatize --seed``) draw the permanent responses from the seed;
    the memo is then marked ``"seeded": true`` and a later run drawing from the CSPRNG refuses
    it rather than let every later round leak through predictable permanent responses.
    """

    def __init__(self, path: Path, protocol, ledger, collector: str, seeded: bool = False, option: str = "--memo"):
        self.path, self.protocol, self.ledger = path, protocol, ledger
        self.collector, self.seeded, self.option = collector, seeded, option

    def reports(self, values: np.ndarray, rng) -> np.ndarray:
        """This device's reports of ``values`` (one per value), charged and saved before they are returned.

        The ledger was opened from ``path`` (:func:`dpdist.io.open_ledger`), so its ``report`` saves it there
        before it returns the reports.
        """

        where = f"The '{self.option}' file {str(self.path)!r}"
        try:
            reports = self.ledger.report(self.protocol, values, self.collector, rng=rng if self.seeded else None)
        except PrivacyBudgetError as error:
            raise PrivacyBudgetError(f"{where}: {error}", remaining=error.remaining) from None
        except IncompatibleStateError as error:
            raise IncompatibleStateError(f"{where}: {error}") from None
        return reports


@contextlib.contextmanager
def open_device_memo(
    path: str | None, protocol, option: str = "--memo", seeded: bool = False, collector: str = "local",
    budget: float | None = None, accounting: str | None = None,
):
    """The :class:`DeviceMemo` at ``path`` for ``protocol`` (locked while open), or ``None`` without a path.

    ``seeded``: the run draws from a seed (``--seed``), not the CSPRNG (see :class:`DeviceMemo`).
    ``budget``, ``accounting``: the owner's total epsilon and accounting (``--budget``,
    ``--accounting``), replacing the ledger's when given.
    """

    if path is None:
        yield None
        return
    if not is_longitudinal(protocol):
        raise InvalidParameterError(
            f"The '{option}' option keeps a device's permanent responses for a longitudinal protocol "
            f"({', '.join(LONGITUDINAL)}). Got the protocol {protocol.name!r}, whose reports are not memoized."
        )
    with open_ledger(path, option=option, budget=budget, accounting=accounting) as ledger:
        yield DeviceMemo(Path(path), protocol, ledger, collector, seeded, option)


def add_ledger_arguments(parser) -> None:
    """``--budget`` and ``--accounting``: the device owner's settings of the ledger in ``--memo FILE``."""

    parser.add_argument(
        "--budget", type=float, default=None, metavar="EPSILON",
        help=f"with --memo: the device's total epsilon over every run, kept in FILE (default {DEFAULT_BUDGET:g}); "
        "a run that would spend more is refused before anything is randomized",
    )
    parser.add_argument(
        "--accounting", choices=ACCOUNTINGS, default=None,
        help="with --memo: 'history' (default) charges each report against every other history of values; "
        "'stable' charges eps_inf once per memo (protects unchanged values, not when they change)",
    )
    # without --memo there is no ledger: the setting would be ignored, and the run would not be the one asked for
    state_rules(parser, {"--budget": Described(Interval(0.0, math.inf), "a finite epsilon > 0")}, (
        Needs("--budget", "--memo", "the device's total epsilon is kept in its memo's ledger"),
        Needs("--accounting", "--memo", "the accounting of the device's ledger, kept in its memo"),
    ))
