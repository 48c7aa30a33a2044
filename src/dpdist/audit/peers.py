"""Adapters: other libraries' local randomizers as :class:`~dpdist.audit.Randomizer` values.

Each adapter is a thin wrapper: it calls the library's own client once per value (their APIs
randomize one value per call, so this loop is theirs, not the auditor's: budget ``samples``
accordingly, about 10-80 microseconds a value) and turns its output into numbers.  Each states
the library's claim and, where the library documents it, its textbook channel, so the audit is
white box too.  The libraries are imported when an adapter is built, never by ``import dpdist``:

* OpenDP (``opendp``): :func:`opendp_randomized_response` (``make_randomized_response``),
  :func:`opendp_bitvector` (``make_randomized_response_bitvec``, the RAPPOR-style bit vector whose
  last bit went unrandomized before 0.15.0: opendp/opendp#2708);
* pure-LDP (``pure-ldp``): :func:`pure_ldp_direct_encoding`, :func:`pure_ldp_unary_encoding` (whose
  true bit was not kept with probability p before 1.2.0: Samuel-Maddock/pure-LDP#11, found by the
  auditing of Arcolezi & Gambs 2023, arXiv:2309.01597);
* multi-freq-ldpy (``multi-freq-ldpy``): :func:`multi_freq_ldpy_grr`, :func:`multi_freq_ldpy_ue`.

pure-LDP and multi-freq-ldpy draw from NumPy's and Python's global generators: the adapters seed
both from the audit's generator for each batch and restore them after, so a seeded audit repeats
exactly and the caller's global streams are left as they were.  OpenDP draws from the operating
system: its audits do not repeat.
"""

from __future__ import annotations

import contextlib
import math
import random
import sys
from collections.abc import Callable

import numpy as np

from ..errors import MissingDependencyError
from ._hash_family import HashFamily
from ._randomizer import Randomizer
from ._side import in_environment

__all__ = [
    "opendp_randomized_response",
    "opendp_bitvector",
    "pure_ldp_direct_encoding",
    "pure_ldp_unary_encoding",
    "multi_freq_ldpy_grr",
    "multi_freq_ldpy_ue",
    "multi_freq_ldpy_local_hashing",
    "pure_ldp_local_hashing",
    "opendp_laplace",
    "xxhash_family",
    "grr_channel",
    "in_environment",
]

_LOOP = "the library randomizes one value per Python call (its API), so the audit loops over values there"


def _require(module: str, package: str):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as error:
        raise MissingDependencyError(
            f"This adapter needs the package {package!r} (pip install {package}); importing {module} failed: {error}"
        ) from None


_NUMBA_SEEDER: list = []


def _seed_numba(seed: int) -> None:
    """Seed numba's own generator (numba-compiled code, multi-freq-ldpy's clients, draws from it, not NumPy's),
    when numba is loaded: a compiled function calling ``np.random.seed`` (numba's documented way)."""
    numba = sys.modules.get("numba")
    if numba is None:
        return
    if not _NUMBA_SEEDER:
        def seeder(value):
            np.random.seed(value)

        _NUMBA_SEEDER.append(numba.njit(seeder))
    _NUMBA_SEEDER[0](seed)


@contextlib.contextmanager
def _global_streams(rng: np.random.Generator):
    """NumPy's, Python's and numba's global generators seeded from ``rng``; NumPy's and Python's restored afterwards
    (numba's state cannot be read back)."""
    numpy_state, python_state = np.random.get_state(), random.getstate()
    np.random.seed(int(rng.integers(2**32)))
    random.seed(int(rng.integers(2**63)))
    _seed_numba(int(rng.integers(2**32)))
    try:
        yield
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)


def grr_channel(d: int, keep: float) -> Callable[[np.ndarray], np.ndarray]:
    """The channel of generalized randomized response over ``d`` items keeping the item w.p. ``keep``:
    ``P[x, y] = keep`` if ``y = x`` else ``(1 - keep) / (d - 1)`` (Kairouz et al. 2016)."""

    def channel(inputs: np.ndarray) -> np.ndarray:
        inputs = np.asarray(inputs, dtype=np.int64)
        matrix = np.full((inputs.size, d), (1 - keep) / (d - 1))
        matrix[np.arange(inputs.size), inputs] = keep
        return matrix

    return channel


def _items(values) -> list[int]:
    return np.asarray(values, dtype=np.int64).tolist()


# ---------------------------------------------------------------------- OpenDP
def _opendp():
    dp = _require("opendp.prelude", "opendp")
    dp.enable_features("contrib")
    return dp


def opendp_randomized_response(d: int, epsilon: float) -> Randomizer:
    """OpenDP's ``make_randomized_response`` over items ``0..d-1``, keeping the item w.p.
    ``e^eps / (e^eps + d - 1)``; the claim is the measurement's own ``map(1)``."""
    dp = _opendp()
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    measurement = dp.m.make_randomized_response(categories=list(range(d)), prob=keep)

    def sample(values, rng):
        return np.array([measurement(v) for v in _items(values)], dtype=np.int64)

    return Randomizer(sample, name=f"opendp randomized_response d={d}", epsilon=float(measurement.map(1)), domain=d,
                      channel=grr_channel(d, keep), output_index=lambda out: np.asarray(out, dtype=np.int64),
                      seeded=False, notes=(_LOOP,))


def opendp_bitvector(d: int, f: float) -> Randomizer:
    """OpenDP's ``make_randomized_response_bitvec`` (RAPPOR's permanent response, each bit flipped to a fair
    coin w.p. ``f``) on the one-hot vector of an item of ``0..d-1`` (``d`` a multiple of 8); the claim is its
    ``map(1)``.  Outputs are the ``d`` bits."""
    dp = _opendp()
    measurement = dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=1), dp.discrete_distance(), f=f)
    one_hot = np.packbits(np.eye(d, dtype=np.uint8), axis=1)

    def sample(values, rng):
        outputs = [measurement(one_hot[v]) for v in _items(values)]
        packed = np.frombuffer(b"".join(outputs), dtype=np.uint8).reshape(len(outputs), -1)
        return np.unpackbits(packed, axis=1)[:, :d]

    return Randomizer(sample, name=f"opendp randomized_response_bitvec d={d} f={f:g}",
                      epsilon=float(measurement.map(1)), domain=d, seeded=False, notes=(_LOOP,))


# ---------------------------------------------------------------------- pure-LDP
def pure_ldp_direct_encoding(d: int, epsilon: float) -> Randomizer:
    """pure-LDP's ``DEClient`` (direct encoding: GRR), items ``0..d-1``, with the GRR channel it documents."""
    oracles = _require("pure_ldp.frequency_oracles", "pure-ldp")
    client = oracles.DEClient(epsilon, d, index_mapper=lambda item: item)
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([client.privatise(v) for v in _items(values)], dtype=np.int64)

    return Randomizer(sample, name=f"pure-ldp DE d={d}", epsilon=float(epsilon), domain=d,
                      channel=grr_channel(d, keep), output_index=lambda out: np.asarray(out, dtype=np.int64),
                      notes=(_LOOP,))


def pure_ldp_unary_encoding(d: int, epsilon: float, optimal: bool = True) -> Randomizer:
    """pure-LDP's ``UEClient`` (OUE with ``optimal``, else SUE), items ``0..d-1``; outputs are the ``d`` bits."""
    oracles = _require("pure_ldp.frequency_oracles", "pure-ldp")
    client = oracles.UEClient(epsilon, d, use_oue=optimal, index_mapper=lambda item: item)

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([client.privatise(v) for v in _items(values)], dtype=np.uint8).reshape(-1, d)

    return Randomizer(sample, name=f"pure-ldp {'OUE' if optimal else 'SUE'} d={d}", epsilon=float(epsilon), domain=d,
                      notes=(_LOOP,))


# ---------------------------------------------------------------------- multi-freq-ldpy
def multi_freq_ldpy_grr(d: int, epsilon: float) -> Randomizer:
    """multi-freq-ldpy's ``GRR_Client``, items ``0..d-1``, with the GRR channel."""
    grr = _require("multi_freq_ldpy.pure_frequency_oracles.GRR", "multi-freq-ldpy")
    keep = math.exp(epsilon) / (math.exp(epsilon) + d - 1)

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([grr.GRR_Client(v, d, epsilon) for v in _items(values)], dtype=np.int64)

    return Randomizer(sample, name=f"multi-freq-ldpy GRR d={d}", epsilon=float(epsilon), domain=d,
                      channel=grr_channel(d, keep), output_index=lambda out: np.asarray(out, dtype=np.int64),
                      notes=(_LOOP,))


def multi_freq_ldpy_ue(d: int, epsilon: float, optimal: bool = True) -> Randomizer:
    """multi-freq-ldpy's ``UE_Client`` (OUE with ``optimal``, else SUE); outputs are the ``d`` bits."""
    ue = _require("multi_freq_ldpy.pure_frequency_oracles.UE", "multi-freq-ldpy")

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([ue.UE_Client(v, d, epsilon, optimal) for v in _items(values)], dtype=np.uint8).reshape(-1, d)

    return Randomizer(sample, name=f"multi-freq-ldpy {'OUE' if optimal else 'SUE'} d={d}", epsilon=float(epsilon),
                      domain=d, notes=(_LOOP,))


# ---------------------------------------------------------------------- local hashing with xxhash (peers' OLH/BLH)
def xxhash_family(g: int) -> HashFamily:
    """The hash family of the peers' local hashing (pure-LDP, multi-freq-ldpy, ldp-toolbox, after Wang et al.'s
    code): ``xxhash.xxh32(str(v), seed) % g`` for outputs ``(value, seed)``.  One xxhash call per output and item
    (the family is xxhash's: no vectorized form)."""
    xxhash = _require("xxhash", "xxhash")

    def hashes(outputs, items):
        outputs = np.asarray(outputs, dtype=np.int64).reshape(-1, 2)
        names = [str(int(v)) for v in np.asarray(items).ravel()]
        buckets = np.array([[xxhash.xxh32(name, seed=int(seed)).intdigest() % g for name in names]
                            for seed in outputs[:, 1].tolist()], dtype=np.int64).reshape(len(outputs), len(names))
        return buckets, outputs[:, 0]

    return HashFamily(hashes, f"xxh32(str(v), seed) % {g}")


def pure_ldp_local_hashing(d: int, epsilon: float, optimal: bool = True) -> Randomizer:
    """pure-LDP's ``LHClient`` (OLH with ``optimal``: g = round(e^eps) + 1; else BLH, g = 2); outputs
    ``(value, seed)``, audited conditioned on its xxhash family."""
    oracles = _require("pure_ldp.frequency_oracles", "pure-ldp")
    client = oracles.LHClient(epsilon, d, use_olh=optimal, index_mapper=lambda item: item)

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([client.privatise(v) for v in _items(values)], dtype=np.int64).reshape(-1, 2)

    return Randomizer(sample, name=f"pure-ldp {'OLH' if optimal else 'BLH'} d={d}", epsilon=float(epsilon), domain=d,
                      notes=(_LOOP,), hash_family=xxhash_family(client.g))


def multi_freq_ldpy_local_hashing(d: int, epsilon: float, optimal: bool = True) -> Randomizer:
    """multi-freq-ldpy's ``LH_Client`` (OLH with ``optimal``, else BLH); outputs ``(value, seed)``, audited
    conditioned on its xxhash family."""
    lh = _require("multi_freq_ldpy.pure_frequency_oracles.LH", "multi-freq-ldpy")
    g = int(round(np.exp(epsilon))) + 1 if optimal else 2

    def sample(values, rng):
        with _global_streams(rng):
            return np.array([lh.LH_Client(v, d, epsilon, optimal) for v in _items(values)], dtype=np.int64).reshape(-1, 2)

    return Randomizer(sample, name=f"multi-freq-ldpy {'OLH' if optimal else 'BLH'} d={d}", epsilon=float(epsilon),
                      domain=d, notes=(_LOOP,), hash_family=xxhash_family(g))


def opendp_laplace(epsilon: float, bounds: tuple[float, float] = (0.0, 1.0)) -> Randomizer:
    """OpenDP's ``make_laplace`` on a float in ``bounds`` (sensitivity the bounds' width), a local numeric
    randomizer; the claim is its ``map``.  OpenDP samples its noise exactly on a grid (float-safe by design)."""
    dp = _opendp()
    width = float(bounds[1] - bounds[0])
    measurement = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=width / epsilon)

    def sample(values, rng):
        return np.array([measurement(float(v)) for v in np.asarray(values, dtype=np.float64).tolist()])

    return Randomizer(sample, name="opendp laplace", epsilon=float(measurement.map(width)), domain=tuple(bounds),
                      seeded=False, notes=(_LOOP,))
