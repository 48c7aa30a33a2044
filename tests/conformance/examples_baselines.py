"""Small instances of the numerical baselines of paper 003 (binning, hierarchies, PM, SR)."""

EXAMPLES = {
    "binning": [
        {"epsilon": 1.0, "bins": 5},
        {"epsilon": 0.5, "bins": 4, "oracle": "oue", "bounds": (-2.0, 3.0)},
    ],
    "hh": [
        {"epsilon": 1.0, "bins": 4, "branching": 2},
        {"epsilon": 2.0, "bins": 9, "branching": 3, "oracle": "grr", "bounds": (-1.0, 1.0)},
    ],
    "hh-admm": [{"epsilon": 1.0, "bins": 8, "branching": 2, "oracle": "oue"}],
    "haar-hrr": [{"epsilon": 1.0, "bins": 8}, {"epsilon": 0.5, "bins": 2, "bounds": (10.0, 20.0)}],
    "pm": [{"epsilon": 1.0, "grid": 16}, {"epsilon": 3.0, "grid": 7, "bounds": (-5.0, 5.0)}],
    "threshold": [{"epsilon": 1.0, "grid_size": 16, "cuts": [3, 8, 12]}, {"epsilon": 2.5, "bounds": (-5.0, 5.0)}],
    "sr": [{"epsilon": 1.0}, {"epsilon": 0.25, "bounds": (-1.0, 4.0)}],
}

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"haar-hrr": 1}
