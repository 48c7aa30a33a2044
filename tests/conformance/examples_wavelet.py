"""Small instances of the wavelet expansion protocol of paper 000 (J <= 3, so the channel is enumerable)."""

EXAMPLES = {
    "wavelet": [
        {"epsilon": 1.0, "levels": 2},
        {"epsilon": 2.0, "levels": 3, "bounds": (-1.0, 1.0)},
        {"epsilon": 0.5, "n_users": 10, "variance_rule": "paper"},
        {"epsilon": 4.0, "n_users": 40, "level_rule": "bound", "levels": 1},
    ],
}

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"wavelet": 3}
