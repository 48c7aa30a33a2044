"""``dpdist.estimates`` names each of its classes publicly: ``dpdist.estimates.X``, not the private file it is written
in (docs, reprs and pickles show the public name)."""

from __future__ import annotations

import pickle

from dpdist import estimates


def test_every_class_is_named_by_the_public_package():
    classes = [value for value in map(vars(estimates).get, estimates.__all__) if isinstance(value, type)]
    assert len(classes) >= 10 and estimates.Distribution in classes
    assert {kind.__module__ for kind in classes} == {"dpdist.estimates"}
    pickled = pickle.dumps(estimates.Distribution)
    assert b"dpdist.estimates" in pickled and b"dpdist.estimates._" not in pickled
    assert pickle.loads(pickled) is estimates.Distribution
