"""The ``dpdist`` parser (dpdist.cli._main): no help shows a doubled percent sign."""

from __future__ import annotations


from dpdist.cli import build_parser


def test_no_help_shows_a_doubled_percent_sign(capsys):
    """`dpdist release --help` showed '95%%' (argparse does not %-format a description)."""
    parser = build_parser()
    actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    helps = []
    for action in actions:
        for name, sub in action.choices.items():
            helps.append(sub.format_help())
            for nested in [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]:
                helps += [inner.format_help() for inner in nested.choices.values()]
    assert len(helps) > 10 and not [text for text in helps if "%%" in text]
