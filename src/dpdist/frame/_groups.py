"""The groups of a group-by, for the local and the central functions alike: the tables of their options (``by``,
``groups``, ``missing_keys``, ``session``), the public keys checked, the rows whose key is missing, one generator per
group."""

from __future__ import annotations

import numpy as np

from .._missing import MissingPolicy
from .._rng import check_rng
from .._validation import Described, Distinct, InstanceOf, Items, NamedInstanceOf, Optional, Options, check_param
from ..errors import InvalidParameterError
from ._tables import Table

__all__ = ["MISSING_KEYS", "GROUPS", "SESSION", "BY", "check_missing_key_rows", "check_groups", "group_generators"]


#: ``missing_keys`` of the grouped estimates and releases: what a row whose key is missing (null, NaN) is
MISSING_KEYS = Described(Options(("refuse", "drop", "group")),
                         "'refuse' (rows whose key is missing refused, counted), 'drop' (left out, counted) or 'group' "
                         "(a group of their own, key None)")
#: ``groups`` of a group-by: the public keys (None: chosen privately, where a function allows it)
GROUPS = Optional(Items(None, "a list of the public keys, at least one", min_length=1))
#: ``session``: charged before anything is released (the module is not imported to state it: see NamedInstanceOf)
SESSION = Optional(NamedInstanceOf("dpdist.budget", ("BudgetSession",), "a dpdist.budget.BudgetSession"))
#: ``by`` of a group-by: its key column(s) (None is refused: a group-by needs its key)
BY = InstanceOf((str, list, tuple), "the key column(s) of the groups: a column name or a list of them")


def check_missing_key_rows(owner: str, table: Table, by: tuple[str, ...], keys_policy: str, *,
                           private: bool = False) -> None:
    """Rows whose key is missing: refused with the count (``"refuse"``), or counted in a warning (``"drop"``)."""
    if keys_policy == "group":
        return
    mask = table.missing_keys(by)
    policy = MissingPolicy(keys_policy, option="missing_keys", records=True,
                           also=", or missing_keys='group' to make them a group of key None")
    policy.apply(np.arange(mask.size), owner, f"The key column(s) {list(by)} given to {owner} (a row whose key is "
                                              "missing is in no group)", mask=mask, private=private)


def _sorted_keys(present: dict) -> list:
    """The keys present, sorted when they can be (so every engine lists them alike), keys with a missing part
    (``missing_keys="group"``) last."""
    whole = [key for key in present if not _has_missing(key)]
    try:
        whole = sorted(whole)
    except TypeError:
        pass
    return whole + [key for key in present if _has_missing(key)]


def _has_missing(key) -> bool:
    return any(_missing_key(part) for part in (key if isinstance(key, tuple) else (key,)))


def check_groups(owner: str, groups, by: tuple[str, ...], missing_keys: str = "refuse") -> list:
    """The public keys of a group-by (a non-empty list: the tables of the group-bys), distinct values (tuples of
    ``len(by)`` for several columns);
    ``None`` (in a part) lists the group of the rows whose key is missing there, with ``missing_keys="group"`` only."""
    keys = [tuple(key) if isinstance(key, list) else key for key in groups]
    if missing_keys != "group" and any(_has_missing(key) for key in keys):
        raise InvalidParameterError(
            f"The 'groups' argument of {owner} must list keys that are values: a row whose key is missing (null, "
            f"NaN) is in no group, so a missing key would be released as an empty group (missing_keys='group' makes "
            f"them a group, listed as None). Got {groups!r:.200}."
        )
    keys = [_none_for_missing(key) for key in keys]
    keys = list(check_param(owner, "groups", keys, Distinct(Items(None, "", min_length=1),
                                                            "distinct public keys, at least one")))
    if len(by) > 1 and not all(isinstance(key, tuple) and len(key) == len(by) for key in keys):
        raise InvalidParameterError(
            f"The 'groups' argument of {owner} must hold tuples of {len(by)} values, one per column of 'by' {list(by)}. "
            f"Got {groups!r}."
        )
    return keys


def _none_for_missing(key):
    """A listed key with ``None`` for each missing part (NaN, pandas' NA), as the groups of the frame name them."""
    if isinstance(key, tuple):
        return tuple(None if _missing_key(part) else part for part in key)
    return None if _missing_key(key) else key


def _missing_key(value) -> bool:
    """Whether a listed key is a missing value: None, NaN (a value unequal to itself), pandas' NA."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas' NA: its comparisons are missing too
        return True


def group_generators(rng, count: int) -> list:
    """Independent generators, one per group (the same seed for every group would repeat the same noise)."""
    if rng is None:
        return [None] * count  # each draws from the CSPRNG
    root = check_rng(rng, owner="group-by")
    return [np.random.default_rng(child) for child in
            np.random.SeedSequence(root.integers(0, 2**63, size=4).tolist()).spawn(count)]
