r"""Key-value data: each user holds a set of (key, value) pairs, keys of a public domain of ``d``,
values in :math:`[-1, 1]` (an app and its minutes of use, scaled), and the collector estimates each
key's frequency (the share of users holding it) and its mean value (over the users holding it).

* ``privkv`` -- one key sampled from the whole domain, its value perturbed by VPM and its presence by
  randomized response, at :math:`\varepsilon/2` each (Ye, Hu, Meng, Zheng, IEEE S&P 2019);
* ``pckv-ue`` and ``pckv-grr`` -- one pair sampled from the user's own set padded to length
  :math:`\ell` (Padding-and-Sampling), perturbed with key and value correlated, under the tighter
  composition of the combined report and its optimized budget split (Gu, Li, Cheng, Xiong, Cao,
  USENIX Security 2020).

A batch of users is a :class:`KeyValueSets` (pairs of every user, one after another, and each
user's count) or a 2-D array of shape ``(n, d)`` whose entry ``[u, k]`` is user ``u``'s value of
key ``k``, NaN where the user does not hold the key.  Every protocol returns a
:class:`KeyValueEstimate` (frequencies with their analytic variance, and means).
"""

from .._autoload import import_submodules
from ._result import KeyValueEstimate
from ._sets import KeyValueSets

import_submodules(__name__, __path__)

__all__ = ["KeyValueEstimate", "KeyValueSets"]
