"""Random number generators: seeded for simulation, cryptographically secure for clients.

``rng`` arguments across dpdist accept ``None``, an ``int`` seed, a
:class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`
(SPEC 7).  **No seed means the CSPRNG**: ``rng=None`` (the default everywhere)
gives AES-128 in counter mode (``randomgen.AESCounter``, hardware AES-NI where
the CPU has it), keyed from the operating system's CSPRNG, exposed as an
ordinary NumPy ``Generator`` so that every sampler is the same code in both
modes.  A seed gives a reproducible PCG64 stream for research and tests; it is
not secret, so output made with a seed must not be published about people.
``secure=True`` makes that a rule: a seed is then refused.

Every derived random stream comes from this module, in one of two ways:

* by position: :func:`block_generator` gives block ``b`` of a run the ``b``-th
  spawned child of the run's root :class:`~numpy.random.SeedSequence`
  (``dpdist privatize --block-size``, :mod:`dpdist.distributed`), and
  :func:`order_generator` the stream that shuffles the run's reports;
* by name: :func:`named_generator` keys a stream by :func:`stable_id` of names
  and numbers (the experiment runner's cells, the demo), so adding a method or
  a dataset never changes another's numbers;
* by state: :func:`state_generator` keys a stream by the bytes of what a
  post-processing step is a function of (a protocol's config, an aggregate's
  statistic and count, the estimate's options), so a bootstrap interval is a
  function of the state it describes: the same in every view and every time it
  is asked for (docs/explanation/uncertainty.md, "What determines a band").  Nothing there is secret: the aggregate is
  already private and the bootstrap adds no privacy.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
from randomgen import AESCounter

from ._validation import Boolean, Implies, RandomSource, validate_params

__all__ = [
    "check_rng",
    "secure_generator",
    "keyed_generator",
    "random_words",
    "root_seed_sequence",
    "block_generator",
    "order_generator",
    "canonical_numbers",
    "stable_id",
    "named_generator",
    "state_generator",
]


def secure_generator() -> np.random.Generator:
    """A NumPy ``Generator`` backed by AES-CTR keyed from ``os.urandom``.

    The key is 128 bits drawn by ``SeedSequence()`` from the OS entropy pool;
    every call returns an independent stream.  Nothing about it can be seeded,
    by design: a reproducible stream is not secret.
    """
    return np.random.Generator(AESCounter())  # pyright: ignore[reportArgumentType]  (a numpy BitGenerator at run time; randomgen's stubs do not say so)


def keyed_generator(rng: np.random.Generator) -> np.random.Generator:
    """A ``Generator`` of the CSPRNG's type (AES-CTR) keyed by 128 bits drawn from ``rng``.

    Secret exactly when ``rng`` is (the CSPRNG gives a secret key, a seeded stream a reproducible one): for
    code that must not be able to tell a seeded caller from the default by its generator's type (the audit
    hands it to the randomizer it audits).
    """
    key = int(rng.integers(0, 2**63)) << 65 | int(rng.integers(0, 2**63))
    return np.random.Generator(AESCounter(key=key % 2**128, counter=0))  # pyright: ignore[reportArgumentType]  (as secure_generator)


@validate_params({"rng": RandomSource(), "secure": Boolean()}, relations=(
    Implies("rng", (None,), "secure", (True,), why="a seeded stream is not secret", counterexample={"secure": True, "rng": 3}),
), owner_argument="owner")
def check_rng(rng=None, *, secure: bool = False, owner: str = "dpdist") -> np.random.Generator:
    """Resolve an ``rng`` argument to a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : None, int, SeedSequence or Generator
        ``None`` gives the CSPRNG (:func:`secure_generator`); an ``int`` or
        ``SeedSequence`` seeds PCG64 (reproducible, not secret); a ``Generator``
        is used as is.
    secure : bool
        Refuse anything but ``None`` (a seeded stream is not secret) and return
        the CSPRNG.
    owner : str
        The caller, named in error messages (the table's: ``rng`` and ``secure`` refused by their rules, a seeded
        ``rng`` with ``secure=True``).
    """
    if rng is None:
        return secure_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)  # a SeedSequence, or an int seed >= 0 (RandomSource returns it as an int)



def random_words(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` independent uniform 64-bit words (to be viewed as bytes or 32-bit halves).

    Uses ``Generator.integers`` over the full uint64 range, which is correct for any
    bit generator (``bit_generator.random_raw`` is only 32 bits wide for some, e.g.
    MT19937) and as fast as the raw stream for 64-bit ones.
    """
    return rng.integers(0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64, endpoint=True)


# ---------------------------------------------------------------------- derived streams
def root_seed_sequence(seed) -> np.random.SeedSequence:
    """``SeedSequence(seed)`` (fresh OS entropy for ``None``); an existing SeedSequence is kept."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(seed)


def block_generator(root: np.random.SeedSequence, index: int) -> np.random.Generator:
    """The generator of block ``index``: the ``index``-th child of ``root`` (as ``root.spawn`` would give).

    Block ``b`` of a run with root seed ``s`` draws from
    ``numpy.random.default_rng(SeedSequence(s).spawn(b + 1)[b])``, i.e. the child
    ``SeedSequence(s, spawn_key=(b,))``: independent streams that do not depend on
    how many blocks there are or on which worker runs them (NumPy's parallel
    random guide), so a run is reproducible from its seed and block size alone.
    """
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(index)), pool_size=root.pool_size)
    return np.random.default_rng(child)


def order_generator(root: np.random.SeedSequence) -> np.random.Generator:
    """The generator that shuffles the reports of a seeded run (``dpdist privatize --seed``).

    It is ``SeedSequence(root.entropy, spawn_key=(*root.spawn_key, ORDER_STREAM, 0))``: a spawn key
    two words longer than the root's, which no block's key (one word longer, see
    :func:`block_generator`) can equal, so the order is independent of every block's draws.
    """
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, ORDER_STREAM, 0), pool_size=root.pool_size)
    return np.random.default_rng(child)


#: the first extra word of :func:`order_generator`'s spawn key ("ORDR")
ORDER_STREAM = 0x4F524452


def canonical_numbers(value: Any) -> Any:
    """``value`` with every number in one form, so equal numbers hash alike: an integral float
    becomes an int (``1.0 -> 1``, also NumPy floats), a NumPy integer an int; other floats
    are unchanged (their JSON text, hence existing seeds, stays the same).  Lists, tuples
    and dict values are converted recursively (a tuple becomes a list, as in JSON)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return int(value) if value.is_integer() else value
    if isinstance(value, (list, tuple)):
        return [canonical_numbers(item) for item in value]
    if isinstance(value, dict):
        return {key: canonical_numbers(item) for key, item in value.items()}
    return value


def stable_id(*parts: Any) -> int:
    """A 32-bit integer from the canonical JSON of ``parts`` (BLAKE2b; same in every process).

    Numbers are made canonical first (:func:`canonical_numbers`): ``epsilon = 1`` and
    ``epsilon = 1.0`` give the same id."""
    text = json.dumps(canonical_numbers(parts), sort_keys=True, default=str, separators=(",", ":"))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")


def named_generator(seed: int, *names) -> np.random.Generator:
    """The stream of ``seed`` keyed by ``names``: ``default_rng([seed, stable_id(name) ...])``."""
    return np.random.default_rng([int(seed), *(stable_id(name) for name in names)])



def _state_bytes(part: Any) -> bytes:
    """One part of a state in bytes that identify it: an array by dtype, shape and contents, anything else
    by its canonical JSON (:func:`canonical_numbers`, sorted keys)."""
    if isinstance(part, np.ndarray):
        array = np.ascontiguousarray(part)
        return b"array:" + array.dtype.str.encode() + repr(array.shape).encode() + b":" + array.tobytes()
    text = json.dumps(canonical_numbers(part), sort_keys=True, default=repr, separators=(",", ":"))
    return b"json:" + text.encode()


def state_generator(purpose: str, *parts: Any) -> np.random.Generator:
    """A PCG64 stream keyed by the BLAKE2b-256 hash of ``purpose`` and ``parts`` (arrays by their bytes).

    The stream of a post-processing step that must be a function of its inputs: the
    parametric bootstrap of :func:`dpdist.uncertainty.cdf_band` and of ``estimator="ibu"``
    intervals, keyed by the protocol's config, the aggregate's statistic and ``n`` and the
    estimate options, so that one campaign state gives one interval wherever and however
    often it is asked for.  Each part is hashed with its length, so parts cannot run into
    each other.  Deterministic and public by design: never for randomness that protects
    anyone (privatization uses :func:`check_rng`'s CSPRNG).
    """
    digest = hashlib.blake2b(digest_size=32, person=b"dpdist-state")
    for part in (purpose, *parts):
        encoded = _state_bytes(part)
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest.digest(), "little")))
