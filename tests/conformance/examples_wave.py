"""Small instances of the wave protocols (paper 003: square wave ``sw``, general wave ``gw``)."""

EXAMPLES = {
    "sw": [
        {"epsilon": 1.0, "bins": 4, "output_bins": 6},
        {"epsilon": 2.0, "bins": 5, "discrete": True},
        {"epsilon": 0.5, "bins": 6, "discrete": True},
        {"epsilon": 0.5, "bins": 3, "output_bins": 7, "b": 0.3, "bounds": (-2.0, 3.0)},
    ],
    "gw": [
        {"epsilon": 1.0, "bins": 4, "output_bins": 6, "shape": "trapezoid", "ratio": 0.4},
        {"epsilon": 1.5, "bins": 3, "output_bins": 5, "shape": "triangle", "bounds": (10.0, 20.0)},
    ],
}
