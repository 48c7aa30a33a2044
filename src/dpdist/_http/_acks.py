"""What a device takes as the acknowledgement of what it sent: the server's answer naming that campaign and that id.

A proxy, a captive portal, a stale or misrouted server, or anyone on the path can answer ``200`` with another body;
a client that takes any ``200`` as "counted" forgets the batch, and its reports are lost (docs/explanation/delivery.md, "What
counts as an acknowledgement").
An answer acknowledges a batch only when it is a JSON object that names the campaign and the batch id sent (the
relay's: the report id sent) with the fields the service's acknowledgement has (``accepted``, ``rejected``,
``duplicate``; the relay's: ``duplicate``), and counts that fit the batch: ``accepted`` at most ``n_read`` and both at
most the reports sent (a duplicate's counts are the first time's, of the same bytes; a relayed batch's ``n_read`` may
be smaller, its replayed reports not read).  Any other answer, a body that is not JSON or is cut short included, is no
acknowledgement: the client sends the same id and bytes again under its retry rule (:mod:`dpdist._http._retry`), and says
so when its window runs out.  The JavaScript (``clients/js/src/acks.js``) and Java (``Client.ackProblem``) clients
apply the same rule, and so does ``dpdist relay`` of the collector's acknowledgement of a relayed batch
(``relay._forwarder``: another answer is delivered again, never marked delivered).
"""

from __future__ import annotations

from typing import Any, TypeGuard
from urllib.parse import unquote

from .._json import loads_within
from ._retry import NOT_ACKNOWLEDGED
from .._shown import kind_of, secrets_of, shown

__all__ = ["batch_ack_problem", "relay_ack_problem"]

#: the bytes an acknowledgement is parsed within (one is a few hundred): ``dpdist._http._deadline.ACK_ANSWER_BYTES``, its
#: bound on bytes read (a module of this floor: its value, 1 MiB, checked by tests/http/test_acks.py)
_ACK_BYTES = 1 << 20


def batch_ack_problem(response: Any, campaign: str, batch_id: str, sent: int | None = None) -> str | None:
    """None if ``response`` is the service's acknowledgement of batch ``batch_id`` of ``campaign``, else what it is.

    ``sent``: the reports (rows) the batch carried, if known: an acknowledgement counting more is none."""
    return _problem(response, campaign, "batch_id", batch_id, lambda ack: _collector_fields(ack, sent))


def relay_ack_problem(response: Any, campaign: str, report_id: str) -> str | None:
    """None if ``response`` is a relay's acknowledgement of report ``report_id`` of ``campaign``, else what it is."""
    return _problem(response, campaign, "report_id", report_id, _relay_fields)


def _problem(response: Any, campaign: str, id_key: str, sent: str, fields) -> str | None:
    what = f"{id_key.replace('_', ' ')} {sent!r} of campaign {campaign!r}"
    try:
        # ValueError, not RecursionError, for JSON nested too deeply; one of more than 1 MiB holds is none
        ack = loads_within(response.content, _ACK_BYTES)
    except (ValueError, UnicodeDecodeError):
        return (f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} with a body that is not JSON "
                f"({len(response.content)} bytes, {kind_of(response)})")
    if not isinstance(ack, dict):
        return f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} with JSON that is not an object"
    named_campaign, named_id = ack.get("campaign"), ack.get(id_key)
    if named_id != sent or named_campaign not in (campaign, unquote(campaign)):
        return (f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} naming {id_key.replace('_', ' ')} "
                f"'{shown(str(named_id), secrets_of(response), 100)}' of campaign "
                f"'{shown(str(named_campaign), secrets_of(response), 100)}'")
    missing = fields(ack)
    if missing:
        return f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} without {missing}"
    return None


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _collector_fields(ack: dict, sent: int | None = None) -> str:
    """The fields of the service's acknowledgement that are missing, of another type or counting more reports than
    were read or sent (``sent``, if known) ('' if none)."""
    accepted, rejected = ack.get("accepted"), ack.get("rejected")
    wrong = []
    n_read = ack.get("n_read")
    if not _is_count(accepted):
        wrong.append("'accepted' (an integer >= 0)")
    elif n_read is not None and (not _is_count(n_read) or accepted > n_read):
        wrong.append(f"'n_read' (an integer >= 'accepted', {accepted})")
    most = None if sent is None else f"at most the {sent} report(s) sent"
    if sent is not None and _is_count(accepted) and accepted > sent:
        wrong.append(f"'accepted' ({most}: {accepted})")
    if sent is not None and _is_count(n_read) and n_read > sent:
        wrong.append(f"'n_read' ({most}: {n_read})")
    if not isinstance(rejected, dict) or not all(isinstance(count, int) and not isinstance(count, bool)
                                                 for count in rejected.values()):
        wrong.append("'rejected' (an object of counts)")
    if not isinstance(ack.get("duplicate"), bool):
        wrong.append("'duplicate' (true or false)")
    return ", ".join(wrong)


def _relay_fields(ack: dict) -> str:
    """The fields of a relay's acknowledgement that are missing or of another type ('' if none)."""
    return "" if isinstance(ack.get("duplicate"), bool) else "'duplicate' (true or false)"
