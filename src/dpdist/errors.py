"""Every user-facing error (and warning) of dpdist.

Each class subclasses :class:`DPDistError` and the built-in exception that fits,
so ``except ValueError`` keeps working.  Messages name the argument, the bad
value and what is allowed, e.g.::

    The 'epsilon' parameter of GRR must be a finite float > 0. Got -1.0 instead.
"""

from __future__ import annotations

__all__ = [
    "DPDistError",
    "InvalidParameterError",
    "InvalidPrivacyParameterError",
    "OutOfDomainError",
    "InvalidValueTypeError",
    "MalformedReportError",
    "IncompatibleStateError",
    "MalformedDocumentError",
    "EmptyAggregateError",
    "MalformedDataError",
    "DatasetUnavailableError",
    "ServiceRefusedError",
    "ServiceUnavailableError",
    "PrivacyBudgetError",
    "CampaignIdentityError",
    "DPDistWarning",
    "ClippedValuesWarning",
    "MissingValuesError",
    "MissingValuesWarning",
    "ContributionBoundWarning",
    "SmallSampleWarning",
    "EachValueANewUserWarning",
    "MissingDependencyError",
    "InvalidTokenError",
    "SigningFailureError",
]


class DPDistError(Exception):
    """Base class of every error raised by dpdist."""


class InvalidParameterError(DPDistError, ValueError):
    """A parameter (other than a privacy budget) is outside its allowed set."""


class InvalidPrivacyParameterError(InvalidParameterError):
    """A privacy parameter (epsilon, delta) is not allowed: not finite, <= 0, ..."""


class OutOfDomainError(DPDistError, ValueError):
    """A user value lies outside the protocol's domain or bounds."""


class MissingValuesError(OutOfDomainError):
    """Values are missing (NaN, None, empty cells) and the caller did not say what to do with them
    (``missing="refuse"``, the default everywhere: :mod:`dpdist._missing`).  ``count`` is how many: a statistic of
    the caller's own data, told to the caller only."""

    def __init__(self, message: str, count: int = 0):
        super().__init__(message)
        self.count = count


class InvalidValueTypeError(DPDistError, TypeError):
    """User values (or another array argument) have the wrong dtype or shape."""


class MalformedReportError(DPDistError, ValueError):
    """A batch of reports cannot be read as reports of this protocol."""


class MalformedDataError(DPDistError, ValueError):
    """A data file (CSV or Parquet of user values) cannot be parsed: truncated, corrupt, ragged rows."""


class IncompatibleStateError(DPDistError, ValueError):
    """Two aggregator states (or a state and a protocol) have different configs."""


class MalformedDocumentError(InvalidParameterError, IncompatibleStateError):
    """A saved result (the JSON document of an estimate, a release, an audit, a statement) cannot be read back: a
    field is missing, of another type, NaN where JSON has none, or contradicted by the document's other fields.
    The message names the field (``from_dict`` of every result; :mod:`dpdist._documents`).  A bad argument and a
    state that does not fit at once: ``except InvalidParameterError`` and ``except IncompatibleStateError`` both
    catch it."""


class EmptyAggregateError(DPDistError, ValueError):
    """An estimate was requested from an aggregate that holds no report."""


class DatasetUnavailableError(DPDistError, ImportError):
    """A dataset's source package is not installed (install ``dpdist[data]``)."""


class ServiceRefusedError(DPDistError):
    """A dpdist collection service refused a request (``status`` and ``code`` from its JSON error body)."""

    def __init__(self, message: str, status: int = 0, code: str = ""):
        super().__init__(message)
        self.status, self.code = status, code


class ServiceUnavailableError(DPDistError, ConnectionError):
    """A dpdist collection service could not be reached (after the client's retries)."""


class CampaignIdentityError(DPDistError, ValueError):
    """A device refused to send to a campaign collected through a relay: it could not establish the campaign's
    config, key and issuer from a source the relay does not control (docs/explanation/threat-model.md, "Keys the relay cannot
    swap"); nothing was randomized or sent.

    ``code`` says why: ``"pin_mismatch"`` (the identity served does not hash to the pin the device was given),
    ``"pin_required"`` (the device talks to the campaign's relay without a pin), ``"issuer_mismatch"`` (the
    campaign names another issuer than the one the device holds a credential for), ``"issuer_key_mismatch"``
    (the issuer's key is not the one the campaign names), ``"tokens_each_mismatch"`` (the issuer publishes another
    ceiling of tokens per credential for the key than the campaign's identity states) or ``"credential_required"``.
    """

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


class PrivacyBudgetError(DPDistError, ValueError):
    """A budget refused a charge: a device's privacy ledger refused a report (it would overspend the
    owner's budget, or a collector changed the privacy parameters of a memo the device keeps), or a
    budget session (:mod:`dpdist.budget`) refused a release or campaign that would overspend it.

    ``reason`` is the sentence to show the person; ``remaining`` the budget left (epsilon) and
    ``remaining_delta`` its delta (0 for a ledger, which spends pure epsilon).
    """

    def __init__(self, message: str, remaining: float = 0.0, remaining_delta: float = 0.0):
        super().__init__(message)
        self.reason, self.remaining, self.remaining_delta = message, remaining, remaining_delta


class DPDistWarning(UserWarning):
    """Base class of every warning dpdist issues."""


class ClippedValuesWarning(DPDistWarning):
    """Values outside a numerical protocol's bounds were clipped to them before randomization (``clip=True``).

    The count is computed on the device and only shown there: no report carries it.
    """


class MissingValuesWarning(DPDistWarning):
    """Missing values were left out (``missing="drop"``) or counted as a value (``missing=<value>``); ``count`` is how
    many, and ``details`` says more where the warner knows it (a query: how many rows each statistic lost), for the
    holder of the data only (no report or release carries it)."""

    def __init__(self, message: str, count: int = 0, details: dict | None = None):
        super().__init__(message)
        self.count = count
        self.details = details or {}


class ContributionBoundWarning(DPDistWarning):
    """Rows beyond ``max_contributions`` per person were left out of a central release (a uniformly random choice of
    each person's rows; ``count`` is how many), or ``max_contributions="auto"`` drew its bound where the draw often
    lands more than 2x from the quantile (``count``: the persons).  ``details`` says more where the warner knows it (a
    query: what each statistic lost, and the bounds that would keep every row).  For the holder of the data only (no
    release carries it)."""

    def __init__(self, message: str, count: int = 0, details: dict | None = None):
        super().__init__(message)
        self.count = count
        self.details = details or {}


class SmallSampleWarning(DPDistWarning):
    """A release or estimate whose own error bound, at its number of reports or records, is too wide for its answers
    to say much (its notes say it too, with the number); computed from public quantities, never from the data."""


class EachValueANewUserWarning(DPDistWarning):
    """``privatize`` of a longitudinal (memoized) protocol randomized each value as a different user.

    One device reporting over rounds keeps its memo: ``protocol.client()``, a
    :class:`~dpdist.local.ledger.PrivacyLedger`, or ``dpdist privatize --memo FILE``.
    """


class MissingDependencyError(DPDistError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it (``dpdist[serve]``)."""


class InvalidTokenError(InvalidParameterError):
    """A Privacy Pass token (RFC 9577, section 2.2), or the blind RSA signature under it (RFC 9474), does not verify.

    ``reason`` says why, for a refusal's machine-readable code: ``"malformed"`` (not a token of its
    length and layout), ``"wrong_token_type"`` (not type 0x0002), ``"wrong_challenge"`` (made for another
    TokenChallenge), ``"wrong_key"`` (made for another issuer key) or ``"invalid_signature"`` (its
    authenticator does not verify: forged, altered, or signed by another key).
    """

    def __init__(self, message: str, reason: str = "invalid_signature"):
        super().__init__(message)
        self.reason = reason


class SigningFailureError(DPDistError, RuntimeError):
    """A blind signature failed its own check before it left the signer (RFC 9474, section 4.3: a faulty computation)."""
