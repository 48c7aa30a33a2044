"""How a device sends to a campaign collected through a relay: from whom it takes the key, and its tokens.

A relayed campaign's config names its relay, its Oblivious HTTP key configuration and its issuer.  The relay
could change all three in what it passes on (and read what a device encapsulated to a key of its own, or have
the device randomize with a larger epsilon), and the collector could give one device a config of its own (a
tag), so a device takes them from the campaign's **identity** (:mod:`dpdist._wire._identity`), from a source
the relay does not control, and sends the identity's pin with every report (docs/explanation/threat-model.md, "Keys
the relay cannot swap"):

- the **collector**: the device was given the collector's URL; the identity it serves must hash to the
  pin its config states;
- or any server, the relay included, when the device was given the campaign's **pin**: the identity
  the server passes on must hash to it;
- a device that talks to the campaign's relay itself without a pin refuses (``pin_required``).  (A
  device trusts the URL it is given: given a relay's URL without the pin, it cannot tell a relay that
  calls itself by another name from the collector.)

The relay pins the identity of each campaign and refuses reports made under another, so a tagged
device's report never reaches a batch.  Each report is one RFC 9458 request encapsulated to the key
configuration of the identity (``relay.ohttp``: :mod:`dpdist._wire._ohttp_report`); a campaign whose identity
names none (made before relayed campaigns had one) is refused, ``no_ohttp_key``, before anything is drawn.  When
the campaign names an issuer, each report needs one Privacy Pass token (RFC 9578 type 2) bound to the identity,
and to the report it admits: a device holding a credential for an issuer refuses a campaign that names another
issuer or none (anyone could fill its batches), checks that the issuer's key and its ceiling ``tokens_each`` (what
the campaign's guarantee counts a colluding credential as) are the ones the campaign names, and gets one token per
report *before* anything is randomized (a refusal depends on the credential, never on the value), each with the
seed of the HPKE key its report will be encapsulated with (the token's nonce commits to it:
:mod:`dpdist._wire._binding`), then encapsulates each report with its token's key (:meth:`RelayRoute.seal`) and
sends it to the relay with ``Authorization: PrivateToken token="..."``.  Tokens are yielded one by one, so that
the ones obtained before the issuer refuses (a credential exhausted) are kept by the caller.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .._redact import redacted_url
from ..errors import CampaignIdentityError, InvalidParameterError, MalformedReportError, ServiceRefusedError
from ..local.ledger import normal_collector

__all__ = ["RelayRoute", "resolve_route"]


@dataclass(frozen=True)
class RelayRoute:
    """Where and how a device sends a relayed campaign's reports: the relay's URL, the protocol config to randomize with,
    the issuer (None: the campaign takes no tokens), the identity's pin, and the Oblivious HTTP key configuration its
    reports are encapsulated to (the identity's ``relay.ohttp``)."""

    campaign: str
    url: str
    config: dict
    issuer: dict | None
    pin: str
    ohttp: Any
    _issuer_checked: bool = field(default=False, compare=False, repr=False)

    def tokens(self, count: int, credential: str | None, issuer_url: str | None, *, transport: Any = None,
               retry_window: float | None = None, timeout: float = 30.0) -> Iterator[tuple[bytes, bytes]]:
        """``count`` tokens for this campaign from its issuer, each with the seed of the key its report is to be
        encapsulated with (:meth:`seal`), yielded as each arrives (``(b"", b"")`` ``count`` times when it takes none), after the
        checks of the module docstring (made when the first is asked for, even if ``count`` is 0); each token request's
        answer whole within ``timeout`` seconds (the device's client's)."""
        issuer = self.issuer
        if issuer is None:
            if credential:
                raise CampaignIdentityError(
                    f"Campaign {self.campaign!r} names no issuer: anyone, its collector included, can fill its batches, "
                    f"while this device holds a credential of {issuer_url} for a campaign that admits reports by token. "
                    "Nothing was randomized or sent.", "issuer_mismatch")
            yield from [(b"", b"")] * count
            return
        if not credential:
            raise CampaignIdentityError(
                f"Campaign {self.campaign!r} admits a report only with a token from its issuer ({redacted_url(issuer['url'])}): give "
                "the device's credential for that issuer and the issuer's URL (issuer_credential= and issuer=, "
                "--issuer-credential and --issuer). Nothing was randomized or sent.", "credential_required")
        if issuer_url is None or _origin(issuer_url) != _origin(issuer["url"]):
            raise CampaignIdentityError(
                f"Campaign {self.campaign!r} names the issuer {redacted_url(issuer['url'])}, not {redacted_url(str(issuer_url))}, for which this device holds "
                "its credential. Nothing was randomized or sent.", "issuer_mismatch")
        if count == 0:
            return
        from ..privacypass import b64url_decode, fetch_token  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._binding import seed_nonce  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._identity import campaign_challenge  # lazy: relayed campaigns only (~50 ms at import)

        token_key, challenge = b64url_decode(issuer["token_key"], "token_key"), campaign_challenge(issuer, self.pin)
        if not self._issuer_checked:
            self._check_issuer_key(issuer, token_key, transport)
            object.__setattr__(self, "_issuer_checked", True)  # once per route: the issuer's key of a campaign never changes
        retrying: dict[str, Any] = {} if retry_window is None else {"retries": None, "retry_window": retry_window}
        for _ in range(count):
            seed = secrets.token_bytes(32)  # the report's HPKE ephemeral key: DeriveKeyPair(seed)
            yield fetch_token(issuer["url"], issuer["key"], credential, challenge, token_key, transport=transport,
                              timeout=timeout, nonce=seed_nonce(challenge, seed), **retrying), seed

    def seal(self, body: bytes, content_type: str, seed: bytes | None = None) -> bytes:
        """One report encapsulated for the relay to the identity's Oblivious HTTP key configuration (an RFC 9458
        request), with the key of ``seed`` (its token's) or a fresh one (a campaign without tokens)."""
        from .._wire._ohttp_report import encapsulate_report  # lazy: relayed campaigns only (~50 ms at import)

        return encapsulate_report(self.ohttp, self.campaign, body, content_type, seed=seed)

    def valid_token(self, token: bytes, sealed: bytes) -> bool:
        """Whether ``token`` verifies under the issuer key and the token challenge of this campaign's identity, and is
        bound to the report ``sealed`` (the bytes sent)."""
        from ..privacypass import b64url_decode, verify_token  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._binding import is_bound  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._identity import campaign_challenge  # lazy: relayed campaigns only (~50 ms at import)

        if self.issuer is None:
            return False
        try:
            verify_token(token, b64url_decode(self.issuer["token_key"], "token_key"), campaign_challenge(self.issuer, self.pin))
        except InvalidParameterError:  # InvalidTokenError included
            return False
        return is_bound(token, sealed)

    def _check_issuer_key(self, issuer: dict, token_key: bytes, transport: Any) -> None:
        """The issuer's own key for the campaign, and its ceiling ``tokens_each`` when the identity states one, must be
        the ones the campaign names (else the collector, which wrote the campaign, could name a key of its own and mint
        tokens, or count each colluding credential as fewer reports than it gives)."""
        import httpx  # lazy: optional extra dpdist[serve]

        from ..privacypass import b64url_decode  # lazy: relayed campaigns only (~50 ms at import)
        from .._http._deadline import ACK_ANSWER_BYTES, request_within  # lazy: it imports httpx (optional extra dpdist[serve])

        url = f"{issuer['url']}/issuer/v1/keys/{issuer['key']}"
        try:
            with httpx.Client(timeout=30.0, transport=transport) as client:
                answer = request_within(client, "GET", url, 30.0, limit=ACK_ANSWER_BYTES)  # a key: a few hundred bytes
            document = answer.json() if answer.status_code == 200 else {}
            served = b64url_decode(document.get("token_key", ""), "token_key") if document else None
        except (httpx.HTTPError, ServiceRefusedError, ValueError, AttributeError):
            served, document = None, {}
        if served != token_key:
            raise CampaignIdentityError(
                f"The issuer's key {issuer['key']!r} at {redacted_url(issuer['url'])} is not the key campaign {self.campaign!r} "
                "names (or the issuer did not say): its tokens would not be the issuer's. Nothing was randomized or sent.",
                "issuer_key_mismatch")
        if "tokens_each" in issuer and document.get("tokens_each") != issuer["tokens_each"]:
            raise CampaignIdentityError(
                f"Campaign {self.campaign!r} states that a credential of the issuer's key {issuer['key']!r} gives at most "
                f"{issuer['tokens_each']} token(s); the issuer at {issuer['url']} publishes {document.get('tokens_each')!r}: "
                "the campaign's guarantee would count each colluding credential as fewer reports than it gives. Nothing "
                "was randomized or sent.", "tokens_each_mismatch")


def resolve_route(campaign: str, server: str, document: dict, pin: str | None, fetch_identity) -> RelayRoute:
    """The route of a relayed campaign whose config ``document`` came from ``server`` (module docstring);
    ``fetch_identity()`` returns the identity document's bytes as ``server`` serves them."""
    from .._wire._identity import check_identity, pin_of  # lazy: relayed campaigns only (~50 ms at import)

    relay = document["relay"]
    if pin is None:
        if not relay.get("url") or not relay.get("pin"):
            raise CampaignIdentityError(
                f"Campaign {campaign!r} names no relay URL or identity (it was created before relayed campaigns had "
                "them): its collector must create it again. Nothing was sent.", "no_relay_url")
        if _origin(relay["url"]) == _origin(server):
            raise CampaignIdentityError(
                f"{redacted_url(server)} is campaign {campaign!r}'s relay, which must not be trusted with the campaign's key and config: "
                "give the device the collector's URL, or the campaign's pin (pin=, --pin; printed by `dpdist campaign "
                "create` and in the collector's config). Nothing was sent.", "pin_required")
    identity_bytes = fetch_identity()
    identity = check_identity(identity_bytes, relay.get("pin") if pin is None else pin, campaign)
    served = (relay.get("issuer") or {}).get("challenge")
    issuer = identity["issuer"]
    if served is not None and issuer is not None:
        from ..privacypass import b64url_decode  # lazy: relayed campaigns only (~50 ms at import)
        from .._wire._identity import campaign_challenge  # lazy: relayed campaigns only (~50 ms at import)

        if b64url_decode(served, "challenge") != campaign_challenge(issuer, pin_of(identity_bytes)):
            raise CampaignIdentityError(f"Campaign {campaign!r}'s config states a token challenge that is not its "
                                        "identity's. Nothing was sent.", "challenge_mismatch")
    from .._wire._ohttp_report import campaign_key_config  # lazy: relayed campaigns only (~50 ms at import)

    try:
        ohttp = campaign_key_config(identity["relay"])
    except MalformedReportError as error:
        raise CampaignIdentityError(f"Campaign {campaign!r}'s identity names an unusable Oblivious HTTP key configuration: "
                                    f"{error} Nothing was sent.", "ohttp_key_mismatch") from None
    if ohttp is None:
        raise CampaignIdentityError(
            f"Campaign {campaign!r}'s identity names no Oblivious HTTP key configuration (it was made before relayed "
            "campaigns had one, and dpdist's own envelope, the only one it takes, is retired on devices): its collector "
            "must create it again. Nothing was drawn or sent.", "no_ohttp_key")
    return RelayRoute(campaign, identity["relay"]["url"].rstrip("/"), identity["config"], issuer, pin_of(identity_bytes),
                      ohttp)


def _origin(url: str) -> str:
    return normal_collector(url)
