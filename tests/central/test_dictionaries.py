"""The dictionaries of atoms for matching pursuit (sec. V, VI-C and App. A of Tao & Sarwate): norms, Gram matrices,
L1 norms and antiderivatives against quadrature, the dyadic splines, the families' rule."""

import re

import numpy as np
import pytest
from numpy.polynomial import legendre

from central_releases import SPECS, knots_of, quadrature
from dpdist.central.dictionaries import make_dictionary
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize("spec,size", SPECS)
def test_atoms_have_unit_norm_and_gram_matches_quadrature(spec, size):
    d = make_dictionary(spec, size)
    x, w = quadrature(knots_of(d))
    values = d.values(x)
    np.testing.assert_allclose((values * w[:, None]).T @ values, d.gram, atol=1e-9)
    np.testing.assert_allclose(np.diag(d.gram), 1.0, atol=1e-12)

@pytest.mark.parametrize("spec,size", SPECS)
def test_l1_norms_and_antiderivatives_match_quadrature(spec, size):
    d = make_dictionary(spec, size)
    extra = np.concatenate([legendre.legroots([0] * i + [1]) for i in range(2, 13)]) if "legendre" in spec else []
    x, w = quadrature(np.concatenate([knots_of(d), extra]))
    np.testing.assert_allclose(w @ np.abs(d.values(x)), d.l1_norms, rtol=1e-9)
    upper = 0.3
    x, w = quadrature(np.concatenate([knots_of(d), [upper]]))
    keep = x < upper
    np.testing.assert_allclose(w[keep] @ d.values(x[keep]), d.antiderivative([upper])[0], atol=1e-10)

@pytest.mark.parametrize("spec,size", SPECS)
def test_ecdf_inner_products_match_quadrature(spec, size):
    u = np.sort(np.random.default_rng(0).uniform(-1, 1, 25))
    d = make_dictionary(spec, size)
    x, w = quadrature(np.concatenate([knots_of(d), u]), panels=400)
    ecdf = np.searchsorted(u, x, side="right") / u.size
    np.testing.assert_allclose(d.ecdf_inner_products(u), (w * ecdf) @ d.values(x), atol=1e-10)

def test_dyadic_splines_fill_levels_coarse_to_fine():
    boxes = make_dictionary("bspline0-dyadic", 9).families[0]
    np.testing.assert_allclose(boxes._lo[:7], [-1, -1, 0, -1, -0.5, 0, 0.5])  # levels 0, 1, 2
    np.testing.assert_allclose(boxes._hi[:7], [1, 0, 1, -0.5, 0, 0.5, 1])
    np.testing.assert_allclose(boxes._hi[7:] - boxes._lo[7:], 0.25)  # two of level 3, spread out
    assert boxes._lo[7] == -1 and boxes._hi[8] == 1
    hats = make_dictionary("bspline1-dyadic", 6).families[0]
    np.testing.assert_allclose(hats._centres, [-1, 1, -1, 0, 1, -1])  # levels 0 (2 knots), 1 (3), part of 2
    np.testing.assert_allclose(hats._widths, [2, 2, 1, 1, 1, 0.5])

@pytest.mark.parametrize("spec, accepted", [
    ("bspline0+bspline0-dyadic", True), ("bspline0-dyadic+legendre+bspline0", True), ("legendre+normal-cdf", True),
    ("bspline0-dyadic+legendre+bspline0-dyadic", False), ("bspline1+bspline1", False), ("legendre+", False),
    ("legendre++bspline1", False), ("Legendre", False),
])
def test_a_dictionary_is_distinct_families_joined_by_plus(spec, accepted):
    """The dictionary's rule (one pattern: families, none repeated, a prefix of another family being another)."""
    if accepted:
        assert make_dictionary(spec, 12).size == 12
    else:
        with pytest.raises(InvalidParameterError, match=rf"The 'dictionary' parameter of make_dictionary .*Got '{re.escape(spec)}'"):
            make_dictionary(spec, 12)
