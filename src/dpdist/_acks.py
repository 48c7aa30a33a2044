"""What a device takes as the acknowledgement of what it sent: the server's answer naming that campaign and that id.

A proxy, a captive portal, a stale or misrouted server, or anyone on the path can answer ``200`` with another body;
a client that takes any ``200`` as "counted" forgets the batch, and its reports are lost (docs/deployment.md, "What
counts as an acknowledgement").
An answer acknowledges a batch only when it is a JSON object that names the campaign and the batch id sent (the
relay's: the report id sent) with the fields the service's acknowledgement has (``accepted``, ``rejected``,
``duplicate``; the relay's: ``duplicate``).  Any other answer, a body that is not JSON or is cut short included, is no
acknowledgement: the client sends the same id and bytes again under its retry rule (:mod:`dpdist._retry`), and says
so when its window runs out.  The JavaScript (``clients/js/src/acks.js``) and Java (``Client.ackProblem``) clients
apply the same rule, and so does ``dpdist relay`` of the collector's acknowledgement of a relayed batch
(``relay._forwarder``: another answer is delivered again, never marked delivered).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from ._retry import NOT_ACKNOWLEDGED

__all__ = ["batch_ack_problem", "relay_ack_problem"]


def batch_ack_problem(response: Any, campaign: str, batch_id: str) -> str | None:
    """None if ``response`` is the service's acknowledgement of batch ``batch_id`` of ``campaign``, else what it is."""
    return _problem(response, campaign, "batch_id", batch_id, _collector_fields)


def relay_ack_problem(response: Any, campaign: str, report_id: str) -> str | None:
    """None if ``response`` is a relay's acknowledgement of report ``report_id`` of ``campaign``, else what it is."""
    return _problem(response, campaign, "report_id", report_id, _relay_fields)


def _problem(response: Any, campaign: str, id_key: str, sent: str, fields) -> str | None:
    what = f"{id_key.replace('_', ' ')} {sent!r} of campaign {campaign!r}"
    try:
        ack = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return (f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} with a body that is not JSON "
                f"({len(response.content)} bytes, {response.headers.get('content-type') or 'no content type'})")
    if not isinstance(ack, dict):
        return f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} with JSON that is not an object"
    named_campaign, named_id = ack.get("campaign"), ack.get(id_key)
    if named_id != sent or named_campaign not in (campaign, unquote(campaign)):
        return (f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} naming {id_key.replace('_', ' ')} "
                f"{str(named_id)[:100]!r} of campaign {str(named_campaign)[:100]!r}")
    missing = fields(ack)
    if missing:
        return f"{NOT_ACKNOWLEDGED} of {what}: HTTP {response.status_code} without {missing}"
    return None


def _collector_fields(ack: dict) -> str:
    """The fields of the service's acknowledgement that are missing or of another type ('' if none)."""
    accepted, rejected = ack.get("accepted"), ack.get("rejected")
    wrong = []
    if not isinstance(accepted, int) or isinstance(accepted, bool) or accepted < 0:
        wrong.append("'accepted' (an integer >= 0)")
    if not isinstance(rejected, dict) or not all(isinstance(count, int) and not isinstance(count, bool)
                                                 for count in rejected.values()):
        wrong.append("'rejected' (an object of counts)")
    if not isinstance(ack.get("duplicate"), bool):
        wrong.append("'duplicate' (true or false)")
    return ", ".join(wrong)


def _relay_fields(ack: dict) -> str:
    """The fields of a relay's acknowledgement that are missing or of another type ('' if none)."""
    return "" if isinstance(ack.get("duplicate"), bool) else "'duplicate' (true or false)"
