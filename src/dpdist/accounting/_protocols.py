r"""A local protocol's privacy loss per report, from its exact channel, and a campaign's over its reports.

* Protocols whose every ordered pair of inputs is alike by symmetry (GRR, SS, OUE, SUE) are read from
  one pair's output classes (:mod:`._pair_classes`) at any domain size: the exact loss.
* Other protocols with a finite channel (``tags.finite_channel``) small enough to enumerate its pairs
  (:data:`~._channels.MAX_PAIR_WORK`): the exact loss of every pair (:mod:`._channels`).
* Any other protocol (numerical outputs, channels too large): the worst case of its pure
  :math:`\varepsilon`, randomized response (valid for every :math:`\varepsilon`-LDP randomizer).

A campaign of ``reports`` reports per device composes ``reports`` fresh reports; a memoized protocol
(``tags.memoized``: ``l-grr``, ``l-osue``, ``loloha``, ``dbitflippm``) composes as its memo allows: its
reports share one permanent response, so they are *one* mechanism whose loss over the device's history
is ``guarantee_over(reports)`` (never the per-report loss added up as if each were fresh).  One report of it
is ``guarantee_over(1)`` (:math:`\varepsilon_1`), not ``protocol.guarantee`` (:math:`\varepsilon_\infty`, the
memo's bound over any number of reports of an unchanged value).  Reports through one memo in several campaigns
are still one mechanism: a budget session gathers them (:mod:`dpdist.budget._derivation`).

Every loss made here carries its ``derivation`` (the config and the reports), from which a budget file computes
it again when read.

Duck-typed on the protocol's public contract (``guarantee``, ``tags``, ``channel``, ``config``,
``display_name``, ``guarantee_over``), so this package stands below :mod:`dpdist.local`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee
from ..errors import InvalidParameterError
from .._validation import Admits, Integer, validate_params
from ._channels import channel_loss, pairs_loss
from ._distributions import pair_atoms
from ._loss import PrivacyLoss, repeated
from ._pair_classes import pair_classes

__all__ = ["protocol_loss", "MEMO_ASSUMPTION"]

#: what a memoized protocol's loss over time assumes
MEMO_ASSUMPTION = ("one memo per device and scope, kept across reports (the ledger keeps it): the reports are one "
                   "mechanism, not fresh ones")


#: a local protocol (read by what it states: its tags and its guarantee; the protocols live above the accountants)
_PROTOCOL = Admits(object, lambda protocol: None if getattr(protocol, "tags", None) is not None and isinstance(
    getattr(protocol, "guarantee", None), PrivacyGuarantee) else "no protocol's tags and guarantee", "a local protocol")


@validate_params({"protocol": _PROTOCOL, "reports": Integer(low=1)}, owner="accounting.protocol_loss")
def protocol_loss(protocol: Any, reports: int = 1) -> PrivacyLoss:
    """The privacy loss of ``reports`` reports of one device through ``protocol`` (module docstring).

    Parameters
    ----------
    protocol : LocalProtocol
    reports : int
        Reports of each device (>= 1): fresh ones compose; a memo's are one mechanism.
    """
    tags = protocol.tags
    name = protocol.display_name
    derivation = {"kind": "protocol", "config": json.loads(json.dumps(protocol.config(), sort_keys=True, default=str)),
                  "reports": reports}
    if tags.memoized:  # guarantee_over(1) is one report's loss; protocol.guarantee is the memo's epsilon_inf
        guarantee = protocol.guarantee_over(reports)
        return PrivacyLoss.of_guarantee(guarantee, f"{name}'s memo: {guarantee.epsilon:.6g} over {reports} report(s) "
                                        "of one device, any two histories").assuming(MEMO_ASSUMPTION).derived_as(derivation)
    one = _one_report(protocol)
    return repeated(one, reports).derived_as(derivation)


#: one report's loss per protocol config (protocols are immutable; the channel is read once per process)
_ONE_REPORT: dict[str, PrivacyLoss] = {}


def _one_report(protocol: Any) -> PrivacyLoss:
    key = f"{type(protocol).__qualname__} {json.dumps(protocol.config(), sort_keys=True, default=str)}"
    loss = _ONE_REPORT.get(key)
    if loss is None:
        if len(_ONE_REPORT) >= 512:
            _ONE_REPORT.clear()
        loss = _ONE_REPORT[key] = _read_one_report(protocol)
    return loss


def _read_one_report(protocol: Any) -> PrivacyLoss:
    guarantee, name = protocol.guarantee, protocol.display_name
    classes = pair_classes(protocol)
    if classes is not None:  # every ordered pair alike: one pair's classes give the exact loss
        mu0, mu1, _ = classes
        distribution, rho, _ = pairs_loss([pair_atoms(mu0, mu1)])
        source = f"exact channel of {name} (one pair's output classes, every pair alike)"
    elif protocol.tags.finite_channel:
        try:
            channel = np.asarray(protocol.channel(), dtype=np.float64)
            distribution, rho, distinct = channel_loss(channel, f"{name}.channel")
        except (NotImplementedError, MemoryError, InvalidParameterError) as error:
            return PrivacyLoss.of_guarantee(guarantee, f"any {guarantee.epsilon:g}-LDP randomizer ({name}: no channel "
                                            f"to enumerate: {type(error).__name__})")
        source = (f"exact channel of {name}" if distinct == 1 else
                  f"exact channel of {name}: the worst of {distinct} distinct pairs, connect-the-dots")
    else:
        return PrivacyLoss.of_guarantee(guarantee, f"any {guarantee.epsilon:g}-LDP randomizer ({name} has no finite channel)")
    largest = getattr(distribution, "largest", None)
    if largest is not None and largest > guarantee.epsilon * (1 + 1e-9) + 1e-12:
        raise InvalidParameterError(f"{name}'s channel loses {largest!r} per report, more than its stated epsilon "
                                    f"{guarantee.epsilon!r}.")
    return PrivacyLoss(guarantee, rho, distribution, source)
