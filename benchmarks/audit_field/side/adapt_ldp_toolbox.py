"""ldp-toolbox 0.1.3 (PyPI ``ldp-toolbox``, Arcolezi et al.'s "Local Differential Privacy Toolbox"), in its own
environment.  One ``obfuscate(value)`` per Python call, numba-compiled: ``seed`` seeds numba's generator too."""

import importlib.metadata

import numpy as np
from numba import njit

from ldp_toolbox.protocols.frequency.grr import GeneralizedRandomizedResponse
from ldp_toolbox.protocols.frequency.he import HistogramEncoding
from ldp_toolbox.protocols.frequency.lh import LocalHashing
from ldp_toolbox.protocols.frequency.ss import SubsetSelection
from ldp_toolbox.protocols.frequency.ue import UnaryEncoding

VERSION = importlib.metadata.version("ldp-toolbox")


@njit
def _numba_seed(seed):
    np.random.seed(seed)


def seed(value):
    _numba_seed(value)


def build(case, epsilon=1.0, d=8, **params):
    about = {"version": VERSION, "claim": epsilon, "library": "ldp-toolbox", "domain": d}
    if case == "GRR":
        protocol = GeneralizedRandomizedResponse(d, epsilon)
    elif case in ("OUE", "SUE"):
        protocol = UnaryEncoding(d, epsilon, optimal=case == "OUE")
    elif case in ("OLH", "BLH"):
        protocol = LocalHashing(d, epsilon, optimal=case == "OLH")
        about["hash_range"] = int(protocol.g)
    elif case == "SS":
        protocol = SubsetSelection(d, epsilon)
    elif case in ("SHE", "THE"):
        protocol = HistogramEncoding(d, epsilon, thresholding=case == "THE")
    else:
        raise KeyError(case)

    def sample(values):
        outputs = [protocol.obfuscate(int(v)) for v in np.asarray(values).ravel()]
        if case in ("OUE", "SUE", "SHE"):
            return np.asarray(outputs, dtype=np.float64 if case == "SHE" else np.uint8).reshape(len(outputs), d)
        if case in ("SS", "THE"):  # a set of items: its indicator vector
            rows = np.zeros((len(outputs), d), dtype=np.uint8)
            for row, chosen in zip(rows, outputs):
                row[np.asarray(chosen, dtype=np.int64)] = 1
            return rows
        return np.asarray(outputs, dtype=np.int64).reshape(len(outputs), -1)

    return sample, {**about, "name": f"ldp-toolbox {case} d={d}"}
