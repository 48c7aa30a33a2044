"""What a campaign collected through a relay states: its local guarantee, the amplified central one, the assumptions."""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass

from .._guarantee import PrivacyGuarantee, with_assumptions
from ..local import from_config
from ._accounting import account

__all__ = ["ASSUMPTIONS", "RELAY_TRACES", "Admission", "relayed_statement", "relayed_assumptions", "device_bound", "report_target"]

#: what the central guarantee rests on, party by party (docs/how-to/anonymous-collection.md, "Anonymous collection", "Threat model"),
#: by the names of the campaign's settings; a campaign's statement states its own numbers (:func:`relayed_assumptions`)
ASSUMPTIONS = (
    "relay: does not collude with the collector (it learns who sent a report, never what: the reports are sealed to "
    "the collector's key); it is not trusted with which reports it forwards, nor with batch sizes: each token is bound "
    "to the report it was made for, so a report the relay drops or delays is missing (data, not privacy) and one it "
    "seals itself counts only under the token of a colluding device, and the guarantee is computed at the smallest "
    "batch the collector admitted",
    "issuer: gives tokens to the holders of its credentials only, at most `tokens_each` each, none to the collector "
    "or the relay beyond its policy (it learns who got a token, never which: the signature is blind)",
    "devices: at most `colluding` devices (credentials of the issuer) are the collector's or the relay's, or give "
    "either their values or their tokens (a public campaign setting), each credential gives at most `tokens_each` "
    "tokens (the ceiling the issuer publishes with the campaign's key) and each token admits one report, so at most "
    "`colluding_reports` = colluding x tokens_each of a batch's admitted reports are not honest devices' reports",
    "collector: stores no per-device id and no arrival time, and refuses direct submissions to the campaign",
    "envelopes: a batch may hold reports in dpdist's own envelope and Oblivious HTTP requests (RFC 9458), which the "
    "collector tells apart (it opens each its own way; so can the relay, by their lengths): a report is hidden among "
    "the reports of its batch in the same envelope only, so a batch holding both counts as its smaller envelope "
    "group in `smallest_batch` (the relay forms each envelope's part of a batch from at least K reports)",
    "per report: the central guarantee protects one report (one token) changed; a device that sends several reports "
    "into one batch (up to `tokens_each` per credential) is protected by `central.per_device` (group privacy over its "
    "reports), and its reports in several batches or rounds compose on the device (its ledger)",
)

#: what the collector must not read where the servers may send traces (OpenTelemetry: :mod:`dpdist._http._telemetry`),
#: the relay's tracing backend being one more party; the threat model's words (docs/explanation/threat-model.md shows
#: this text: docs/conf.py substitutes it)
RELAY_TRACES = ("with traces on reads none of the relay's traces: they go to a backend of the relay's operator, since "
                "a relay span per request holds its arrival time, which beside the collector's own view of the fetches "
                "from each address would tell when a report was sent (each delivery of the relay starts a trace of its "
                "own: the delivery's trace, the one the collector joins, shares no trace id with a device's request)")


def device_bound(epsilon: float, delta: float, reports: int) -> tuple[float, float]:
    r"""What one device's ``reports`` reports in one batch are, when each report is :math:`(\varepsilon, \delta)` in it.

    Group privacy over the device's reports (Dwork & Roth 2014, Thm. 2.2, with the :math:`\delta` of chaining the
    steps): change the device's value one report at a time; each step is a neighbouring pair of batches that differ in
    one report, its other reports being among the accountant's arbitrary fixed inputs, so the device's :math:`T`
    reports are :math:`(T\varepsilon, \delta \sum_{j < T} e^{j\varepsilon})`.  An upper bound: the exact loss of
    :math:`T` reports of one value in a GRR batch is below it (``tests/amplification/test_statement.py``).
    """
    return reports * epsilon, min(1.0, delta * _spread(epsilon, reports))


#: the per-device line of a device's own reports composed: it rests on no party, so it names no assumption
LOCAL_ONLY = "which holds whatever the relay, the issuer, the collector or other devices do"


def relayed_assumptions(admission: "Admission", n: int | None = None, traces: bool = False) -> tuple[str, ...]:
    """:data:`ASSUMPTIONS` as one campaign states them: the devices' (the third) with its ``colluding``, ``tokens_each``
    and ``colluding_reports``, and the ``n`` honest reports of the smallest batch its central guarantee is computed
    among (when there is one); the setting's name stays beside each number, so a reader can find it in the campaign's
    ``admission``.  With ``traces`` (the deployment may send traces), the collector's ends with :data:`RELAY_TRACES`."""
    colluding, tokens_each, known = admission.colluding, admission.tokens_each, admission.colluding_reports
    tokens = (f"each credential gives at most {tokens_each} token(s) (`tokens_each`, the ceiling the issuer publishes "
              "with the campaign's key)" if tokens_each is not None else
              "each credential gives at most `tokens_each` tokens (not stated by this campaign's identity)")
    if known == 0:
        known_text = "so every admitted report of a batch is an honest device's (`colluding_reports` = 0)"
    elif known is not None:
        known_text = (f"so at most {known} (`colluding_reports` = {colluding} x {tokens_each}) of a batch's admitted "
                      "reports are not honest devices' reports")
    else:
        known_text = "so the reports that are not honest devices' are not bounded"
    among = "" if n is None else f", and the central guarantee is computed among the n = {n} honest reports of the smallest batch"
    devices = (f"devices: at most {colluding} device(s) (`colluding`: credentials of the issuer) are the collector's or "
               f"the relay's, or give either their values or their tokens (a public campaign setting), {tokens} and each "
               f"token admits one report, {known_text}{among}")
    per_report = ASSUMPTIONS[-1] if tokens_each is None else ASSUMPTIONS[-1].replace(
        "(up to `tokens_each` per credential)", f"(up to {tokens_each} per credential, `tokens_each`)")
    collector = ASSUMPTIONS[3] + (f", and {RELAY_TRACES}" if traces else "")
    return (*ASSUMPTIONS[:2], devices, collector, *ASSUMPTIONS[4:-1], per_report)


def _spread(epsilon: float, reports: int) -> float:
    r""":math:`\sum_{j < T} e^{j\varepsilon}` (``inf`` past a double's range)."""
    if (reports - 1) * epsilon > 700:
        return math.inf
    return sum(math.exp(j * epsilon) for j in range(reports))


def report_target(epsilon: float, delta: float, reports: int) -> tuple[float, float]:
    r"""The :math:`(\varepsilon_1, \delta_1)` one report must meet so that a device's ``reports`` reports meet
    :math:`(\varepsilon, \delta)` by :func:`device_bound`: :math:`\varepsilon_1 = \varepsilon/T`,
    :math:`\delta_1 = \delta / \sum_{j<T} e^{j\varepsilon/T}`."""
    one = epsilon / reports
    return one, delta / sum(math.exp(j * one) for j in range(reports))


@dataclass(frozen=True)
class Admission:
    """Who may put a report in a relayed campaign's batches: the campaign's issuer (None: anyone), whether it is
    independent of the collector, ``colluding``, the public bound on devices (the issuer's credentials) that are the
    collector's or the relay's or give either their values or tokens, and ``tokens_each``, the most tokens (reports) one
    credential gives, as the issuer publishes it with the campaign's key (None: an identity made before issuers
    published it)."""

    issuer: str | None
    independent: bool
    colluding: int
    tokens_each: int | None = None

    @property
    def colluding_reports(self) -> int | None:
        """The most admitted reports that are not honest devices': ``colluding x tokens_each`` (None if unknown)."""
        if self.colluding == 0:
            return 0
        return None if self.tokens_each is None else self.colluding * self.tokens_each


def relayed_statement(protocol, smallest_batch: int | None, reports: int, delta: float, admission: Admission,
                      traces: bool = False) -> dict:
    """The guarantees of a relayed campaign whose batches so far held at least ``smallest_batch`` admitted reports.

    A report is *admitted* when the collector verified its token (valid for the campaign, never spent
    before), opened it and read exactly one report from it; messages it could not open or verify
    never count (docs/explanation/accounting.md, "Accounting").  ``central`` is the amplified guarantee at
    ``n = smallest_batch - colluding_reports`` (each report was shuffled among the others of its batch,
    at most ``colluding_reports = colluding x tokens_each`` of which are not honest devices': every count
    in reports), per report (its ``describe`` says so, and ends with the assumptions it rests on,
    :func:`relayed_assumptions`: the statement's ``assumptions``), with ``per_device``: what a device that sends its
    ``tokens_each`` reports into one batch keeps (:func:`_per_device`; None when ``tokens_each`` is unknown), its
    ``describe`` ending with its own ``assumptions`` (those but "per report"; none when it is the device's local
    reports composed, which hold whatever the parties do),
    None before the first batch, or a ``reason`` and its ``code`` when the collector could
    have filled a batch itself (no issuer, or one it runs), for memoized protocols, when the identity
    does not bound the colluding devices' reports (no ``tokens_each``), or when the colluding reports
    leave fewer than two honest ones in the smallest batch.  ``traces``: the deployment may send traces
    (:func:`relayed_assumptions`).
    """
    statement = {
        "local": {**protocol.guarantee.to_dict(), "describe": protocol.guarantee.describe()},
        "reports": int(reports),
        "smallest_batch": smallest_batch,
        "admission": {"issuer": admission.issuer, "issuer_independent": admission.independent,
                      "colluding": admission.colluding, "tokens_each": admission.tokens_each,
                      "colluding_reports": admission.colluding_reports},
        "assumptions": list(relayed_assumptions(admission, traces=traces)),
        "central": None,
    }
    refusal = _refusal(protocol, smallest_batch, admission)
    if refusal is not None:
        statement["central"] = {"reason": refusal[1], "code": refusal[0]}
    elif smallest_batch is not None:
        hidden = int(smallest_batch) - int(admission.colluding_reports or 0)
        config = json.dumps(protocol.config(), sort_keys=True)
        assumed = relayed_assumptions(admission, hidden, traces)
        statement["assumptions"] = list(assumed)
        central = dict(_central(config, hidden, float(delta)))
        central.update(_central_line(central, float(protocol.guarantee.epsilon), assumed))
        per_device = None if admission.tokens_each is None else dict(_per_device(config, hidden, float(delta),
                                                                                  int(admission.tokens_each)))
        if per_device is not None:
            per_device.update(_per_device_line(per_device, assumed))
        central["per_device"] = per_device
        statement["central"] = central
    return statement


def _central_line(central: dict, epsilon0: float, assumed: tuple[str, ...]) -> dict:
    """The central guarantee's ``describe`` and ``assumptions``, per report: amplified, it rests on the campaign's
    assumptions; not amplified (its epsilon is the report's own epsilon0: batches too small), it is the report's local
    guarantee, pure, which holds whatever the parties do (its line says so and names none), as ``per_device``'s local
    case (:func:`_per_device_line`)."""
    if central["epsilon"] < epsilon0:
        return {"describe": with_assumptions(central["describe"] + ", per report", assumed), "assumptions": list(assumed)}
    local = PrivacyGuarantee(epsilon0, 0.0, "replace", "central")
    return {**local.to_dict(), "describe": f"{local.describe()}, per report: its local report, {LOCAL_ONLY}",
            "how": "its local report", "assumptions": []}


def _per_device_line(per_device: dict, assumed: tuple[str, ...]) -> dict:
    """The per-device guarantee's ``describe`` and ``assumptions``: a device's own reports composed hold whatever the
    parties do (its line says so and names none); group privacy over amplified reports rests on the campaign's
    assumptions but the last, "per report" (this line is per device: the device's reports in one batch)."""
    if per_device["delta"] == 0 and per_device["how"] == f"its {per_device['tokens_each']} local report(s) composed":
        return {"describe": f"{per_device['describe']}: {per_device['how']}, {LOCAL_ONLY}", "assumptions": []}
    own = assumed[:-1]  # ASSUMPTIONS' last is "per report"
    return {"describe": with_assumptions(per_device["describe"], own), "assumptions": list(own)}


def _refusal(protocol, smallest_batch: int | None, admission: Admission) -> tuple[str, str] | None:
    """Why no central guarantee is stated, as ``(code, reason)``, or None (one is, or none yet: no batch)."""
    if admission.issuer is None:
        return "no_admission", ("no admission: anyone, the collector included, can send reports through the relay and "
                                "fill a batch with its own, so against the collector only the local guarantee holds (the "
                                "relay still hides who sent which report)")
    if not admission.independent:
        return "issuer_run_by_collector", ("the campaign's issuer is run by the collector, which can mint tokens for "
                                           "reports of its own and fill a batch with them: against the collector only the "
                                           "local guarantee holds")
    if smallest_batch is None:
        return None
    if protocol.tags.memoized:
        return "memoized", "a memoized protocol's reports share a device's memo: no amplified guarantee"
    colluding = admission.colluding_reports
    if colluding is None:
        return "tokens_each_unknown", (f"the campaign's identity does not state how many tokens its issuer gives a "
                                       f"credential (tokens_each; made before issuers published it), so the reports of "
                                       f"its {admission.colluding} colluding device(s) are not bounded: create the "
                                       "campaign again for a stated guarantee")
    if smallest_batch - colluding < 2:
        return "colluding_reports_fill_batch", (
            f"{admission.colluding} colluding device(s) x {admission.tokens_each} tokens each = {colluding} reports that may "
            f"not be honest devices', in a batch of {smallest_batch} admitted reports, leave "
            f"{max(0, smallest_batch - colluding)} honest one(s): a report hides among no others (the batches need more "
            f"than {colluding + 1} reports, or fewer colluding reports)")
    return None


@functools.lru_cache(maxsize=256)
def _central(config: str, n: int, delta: float) -> tuple:
    result = account(from_config(json.loads(config)), n, delta)
    guarantee = PrivacyGuarantee(max(result.epsilon, 1e-12), result.delta, "replace", "central")
    return tuple({**guarantee.to_dict(), "describe": guarantee.describe(), "n": n, "method": result.method,
                  "notes": list(result.notes)}.items())


@functools.lru_cache(maxsize=256)
def _per_device(config: str, n: int, delta: float, tokens_each: int) -> tuple:
    r"""A device's ``tokens_each`` reports in one batch of ``n`` honest ones, at the campaign's ``delta``: one report's
    :math:`\varepsilon_1` at :math:`\delta_1`, with :math:`\delta_1 \sum_{j<T} e^{j\varepsilon_1} \le \delta`
    (:func:`device_bound`; :math:`\delta_1` lowered until it holds, at worst :math:`\varepsilon_1 = \varepsilon_0`), or
    the pure bound :math:`T \varepsilon_0` of the local reports composed, whichever has the smaller epsilon."""
    protocol = from_config(json.loads(config))
    epsilon0 = float(protocol.guarantee.epsilon)
    if not _spread(epsilon0, tokens_each) < math.inf:  # the group bound's delta_1 is below any double: local only
        guarantee = PrivacyGuarantee(tokens_each * epsilon0, 0.0, "replace", "central")
        return tuple({**guarantee.to_dict(), "describe": f"{guarantee.describe()}, per device sending {tokens_each} "
                      "report(s) into one batch", "tokens_each": tokens_each,
                      "how": f"its {tokens_each} local report(s) composed"}.items())
    one_delta = delta
    for _ in range(40):
        one = min(account(protocol, n, one_delta).epsilon, epsilon0)
        spread = _spread(one, tokens_each)
        if one_delta * spread <= delta * (1 + 1e-9):
            break
        one_delta = delta / spread
    else:  # never met in 40 steps: at epsilon0 itself the spread is largest, so this delta_1 always meets delta
        one_delta = delta / _spread(epsilon0, tokens_each)
        one = min(account(protocol, n, one_delta).epsilon, epsilon0)
    epsilon, device_delta = device_bound(one, one_delta, tokens_each)
    how = (f"group privacy over its {tokens_each} report(s), each ({one:.4g}, {one_delta:.3g}) among {n} honest ones"
           if tokens_each > 1 else "its one report")
    if tokens_each * epsilon0 <= epsilon:
        epsilon, device_delta, how = tokens_each * epsilon0, 0.0, f"its {tokens_each} local report(s) composed"
    guarantee = PrivacyGuarantee(max(epsilon, 1e-12), device_delta, "replace", "central")
    return tuple({**guarantee.to_dict(), "describe": f"{guarantee.describe()}, per device sending {tokens_each} "
                  "report(s) into one batch", "tokens_each": tokens_each, "how": how}.items())
