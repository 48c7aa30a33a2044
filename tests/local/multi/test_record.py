"""A multi-attribute record (dpdist.local.multi._record): a record with an attribute the schema does not name is
refused; an attribute outside its bounds is brought into them as its protocol does (opm-circular: wrapped)."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import local
from dpdist.errors import ClippedValuesWarning, InvalidValueTypeError, MissingValuesError, OutOfDomainError


def test_a_record_with_an_attribute_the_schema_does_not_name_is_refused():
    schema = [{"name": "country", "labels": ["fr", "de"]}, {"name": "age", "bounds": [0, 100]}]
    protocol = local.make("smp", epsilon=1.0, attributes=schema)
    records = {"country": ["fr", "de"], "age": [30.0, 40.0]}
    assert protocol.privatize(records, rng=0).shape == (2,)
    with pytest.raises(InvalidValueTypeError, match=r"The 'values' argument of SMP\.privatize must hold the columns of "
                                                    r"the schema's attributes \['country', 'age'\] only\. Got unknown "
                                                    r"column\(s\) \['agee'\]"):
        protocol.privatize({**records, "agee": [31.0, 41.0]}, rng=0)
    structured = np.array([("fr", 30.0, 1)], dtype=[("country", "U2"), ("age", "f8"), ("income", "i8")])
    with pytest.raises(InvalidValueTypeError, match=r"unknown column\(s\) \['income'\]"):
        protocol.simulate(structured, rng=0)


_CIRCLE = [{"name": "hour", "bounds": [0, 24], "protocol": "opm-circular"}, {"name": "c", "domain_size": 3},
           {"name": "age", "bounds": [0, 100], "protocol": "sw"}]


@pytest.mark.parametrize("name", ["spl", "smp"])
def test_an_opm_circular_attribute_wraps_around_the_circle_as_the_value_alone_does(name):
    """Records clipped an opm-circular attribute (25 h was 24 h, midnight) where the protocol alone, and
    the JavaScript client's records, wrap it (25 h is 01:00); +-inf is still clipped, and the other attributes too."""
    protocol = local.make(name, epsilon=2.0, attributes=_CIRCLE)
    hours = [25.0, -1.0, 48.5, np.inf, -np.inf, 7.0]
    records = {"hour": hours, "c": [0, 1, 2, 0, 1, 2], "age": [150.0, 50.0, -3.0, 20.0, 30.0, 40.0]}
    with pytest.warns(ClippedValuesWarning) as caught:
        checked = protocol._records(records, clip=True, owner="t")
    [message] = [str(w.message) for w in caught]
    assert "7 numerical value(s) outside their attribute's bounds were clipped to them (2) or wrapped around the " \
           "circle (5, circular attributes)" in message
    inner = protocol.inner_protocols[0]
    alone, moved = inner.clip_values(hours)  # the single-value path (privatize's clip=True)
    assert moved == 5 and alone.tolist() == [1.0, 23.0, 0.5, 24.0, 0.0, 7.0]
    np.testing.assert_array_equal(checked[:, 0], inner.to_unit(alone))
    np.testing.assert_array_equal(checked[:, 2], [1.0, 0.5, 0.0, 0.2, 0.3, 0.4])  # sw clips
    inside = {"hour": [1.0, 23.0, 0.5, 24.0, 0.0, 7.0], "c": records["c"], "age": [100.0, 50.0, 0.0, 20.0, 30.0, 40.0]}
    with pytest.warns(ClippedValuesWarning):
        reports = protocol.privatize(records, rng=4)
    assert reports.tobytes() == protocol.privatize(inside, rng=4).tobytes()
    with pytest.warns(ClippedValuesWarning, match=r"^t: 2 numerical value\(s\) outside their attribute's bounds were "
                                                   r"wrapped around the circle before"):
        protocol._records({"hour": [25.0, -1.0], "c": [0, 0], "age": [1.0, 2.0]}, clip=True, owner="t")
    with pytest.warns(ClippedValuesWarning, match=r"^t: 1 numerical value\(s\) outside their attribute's bounds were "
                                                   r"clipped to them before"):
        protocol._records({"hour": [2.0], "c": [0], "age": [101.0]}, clip=True, owner="t")
    with pytest.raises(OutOfDomainError, match="attribute 'hour'"):
        protocol.privatize({"hour": [25.0], "c": [0], "age": [1.0]}, clip=False)
    with pytest.raises(MissingValuesError):
        protocol.privatize({"hour": [np.nan], "c": [0], "age": [1.0]})
