"""What a client reads of an estimate answer (``GET /api/campaigns/{id}/estimate``), as a keys spec of
:func:`dpdist._http._answer.answer_document`.

The fields ``dpdist campaign estimate`` prints (its text, :mod:`dpdist.cli._estimate_text`) and every estimate
shares (``docs/reference/results.md``): the intervals (each limit a number, null or a list of them), the notes, the uncertainty
the service adds and, for a table of values (a frequency or heavy-hitters estimate), ``frequencies``, ``items`` and
``labels`` of one length, each interval of a frequency as long as they.  An answer that is not this is refused
(``unexpected_answer``) before anything reads it: a hostile or broken server's ``"intervals": 5`` or 16 million
items beside 8 frequencies ended in "internal error" or was printed.
"""

from __future__ import annotations

from typing import Any

from .._http._answer import NULL, Checked, Maybe, problem_of

__all__ = ["ESTIMATE"]

#: a limit of an interval: a number, null (none there) or one per point
_LIMITS = (float, NULL, [(float, NULL)])
_INTERVAL = {"quantity": str, "level": float, "anytime_valid": bool, "simultaneous": bool, "method": str,
             "low": _LIMITS, "high": _LIMITS, "empty": Maybe(bool)}
_UNCERTAINTY = {
    "bootstrap": Maybe((NULL, {"replicates": int, "level": float, "stream": str})),
    "sequence_unavailable": Maybe((NULL, str)),
    "note": Maybe((NULL, str)),
    "stop": Maybe((NULL, {"reached": bool, "target_width": float, "width": float, "n": (int, NULL)})),
}
#: the kinds whose text is a table of values (:func:`dpdist.estimates._text.frequency_lines`)
_TABLES = ("frequency", "heavy_hitters")


def _table(estimate: dict, where: str) -> str | None:
    """Why a table of values (``frequencies``, ``items``, ``labels``, the frequency intervals) does not line up."""
    if estimate["kind"] not in _TABLES:
        return None
    problem = _problem_of_table(estimate, where)
    if problem is not None:
        return problem
    count = len(estimate["frequencies"])
    lists = [("items", estimate["items"]), ("labels", estimate.get("labels") or [None] * count)]
    lists += [(f"intervals'][{index}]['{end}", interval[end]) for index, interval in enumerate(estimate["intervals"])
              if interval["quantity"] == "frequency" for end in ("low", "high") if isinstance(interval[end], list)]
    return next((f"{where}['{name}'] has {len(values)} entries, {where}['frequencies'] {count}"
                 for name, values in lists if len(values) != count), None)


def _problem_of_table(estimate: dict, where: str) -> str | None:
    """Why the table's lists are not lists of what they hold."""
    return problem_of(estimate, {"frequencies": [(float, NULL)], "items": [object], "labels": Maybe((NULL, [str]))},
                          where)


#: the estimate of an answer (null: no report yet)
_DOCUMENT: dict[str, Any] = {"kind": str, "intervals": [_INTERVAL], "notes": Maybe((NULL, [str])),
                             "uncertainty": Maybe((NULL, _UNCERTAINTY))}
_DIAGNOSTICS = {"constraint": Maybe((NULL, dict)), "top": Maybe((NULL, dict))}
#: the estimate answer's keys beside a campaign's summary
ESTIMATE = {"protocol": str, "epsilon": float, "rejected": dict, "diagnostics": Maybe((NULL, _DIAGNOSTICS)),
            "estimate": (Checked(_DOCUMENT, _table), NULL)}
