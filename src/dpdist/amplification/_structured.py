"""The output classes of one neighbouring pair of a symmetric protocol: :mod:`dpdist.accounting._pair_classes`
(the accountant reads a pair's exact privacy loss from them; the shuffle reductions read them here)."""

from ..accounting._pair_classes import pair_classes

__all__ = ["pair_classes"]
