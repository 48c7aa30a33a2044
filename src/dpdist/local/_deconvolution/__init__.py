"""Private machinery of :mod:`dpdist.local.deconvolution` (paper 001, Fang et al.).

``spectra``      transfer spectrum H of a pure protocol and the noise power (Thm. 3, eq. 20)
``wiener``       Wiener gain (eq. 16), Direct Wiener and the Improved Iterative Wiener (Alg. 1)
``permutation``  Average over Multiple Random Permutations (AMRP), batched
``smoothing``    the (1/4, 1/2, 1/4) smoothing baseline (eq. 25) and the Gaussian filter (App. C)

Everything here works on half spectra (``scipy.fft.rfft``): the support vector
is real and the transfer vector is symmetric, so the half spectrum carries all
the information at half the cost.
"""

#: Names accepted by ``method`` (here, so that the frequency oracles declare their
#: ``deconvolve`` option without importing scipy).
METHODS = ("inverse", "dw", "iiw", "iiw-g", "amrp", "smooth", "gf", "gf-dw")
