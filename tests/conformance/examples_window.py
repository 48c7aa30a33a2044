"""Small instances of the optimal piecewise mechanism (Zheng et al.): interval ``opm``, circle ``opm-circular``."""

EXAMPLES = {
    "opm": [
        {"epsilon": 1.0, "bins": 4},
        {"epsilon": 2.0, "bins": 6, "window": 0.4, "bounds": (-2.0, 3.0)},
    ],
    "opm-circular": [
        {"epsilon": 1.0, "bins": 4},
        {"epsilon": 0.5, "bins": 6, "window": 0.7, "bounds": (0.0, 1440.0)},
        {"epsilon": 3.0, "bins": 5, "bounds": (-180.0, 180.0)},
    ],
}
