r"""A privacy budget session: one total budget that every release and every campaign is charged against.

An analyst who releases several statistics of the same people spends the sum of
their budgets (basic sequential composition, :func:`dpdist.privacy.sequential`).
A :class:`BudgetSession` holds that total and keeps the account: each release or
campaign is **charged before it runs**, and the one that would overspend is
refused with :class:`~dpdist.errors.PrivacyBudgetError` stating what is left.
The model is that of OpenDP's compositors, Tumult Analytics' sessions and
diffprivlib's ``BudgetAccountant``.

>>> import numpy as np
>>> from dpdist import central
>>> from dpdist.budget import BudgetSession
>>> session = BudgetSession(epsilon=1.0)
>>> x = np.random.default_rng(0).uniform(size=1000)
>>> cdf = session.release(central.histogram_queries, x, epsilon=0.5, bounds=(0, 1))
>>> session.remaining.epsilon
0.5

What the session promises, and how:

* **One relation.**  The total is a central :class:`~dpdist.privacy.PrivacyGuarantee`
  under ``"replace"`` (the default) or ``"add-remove"`` neighbours.  Each charge is
  stated in that relation by :func:`dpdist.privacy.convert` before it is added: an
  :math:`\varepsilon`-LDP campaign costs :math:`\varepsilon` of a replace budget; a
  release under add/remove neighbours costs :math:`2\varepsilon` of a replace budget
  (group privacy); a release under replace neighbours cannot be charged to an
  add/remove budget (it may publish the number of records), nor can a local
  campaign.  The charges compose sequentially (the session assumes they all touch
  the same people); a charge over disjoint parts of the data (a group-by on a
  public key, :func:`dpdist.frame.group_release`) is their parallel composition.
* **Refusal on public inputs only.**  What a release costs is computed from its
  public arguments, never from the data: :meth:`BudgetSession.release` runs the
  release once on no records (every central release accepts none, and its
  guarantee does not depend on the data), which also checks every public argument,
  so a typo is refused before anything is charged.  A refused release never reads
  its data.  Once charged, a release that fails keeps its charge (its failure may
  depend on the data).
* **Reported in every result.**  A result's ``guarantee`` becomes a
  :class:`SessionGuarantee`: the release's own guarantee plus a
  :class:`BudgetStatement` (the total, what this release charged, what is spent
  and left after it); ``describe()`` and ``to_dict()`` include it.
* **A file for the command line.**  :meth:`BudgetSession.create` and
  :meth:`BudgetSession.open` keep the account in a JSON file
  (``dpdist budget create FILE``; ``--budget FILE`` on ``release``, ``estimate``,
  ``privatize``, ``submit`` and ``campaign open``).  Each charge is one
  read-check-write under an exclusive lock of the file, so concurrent processes
  never spend the same budget twice.
"""

from typing import TYPE_CHECKING, Any

from ._planned import planned_guarantee, with_statement
from ._statement import BudgetStatement, Charge, Remaining, SessionGuarantee

if TYPE_CHECKING:
    from ._session import BudgetSession

__all__ = ["BudgetSession", "BudgetStatement", "Charge", "SessionGuarantee", "Remaining", "planned_guarantee", "with_statement"]


def __getattr__(name: str) -> Any:
    """:class:`BudgetSession` on first use (PEP 562): a release's plan (:func:`planned_guarantee`) needs no session,
    and the session's accounts of local campaigns load every local protocol (0.25 CPU-s)."""
    if name == "BudgetSession":
        from ._session import BudgetSession  # lazy: loads every local protocol (0.25 CPU-s)

        return BudgetSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
