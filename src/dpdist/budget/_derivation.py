r"""A charge's loss computed again from what its budget file shows, and a memo's charges gathered into one mechanism.

**Why every loss is derived again when a file is read.**  A charge of a budget file stores its loss in every
currency (its :math:`\rho`, its privacy loss distribution), and the accountants read those, not the charge's
:math:`(\varepsilon, \delta)`; ``dpdist budget show`` prints the guarantee.  Two defences were possible:

* *never trust a stored loss that states less than its guarantee allows*: cap :math:`\rho` at
  :math:`\varepsilon^2/2` and the distribution at the guarantee's worst pair.  This is not sound: the worst pair
  bounds a loss from *above* only, and an edit that sets a charge's distribution to "no loss at all" stays below it
  (the edit drops a 3-DP account's spend to 1e-300 and then accepts 3 more);
* *derive it again* (chosen): every charge records its ``derivation``, the public parameters its loss is computed
  from (:attr:`dpdist.accounting.PrivacyLoss.derivation`: a protocol's config and its reports, a noise's
  parameters, a shuffle's batch size and rounds, or the stated guarantee itself), and reading the file computes
  every loss from it (:func:`derived`).  The loss the accountants read is always the derived one, so an edited
  stored loss never counts; and a stored loss (or a charged :math:`(\varepsilon, \delta)`) that disagrees with its
  derivation is refused as corruption, so the edit is reported rather than silently healed.

What cannot be derived is charged at what its guarantee allows at worst (randomized response for a pure
:math:`\varepsilon`; the worst :math:`(\varepsilon, \delta)` pair): a loss made by hand or composed before it was
charged, in a session kept in a file, and the charges of files written before derivations (their stored losses are
not read).  Derivations are computed with dpdist's own code (a protocol's exact channel): a dpdist whose derivation
of the same parameters changed reads such a file as corrupted, and says so.

**A memo's charges are one mechanism.**  Campaigns of one memoized protocol's config (``l-grr``, ``l-osue``,
``loloha``, ``dbitflippm``) are answered through the same memo on each device (its ledger keeps one per collector
and config, docs/explanation/longitudinal.md "Reports over time"), so their reports are *one* mechanism, not fresh ones: their
charges are gathered into the loss of all their reports, ``guarantee_over(total)`` (:func:`memo_total`), each
charge costing its increment :math:`\varepsilon_{R+K} - \varepsilon_R` (:func:`memo_increment`).  Charging each
campaign its own ``guarantee_over(K)`` as a fresh mechanism would undercount: two reports of l-grr(3, 1, d = 4)
through one memo lose 2.064 exactly, two fresh ones 2.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Callable, Sequence, cast

from .._documents import same_document
from .._guarantee import PrivacyGuarantee
from ..accounting import MEMO_ASSUMPTION, PrivacyLoss, discrete_laplace, gaussian, protocol_loss
from ..accounting import parallel as parallel_losses
from ..amplification import shuffled_loss
from ..errors import DPDistError, IncompatibleStateError, MalformedDocumentError
from ..local import from_config

__all__ = ["derived", "check_stored", "guarantee_derivation", "memo_key", "memo_increment", "memo_total",
           "describe_derivation"]

#: the kinds of derivation, and the fields each one holds besides "kind"
KINDS = {
    "guarantee": ("guarantee",),
    "protocol": ("config", "reports"),
    "memo": ("config", "before", "reports"),
    "discrete_laplace": ("epsilon", "sensitivity", "neighbouring"),
    "gaussian": ("sigma", "sensitivity", "delta", "neighbouring"),
    "shuffled": ("config", "n", "delta", "rounds"),
    "parallel": ("parts",),
}
#: a field any derivation may hold besides: what the charged loss assumes beyond what its kind derives (a guarantee
#: charged as its worst case: all it assumes)
OPTIONAL = ("assumptions",)
#: the longest assumption a file may state (the library's own are under 200 characters), and the most of them
LONGEST_ASSUMPTION, MOST_ASSUMPTIONS = 1000, 100


def guarantee_derivation(guarantee: PrivacyGuarantee, assumptions: Sequence[str] = ()) -> dict:
    """The derivation of a charge that states only ``guarantee`` (its worst case), with what it assumes when it assumes
    anything (a shuffled guarantee's :attr:`~dpdist.amplification.ShuffledGuarantee.assumptions`, a loss's), so that a
    budget file read again states them."""
    derivation: dict[str, Any] = {"kind": "guarantee", "guarantee": PrivacyGuarantee.to_dict(guarantee)}  # its own fields
    if assumptions:
        derivation["assumptions"] = [str(assumption) for assumption in assumptions]
    return derivation


def memo_key(config: dict) -> str:
    """The memo a campaign of ``config`` reports through, in a session: its canonical config."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)


def memo_increment(protocol: Any, before: int, reports: int) -> PrivacyGuarantee:
    r"""What ``reports`` more reports through a memo that had ``before`` cost: :math:`\varepsilon_{R+K} -
    \varepsilon_R` (``guarantee_over``, the ``"history"`` relation; refused where it is infinite)."""
    after = protocol.guarantee_over(before + reports).epsilon
    spent = 0.0 if before == 0 else protocol.guarantee_over(before).epsilon
    return PrivacyGuarantee(max(after - spent, 0.0), 0.0, "history", "local", reports=reports)


def memo_total(charges: Sequence, relation: str) -> list[PrivacyLoss]:
    """One loss per memo among ``charges`` (those derived as ``"memo"``): ``guarantee_over`` of all its reports, as
    one mechanism, in the session's ``relation``."""
    reports: dict[str, int] = {}
    configs: dict[str, dict] = {}
    for charge in charges:
        derivation = charge.loss.derivation
        if derivation is not None and derivation.get("kind") == "memo":
            key = memo_key(derivation["config"])
            reports[key] = reports.get(key, 0) + int(derivation["reports"])
            configs[key] = derivation["config"]
    losses = []
    for key, total in reports.items():
        protocol = from_config(dict(configs[key]))
        epsilon = cast(Any, protocol).guarantee_over(total).epsilon  # a memoized protocol: the memos' charges
        losses.append(PrivacyLoss.of_guarantee(
            PrivacyGuarantee(epsilon, 0.0, relation, "central"),
            f"{protocol.display_name}'s memo: {epsilon:.6g} over {total} report(s) of one device in "
            f"{sum(1 for c in charges if _memo_of(c) == key)} campaign(s), any two histories").assuming(MEMO_ASSUMPTION))
    return losses


def _memo_of(charge) -> str | None:
    derivation = charge.loss.derivation
    return memo_key(derivation["config"]) if derivation is not None and derivation.get("kind") == "memo" else None


def derived(derivation: Any, restate: Callable[[PrivacyLoss], PrivacyLoss], where: str) -> PrivacyLoss:
    """The loss ``derivation`` computes, stated by ``restate`` in the session's relation (with the derivation kept);
    a malformed derivation is refused naming ``where`` it was read (:class:`~dpdist.errors.IncompatibleStateError`)."""
    if not isinstance(derivation, dict) or derivation.get("kind") not in KINDS or not (
            {"kind", *KINDS[derivation["kind"]]} <= set(derivation)
            <= {"kind", *KINDS[derivation["kind"]], *OPTIONAL}):
        raise IncompatibleStateError(f"{where}: its loss's 'derivation' must be one of the kinds {sorted(KINDS)} with "
                                     f"their fields. Got {str(derivation)[:200]}.")
    if derivation["kind"] == "parallel":
        parts = derivation["parts"]
        if not isinstance(parts, list) or not parts:
            raise IncompatibleStateError(f"{where}: a parallel derivation needs its parts. Got {str(parts)[:200]}.")
        loss = parallel_losses([derived(part, restate, where) for part in parts])
        try:
            return loss.assuming(*_texts(derivation.get("assumptions", []))).derived_as(derivation)
        except ValueError as error:
            raise IncompatibleStateError(f"{where}: its loss's derivation is malformed ({error}).") from None
    try:
        raw = _raw(json.dumps(derivation, sort_keys=True))
        return restate(raw).derived_as(derivation)
    except DPDistError as error:
        raise IncompatibleStateError(f"{where}: its loss cannot be derived again from {str(derivation)[:200]} "
                                     f"({error}).") from None
    except (TypeError, ValueError, KeyError) as error:
        raise IncompatibleStateError(f"{where}: its loss's derivation {str(derivation)[:200]} is malformed "
                                     f"({type(error).__name__}: {error}).") from None


@functools.lru_cache(maxsize=1024)
def _raw(text: str) -> PrivacyLoss:
    """The loss of one derivation (canonical JSON) before it is stated in a session's relation (cached: a file is
    read on every charge)."""
    derivation = json.loads(text)
    return _kind_loss(derivation).assuming(*_texts(derivation.get("assumptions", [])))


def _kind_loss(derivation: dict) -> PrivacyLoss:
    kind = derivation["kind"]
    if kind == "guarantee":
        return PrivacyLoss.of_guarantee(PrivacyGuarantee(**derivation["guarantee"]))
    if kind == "protocol":
        return protocol_loss(from_config(dict(derivation["config"])), _count(derivation["reports"]))
    if kind == "memo":
        protocol = from_config(dict(derivation["config"]))
        if not protocol.tags.memoized:
            raise ValueError(f"{protocol.name} keeps no memo")
        increment = memo_increment(protocol, _count(derivation["before"], low=0), _count(derivation["reports"]))
        return PrivacyLoss.of_guarantee(increment, f"{protocol.display_name}'s memo: {increment.epsilon:.6g} more over "
                                        f"{derivation['reports']} report(s)").assuming(MEMO_ASSUMPTION)
    if kind == "discrete_laplace":
        return discrete_laplace(derivation["epsilon"], derivation["sensitivity"], neighbouring=derivation["neighbouring"])
    if kind == "gaussian":
        return gaussian(derivation["sigma"], derivation["sensitivity"], delta=derivation["delta"],
                        neighbouring=derivation["neighbouring"])
    return shuffled_loss(from_config(dict(derivation["config"])), _count(derivation["n"]), derivation["delta"],
                         _count(derivation["rounds"]))


def _texts(value: Any) -> list[str]:
    """A derivation's assumptions: a list of non-empty one-line texts without control characters (a terminal
    prints them: ``dpdist budget show``), each at most :data:`LONGEST_ASSUMPTION` characters, at most
    :data:`MOST_ASSUMPTIONS` of them."""
    if not isinstance(value, list) or not all(isinstance(text, str) and text for text in value):
        raise ValueError(f"assumptions must be a list of non-empty str, got {str(value)[:100]!r}")
    if len(value) > MOST_ASSUMPTIONS or any(len(text) > LONGEST_ASSUMPTION or _CONTROL.search(text) for text in value):
        raise ValueError(f"assumptions must be at most {MOST_ASSUMPTIONS} texts of at most {LONGEST_ASSUMPTION} "
                         f"characters without control characters, got {len(value)} starting {str(value)[:100]!r}")
    return value


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _count(value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"a count must be an int >= {low}, got {value!r}")
    return value


def check_stored(stored: PrivacyLoss | None, charged: PrivacyGuarantee, loss: PrivacyLoss, where: str) -> None:
    """Refuse a charge whose charged ``(epsilon, delta)`` or stored loss (its currencies, and what it assumes) disagrees
    with the ``loss`` its derivation gives: corruption detected, by name."""
    try:
        same_document({"epsilon": loss.guarantee.epsilon, "delta": loss.guarantee.delta},
                      {"epsilon": charged.epsilon, "delta": charged.delta}, where, "charged")
        if stored is not None:  # its assumptions too: an edit of one list would drop (or add) one from the statement
            same_document(_currencies(loss), _currencies(stored), where, "loss")
    except MalformedDocumentError as error:
        raise IncompatibleStateError(f"Corruption detected: {error} Its loss, derived again from what the file "
                                     f"shows ({describe_derivation(loss.derivation)}), is "
                                     f"{loss.describe(assumptions=False)}; the file was edited or damaged after it was "
                                     "written, and is not read.") from None


def _currencies(loss: PrivacyLoss) -> dict:
    document = loss.to_dict()
    return {"guarantee": {key: document["guarantee"][key] for key in ("epsilon", "delta", "neighbouring", "model")},
            "rho": document["rho"], "distribution": document["distribution"], "assumptions": document["assumptions"]}


def describe_derivation(derivation: dict | None) -> str:
    """What a charge's loss is derived from, in a few words (``dpdist budget show`` prints it)."""
    if derivation is None:
        return "its guarantee (the worst case)"
    kind = derivation.get("kind")
    if kind == "guarantee":
        return "its guarantee (the worst case)"  # (its assumptions, if any, end the account's line)
    if kind == "parallel":
        return f"the worst of {len(derivation['parts'])} disjoint parts"
    # (its assumptions end the charge's line, by their numbers in the account's: not repeated here as a list)
    details = {key: value for key, value in derivation.items() if key not in ("kind", "assumptions")}
    config = details.pop("config", None)
    named = "" if config is None else f"{memo_key(config)} "
    return f"{kind} {named}" + ", ".join(f"{key} {value}" for key, value in details.items())
