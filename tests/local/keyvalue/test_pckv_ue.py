"""PCKV-UE (dpdist.local.keyvalue.pckv_ue): a report is rejected under one reason only."""

from __future__ import annotations


import numpy as np

from dpdist import local
from dpdist.local.keyvalue import KeyValueSets


def test_a_pckv_ue_report_is_rejected_under_one_reason_only():
    """50 all-0xFF rows set the padding bits AND both signs of every key; they were counted under
    both reasons (100 rejections for 50 reports). Now each counts once, under the first (the format's) reason."""
    protocol = local.make("pckv-ue", epsilon=1.0, domain_size=10, padding_length=1)
    good = protocol.privatize(KeyValueSets.from_pairs([{1: 0.5}] * 20), rng=1)
    bad = np.full((50, good.shape[1]), 0xFF, dtype=np.uint8)
    batch = protocol.report_format.validate(np.concatenate([good, bad]))
    assert batch.rejected == {"padding_bits_set": 50}
    assert sum(batch.rejected.values()) == 50
    both = bad.copy()
    both[:, -1] = 0  # padding clear, both signs still set: that reason alone
    assert protocol.report_format.validate(both).rejected == {"both_signs": 50}
