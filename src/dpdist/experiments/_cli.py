"""``dpdist reproduce``, ``dpdist datasets`` and ``dpdist estimate`` (to be written)."""


def add_commands(subparsers) -> None:
    return None
