"""Words as items (dpdist.local.words): the codec's errors name the call the user made."""

from __future__ import annotations

import pytest

from dpdist import local


def test_pem_words_outside_the_alphabet_never_name_heavy_hitters():
    """The codec's error said 'The words given to heavy_hitters' to a `submit` or `privatize` of words."""
    proto = local.make("pem", epsilon=1.0, alphabet="abc")
    with pytest.raises(Exception) as raised:
        proto.privatize(["ab", "aXb"])
    assert "heavy_hitters" not in str(raised.value) and "'values' argument of PEM" in str(raised.value)
