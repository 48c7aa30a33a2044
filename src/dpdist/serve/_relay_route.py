"""How a device sends to a campaign collected through a relay: from whom it takes the key, and its tokens.

A relayed campaign's config names its relay, its HPKE key and its issuer.  The relay could change all
three in what it passes on (and read what a device sealed to a key of its own, or have the device
randomize with a larger epsilon), so a device takes them from a source the relay does not control
(docs/deployment.md, "Keys the relay cannot swap"; :mod:`dpdist.relay._identity`):

- the **collector**: the device was given the collector's URL, fetched the config there, and sends to
  the relay the config names;
- or any server, the relay included, when the device was given the campaign's **pin**: the identity
  document the server passes on must hash to it;
- a device that talks to the campaign's relay itself without a pin refuses (``pin_required``).

When the campaign names an issuer, each report needs one Privacy Pass token (RFC 9578 type 2): the
device checks that the issuer's key is the one the campaign names, gets one token per report with its
credential, *before* anything is randomized (a refusal depends on the credential, never on the value),
and sends each sealed report to the relay with ``Authorization: PrivateToken token="..."``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CampaignIdentityError

__all__ = ["RelayRoute", "resolve_route"]


@dataclass(frozen=True)
class RelayRoute:
    """Where and how a device sends a relayed campaign's reports: the relay's URL, the key to seal to, the protocol
    config to randomize with, and the issuer (None: the campaign takes no tokens)."""

    campaign: str
    url: str
    public_key: bytes
    config: dict
    issuer: dict | None

    def tokens(self, count: int, credential: str | None, issuer_url: str | None, *, transport: Any = None) -> list[bytes]:
        """``count`` tokens for this campaign from its issuer (``[b""] * count`` when it takes none)."""
        if self.issuer is None:
            return [b""] * count
        if count == 0:
            return []
        from ..privacypass import b64url_decode, fetch_token

        issuer = self.issuer
        if not credential:
            raise CampaignIdentityError(
                f"Campaign {self.campaign!r} admits a report only with a token from its issuer ({issuer['url']}): give "
                "the device's credential for that issuer (issuer_credential=, --issuer-credential or "
                "DPDIST_ISSUER_CREDENTIAL). Nothing was randomized or sent.", "credential_required")
        if issuer_url is not None and _origin(issuer_url) != _origin(issuer["url"]):
            raise CampaignIdentityError(
                f"Campaign {self.campaign!r} names the issuer {issuer['url']}, not {issuer_url}, for which this device holds "
                "its credential. Nothing was randomized or sent.", "issuer_mismatch")
        token_key, challenge = b64url_decode(issuer["token_key"], "token_key"), b64url_decode(issuer["challenge"], "challenge")
        self._check_issuer_key(issuer, token_key, transport)
        return [fetch_token(issuer["url"], issuer["key"], credential, challenge, token_key, transport=transport)
                for _ in range(count)]

    def _check_issuer_key(self, issuer: dict, token_key: bytes, transport: Any) -> None:
        """The issuer's own key for the campaign must be the one the campaign names (else the collector, which wrote the
        campaign, could name a key of its own and mint tokens)."""
        import httpx

        from ..privacypass import b64url_decode

        url = f"{issuer['url']}/issuer/v1/keys/{issuer['key']}"
        try:
            with httpx.Client(timeout=30.0, transport=transport) as client:
                answer = client.get(url)
            served = b64url_decode(answer.json().get("token_key", ""), "token_key") if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            served = None
        if served != token_key:
            raise CampaignIdentityError(
                f"The issuer's key {issuer['key']!r} at {issuer['url']} is not the key campaign {self.campaign!r} "
                "names (or the issuer did not say): its tokens would not be the issuer's. Nothing was randomized or sent.",
                "issuer_key_mismatch")


def resolve_route(campaign: str, server: str, document: dict, pin: str | None, fetch_identity) -> RelayRoute:
    """The route of a relayed campaign whose config ``document`` came from ``server`` (module docstring);
    ``fetch_identity()`` returns the identity document's bytes as ``server`` serves them."""
    from ..relay._envelope import decode_public_key
    from ..relay._identity import check_identity

    relay = document["relay"]
    if pin is not None:
        identity = check_identity(fetch_identity(), pin, campaign)
        relay, config, issuer = identity["relay"], identity["config"], identity["issuer"]
    else:
        config, issuer = document["config"], relay.get("issuer")
        if not relay.get("url"):
            raise CampaignIdentityError(
                f"Campaign {campaign!r} names no relay URL (it was created before relayed campaigns named their relay): "
                "its collector must create it again. Nothing was sent.", "no_relay_url")
        if _origin(relay["url"]) == _origin(server):
            raise CampaignIdentityError(
                f"{server} is campaign {campaign!r}'s relay, which must not be trusted with the campaign's key and config: "
                "give the device the collector's URL, or the campaign's pin (pin=, --pin; printed by `dpdist campaign "
                "create` and in the collector's config). Nothing was sent.", "pin_required")
    return RelayRoute(campaign, relay["url"].rstrip("/"), decode_public_key(relay["public_key"]), config, issuer)


def _origin(url: str) -> str:
    from ..local.ledger import normal_collector

    return normal_collector(url)
