r"""Dictionaries of atoms on [-1, 1] for matching pursuit (sec. V, VI-C and App. A of Tao & Sarwate).

Paper 002.  Families:

``legendre``
    Orthonormal Legendre polynomials :math:`e_i=\sqrt{(2i+1)/2}P_i`, i = 0..size-1.
``bspline0``
    Degree-0 B-splines (indicators) of ``size`` equal intervals of [-1, 1].
``bspline1``
    Degree-1 B-splines (hats) on ``size`` uniform knots including both ends
    (the end hats are halves), size >= 2.
``bspline0-dyadic`` / ``bspline1-dyadic``
    The same splines at every dyadic resolution, coarse to fine: degree 0 takes
    the 1, 2, 4, ... equal intervals of [-1, 1] (level :math:`\ell` has
    :math:`2^\ell` indicators of width :math:`2^{1-\ell}`), degree 1 the hats on
    2, 3, 5, 9, ... uniform knots (level :math:`\ell`: :math:`2^\ell+1` knots, half-width
    :math:`2^{1-\ell}`), until ``size`` atoms; the last level, when only part of it
    fits, contributes atoms spread evenly over [-1, 1].  Unlike the uniform
    families, a CDF that is 1 on most of the range is a few coarse atoms plus
    fine corrections, so s atoms suffice where the uniform family needs one atom
    per interval the data leave behind (at s = 30 the uniform 55 + 54 atoms of
    Fig. 8b cannot reach an empirical CDF at all: non-private KS 0.31 on a normal
    mixture at n = 10^4, against 0.028 for the dyadic 109).  The paper does not
    give its knots; this is dpdist's reading of Fig. 8b that can fit at s = 30.
``normal-cdf``
    Normal CDFs :math:`\Phi((u-\mu)/s)`: means and scales on a
    :math:`k\times k` grid, :math:`k=\lceil\sqrt{size}\rceil`, means equally
    spaced on [-1, 1], scales geometric from 0.02 to 1; the first ``size``
    pairs (means varying fastest).  The paper (Fig. 8c) uses 400 such CDFs
    "with varying means and variances" without giving the grid.

Unions are written ``"legendre+bspline1"``; the atoms are split evenly between
the families (the remainder goes to the first ones), as in the paper's
Fig. 8b mixture of degree-0 and degree-1 B-splines.

Every atom is scaled to unit :math:`L^2[-1,1]` norm (matching pursuit assumes
unit atoms).  A dictionary exposes what the private algorithm needs, computed
once and cached:

* ``antiderivative(u)`` — :math:`\Phi_j(u)=\int_{-1}^u\phi_j`, from which
  :math:`\langle F_n,\phi_j\rangle = \Phi_j(1)-\frac1n\sum_k\Phi_j(x_k)` exactly;
* ``l1_norms`` — :math:`\int|\phi_j|`, the per-atom sensitivity of Lemma 3
  (times 1/n), exact: between consecutive sign changes of an atom
  :math:`\int|\phi| = |\Phi(b)-\Phi(a)|` (Legendre atoms change sign at the
  roots of :math:`P_i`; the other families are non-negative);
* ``gram`` — :math:`\langle\phi_i,\phi_j\rangle`, so that residual inner
  products update without touching the data for non-orthogonal dictionaries;
  composite Gauss-Legendre quadrature with every knot as a panel boundary
  (exact for the splines, to ~1e-14 for the smooth families).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.polynomial import legendre

from .._validation import Described, Integer, Text, check_param, validate_params
from .._types import ArrayLike

__all__ = ["Dictionary", "make_dictionary", "FAMILIES"]

FAMILIES = ("legendre", "bspline0", "bspline1", "bspline0-dyadic", "bspline1-dyadic", "normal-cdf")
_PANELS = 512
_NODES = 12


# ---------------------------------------------------------------- one family
def _dyadic_levels(count: int, level_size, level_atoms) -> tuple[np.ndarray, ...]:
    """Atoms of levels 0, 1, ... until ``count``; a partial last level takes evenly spread atoms."""
    parts, level, taken = [], 0, 0
    while taken < count:
        size = level_size(level)
        take = min(size, count - taken)
        index = np.round(np.linspace(0, size - 1, take)).astype(int) if take < size else np.arange(size)
        parts.append([column[index] for column in level_atoms(level)])
        taken += take
        level += 1
    return tuple(np.concatenate(column) for column in zip(*parts))


def _two_columns(columns: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    first, second = columns
    return first, second


def _uniform_intervals(count: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.linspace(-1, 1, count + 1)
    return edges[:-1], edges[1:]


def _dyadic_intervals(count: int) -> tuple[np.ndarray, np.ndarray]:
    def level_atoms(level):
        edges = np.linspace(-1, 1, 2**level + 1)
        return edges[:-1], edges[1:]

    return _two_columns(_dyadic_levels(count, lambda level: 2**level, level_atoms))


def _uniform_hats(count: int) -> tuple[np.ndarray, np.ndarray]:
    return np.linspace(-1, 1, count), np.full(count, 2.0 / (count - 1))


def _dyadic_hats(count: int) -> tuple[np.ndarray, np.ndarray]:
    def level_atoms(level):
        return np.linspace(-1, 1, 2**level + 1), np.full(2**level + 1, 2.0 ** (1 - level))

    return _two_columns(_dyadic_levels(count, lambda level: 2**level + 1, level_atoms))


_INTERVALS = {"bspline0": _uniform_intervals, "bspline0-dyadic": _dyadic_intervals}
_HATS = {"bspline1": _uniform_hats, "bspline1-dyadic": _dyadic_hats}


@dataclass(frozen=True)
class _Family:
    """Un-normalized atoms of one family: values, antiderivatives, knots, sign-change points."""

    name: str
    size: int
    # the atoms' parameters, set in __post_init__ for the family's kind
    _lo: np.ndarray = field(init=False, repr=False, compare=False)
    _hi: np.ndarray = field(init=False, repr=False, compare=False)
    _centres: np.ndarray = field(init=False, repr=False, compare=False)
    _widths: np.ndarray = field(init=False, repr=False, compare=False)
    _means: np.ndarray = field(init=False, repr=False, compare=False)
    _scales: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.name in _INTERVALS:  # indicators of [lo, hi)
            lo, hi = _INTERVALS[self.name](self.size)
            object.__setattr__(self, "_lo", lo)
            object.__setattr__(self, "_hi", hi)
        elif self.name in _HATS:  # hats max(0, 1 - |u - t| / h)
            centres, widths = _HATS[self.name](self.size)
            object.__setattr__(self, "_centres", centres)
            object.__setattr__(self, "_widths", widths)
        elif self.name == "normal-cdf":
            k = int(np.ceil(np.sqrt(self.size)))
            means, scales = np.meshgrid(np.linspace(-1, 1, k), np.geomspace(0.02, 1.0, k))
            object.__setattr__(self, "_means", means.ravel()[: self.size])
            object.__setattr__(self, "_scales", scales.ravel()[: self.size])

    def knots(self) -> np.ndarray:
        if self.name in _INTERVALS:
            return np.unique(np.concatenate([self._lo, self._hi]))
        if self.name in _HATS:
            c, h = self._centres, self._widths
            return np.unique(np.clip(np.concatenate([c - h, c, c + h]), -1.0, 1.0))
        return np.array([-1.0, 1.0])

    def values(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=np.float64)[:, None]
        if self.name == "legendre":
            return legendre.legvander(u[:, 0], self.size - 1)
        if self.name in _INTERVALS:
            lo, hi = self._lo, self._hi
            inside = (u >= lo) & ((u < hi) | ((hi == 1.0) & (u <= 1.0)))
            return inside.astype(np.float64)
        if self.name in _HATS:
            return np.maximum(0.0, 1.0 - np.abs(u - self._centres) / self._widths)
        from scipy import special  # lazy: scipy.special (0.6-0.9 CPU-s), for the Gaussian and Legendre atoms only

        return special.ndtr((u - self._means) / self._scales)

    def antiderivative(self, u: np.ndarray) -> np.ndarray:
        r""":math:`\int_{-1}^u` of each atom, closed form."""
        u = np.asarray(u, dtype=np.float64)
        if self.name == "legendre":
            degree = self.size - 1
            p = legendre.legvander(u, degree + 1)  # P_0 .. P_{m+1}
            out = np.empty((u.size, self.size))
            out[:, 0] = u + 1.0
            i = np.arange(1, self.size)
            out[:, 1:] = (p[:, i + 1] - p[:, i - 1]) / (2 * i + 1)
            return out
        col = u[:, None]
        if self.name in _INTERVALS:
            lo, hi = self._lo, self._hi
            return np.clip(col - lo, 0.0, hi - lo)
        if self.name in _HATS:
            # H(v) = int_{-inf}^v max(0, 1-|s|) ds; atom integral = h (H((u-t)/h) - H((-1-t)/h))
            def hat_integral(v):
                v = np.clip(v, -1.0, 1.0)
                return np.where(v <= 0, 0.5 * (1 + v) ** 2, 1.0 - 0.5 * (1 - v) ** 2)

            h, t = self._widths, self._centres
            return h * (hat_integral((col - t) / h) - hat_integral((-1.0 - t) / h))

        from scipy import special  # lazy: scipy.special (0.6-0.9 CPU-s), for the Gaussian and Legendre atoms only

        # int Phi((u - m)/s) du = s psi(z), psi(z) = z Phi(z) + phi(z)
        def psi(z):
            return z * special.ndtr(z) + np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)

        m, s = self._means, self._scales
        return s * (psi((col - m) / s) - psi((-1.0 - m) / s))

    def l1_norms(self) -> np.ndarray:
        r""":math:`\int_{-1}^1|\phi_j|` exactly (before normalization)."""
        if self.name != "legendre":  # non-negative atoms
            return self.antiderivative(np.array([1.0]))[0]
        from scipy import special  # lazy: scipy.special (0.6-0.9 CPU-s), for the Gaussian and Legendre atoms only

        norms = np.empty(self.size)
        for i in range(self.size):
            roots = special.roots_legendre(i)[0] if i else np.array([])
            points = np.concatenate([[-1.0], np.sort(roots), [1.0]])
            primitive = self.antiderivative(points)[:, i]
            norms[i] = np.abs(np.diff(primitive)).sum()
        return norms


# ---------------------------------------------------------------- dictionary
class Dictionary:
    """A (union) dictionary of unit-L2 atoms on [-1, 1]; see the module docstring."""

    def __init__(self, spec: str, size: int):
        self.spec, self.size = spec, size
        names = spec.split("+")
        counts = [size // len(names) + (1 if index < size % len(names) else 0) for index in range(len(names))]
        self.families = [_Family(name, count) for name, count in zip(names, counts)]
        self.labels = [f"{f.name}[{j}]" for f in self.families for j in range(f.size)]
        # quadrature: panels between all knots, each refined into equal pieces
        # enough panels that a degree-2m product of Legendre atoms is integrated to machine precision
        panels = max(_PANELS, 4 * max(f.size for f in self.families if f.name == "legendre") if "legendre" in names else 0)
        breaks = np.unique(np.concatenate([np.linspace(-1, 1, panels + 1)] + [f.knots() for f in self.families]))
        nodes, weights = np.polynomial.legendre.leggauss(_NODES)
        half = np.diff(breaks) / 2
        middle = (breaks[:-1] + breaks[1:]) / 2
        self._nodes = (middle[:, None] + half[:, None] * nodes).ravel()
        self._weights = (half[:, None] * weights).ravel()
        raw = self._raw_values(self._nodes)
        squared = self._weights @ (raw * raw)
        self.scale = 1.0 / np.sqrt(squared)  # unit L2 norm
        unit = raw * self.scale
        self.gram = (unit * self._weights[:, None]).T @ unit
        start = 0
        for family in self.families:  # the Legendre block is the identity exactly
            if family.name == "legendre":
                block = slice(start, start + family.size)
                self.gram[block, block] = np.eye(family.size)
            start += family.size
        self.l1_norms = np.concatenate([f.l1_norms() for f in self.families]) * self.scale
        self.gram.setflags(write=False)
        self.l1_norms.setflags(write=False)

    def _raw_values(self, u):
        return np.concatenate([f.values(u) for f in self.families], axis=1)

    def values(self, u: ArrayLike) -> np.ndarray:
        """Unit-norm atoms at ``u``: shape ``(len(u), size)``."""
        return self._raw_values(np.asarray(u, dtype=np.float64)) * self.scale

    def antiderivative(self, u: ArrayLike) -> np.ndarray:
        r""":math:`\int_{-1}^u\phi_j` of the unit-norm atoms: shape ``(len(u), size)``."""
        u = np.asarray(u, dtype=np.float64)
        return np.concatenate([f.antiderivative(u) for f in self.families], axis=1) * self.scale

    def ecdf_inner_products(self, u: np.ndarray, chunk: int = 1 << 14) -> np.ndarray:
        r""":math:`\langle F_n,\phi_j\rangle=\Phi_j(1)-\frac1n\sum_k\Phi_j(u_k)` for data ``u`` in [-1, 1] (chunked)."""
        total = np.zeros(self.size)
        for start in range(0, u.size, chunk):
            total += self.antiderivative(u[start : start + chunk]).sum(axis=0)
        return self.antiderivative(np.array([1.0]))[0] - total / max(u.size, 1)  # no data: F_n = 0

    def __repr__(self):
        return f"Dictionary({self.spec!r}, size={self.size})"


@lru_cache(maxsize=32)
def _cached(spec: str, size: int) -> Dictionary:
    return Dictionary(spec, size)


_FAMILY = "|".join(re.escape(name) for name in sorted(FAMILIES, key=len, reverse=True))
#: A dictionary's name: families joined by "+", none repeated (the lookahead refuses a family that comes again).
DICTIONARY = Described(
    Text(pattern=rf"(?!(?:.*\+)?({_FAMILY})\+(?:.*\+)?\1(?:\+|$))(?:{_FAMILY})(?:\+(?:{_FAMILY}))*"),
    f"one of {', '.join(map(repr, FAMILIES))} or a union of distinct ones joined by '+', e.g. 'legendre+bspline1'",
)


@validate_params({"dictionary": DICTIONARY}, owner_argument="owner")
def make_dictionary(dictionary: str, size: int, *, owner: str = "make_dictionary") -> Dictionary:
    """Validated, cached :class:`Dictionary` for ``dictionary`` (family names joined by ``+``) and total ``size``."""
    spec, names = dictionary, dictionary.split("+")
    smallest = 2 * len(names)
    size = check_param(owner, "size", size, Described(
        Integer(smallest, 4096), f"an int in [{smallest}, 4096] for dictionary {spec!r} (at least 2 atoms per family)"))
    return _cached(spec, int(size))
