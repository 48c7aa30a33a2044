"""Every user-facing error of dpdist is a DPDistError and the built-in exception that fits, and keeps its fields."""

from __future__ import annotations

import pytest

from dpdist import errors


def test_every_error_is_a_dpdist_error_and_every_warning_a_dpdist_warning():
    classes = [getattr(errors, name) for name in errors.__all__]
    for kind in classes:
        assert issubclass(kind, errors.DPDistWarning if issubclass(kind, Warning) else errors.DPDistError), kind
    assert {kind for kind in classes if issubclass(kind, Warning)} >= {errors.ClippedValuesWarning, errors.SmallSampleWarning}


@pytest.mark.parametrize("kind, builtin", [
    (errors.InvalidParameterError, ValueError), (errors.InvalidPrivacyParameterError, ValueError),
    (errors.OutOfDomainError, ValueError), (errors.MissingValuesError, ValueError),
    (errors.InvalidValueTypeError, TypeError), (errors.MalformedReportError, ValueError),
    (errors.IncompatibleStateError, ValueError), (errors.EmptyAggregateError, ValueError),
    (errors.DatasetUnavailableError, ImportError), (errors.MissingDependencyError, ImportError),
    (errors.ServiceUnavailableError, ConnectionError), (errors.SigningFailureError, RuntimeError),
])
def test_an_error_is_caught_by_the_builtin_exception_that_fits(kind, builtin):
    with pytest.raises(builtin, match="named"):
        raise kind("the argument is named")


def test_a_document_error_is_a_parameter_and_a_state_error_and_the_refusals_keep_their_fields():
    assert issubclass(errors.MalformedDocumentError, errors.InvalidParameterError)
    assert issubclass(errors.MalformedDocumentError, errors.IncompatibleStateError)
    refused = errors.ServiceRefusedError("refused", status=409, code="campaign_closed")
    assert (refused.status, refused.code, str(refused)) == (409, "campaign_closed", "refused")
    assert errors.CampaignIdentityError("no pin", "pin_required").code == "pin_required"
    assert errors.InvalidTokenError("bad").reason == "invalid_signature"
    spent = errors.PrivacyBudgetError("over budget", remaining=0.5, remaining_delta=1e-9)
    assert (spent.reason, spent.remaining, spent.remaining_delta) == ("over budget", 0.5, 1e-9)
