""":class:`CountRelease` (``estimates/_count.py``): the count with the interval released with it, in every view."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist import central
from dpdist.errors import InvalidParameterError
from dpdist.estimates import CountRelease


def test_every_view_shows_the_one_interval_released_with_the_count():
    release = central.count(np.zeros(250), 0.7, level=0.9, rng=3)
    (interval,) = release.intervals()
    assert (interval.low, interval.high, interval.level) == (release.low, release.high, 0.9)
    assert release.intervals(0.5)[0] == interval  # its own level, whatever level is asked
    row = release.summary_row()
    assert (row["count low"], row["count high"], row["level"]) == (release.low, release.high, 0.9)
    assert release.table()["low"][0] == release.low and release.table()["high"][0] == release.high
    text = release.describe(truth=np.zeros(250))
    assert f"{release.low:.6g}" in text and f"{release.high:.6g}" in text and "(true 250)" in text
    assert release.n is None and release.kind == "count"


def test_its_document_reads_back_as_the_same_release():
    release = central.count(np.zeros(40), 1.0, rng=5)
    document = json.loads(release.to_json())
    assert document["kind"] == "count" and document["low"] == release.low
    read = CountRelease.from_dict(document)
    assert (read.count, read.low, read.high, read.level, read.guarantee) == (release.count, release.low, release.high,
                                                                             release.level, release.guarantee)
    assert read.to_dict() == release.to_dict()


def test_a_bad_level_for_its_intervals_is_refused_by_name():
    with pytest.raises(InvalidParameterError, match="'level'"):
        central.count(np.zeros(3), 1.0, rng=1).intervals(1.5)
