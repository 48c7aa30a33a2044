"""A multi-attribute record (dpdist.local.multi._record): a record with an attribute the schema does not name is
refused."""

from __future__ import annotations


import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidValueTypeError


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
