"""The command line's indented JSON is ``json.dumps(document, indent=...)`` byte for byte, long number lists too."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpdist.cli._json_text import LONG, dumps_indented

_RNG = np.random.default_rng(46)
DOCUMENTS = [
    [0.5] * LONG,  # a long list as the whole document
    {"edges": np.linspace(0, 2e5, 300).tolist(), "level": 0.95, "nested": {"lists": [[1, 2], list(range(LONG))]}},
    {"special": [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1e300, 2**70] + _RNG.random(100).tolist()},
    {"booleans are not numbers": [True] * LONG, "mixed": [1.5, True] * LONG, "none": [None] * LONG},
    {"short": [1.0] * (LONG - 1), "empty": [], "tuple": (0.25,) * LONG, "in a list": [{"x": [3] * LONG}]},
    {"looks like a placeholder": "\x00dpdist-numbers-0", "numbers": [2.0] * LONG, 7: "a key json turns to text"},
    {"numpy scalars stay with json": [np.float64(0.1)] * LONG, "strings": ["a, b"] * LONG},
]


@pytest.mark.parametrize("indent", [2, 4])
@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_text_is_json_dumps_indented(document, indent):
    assert dumps_indented(document, indent) == json.dumps(document, indent=indent)
