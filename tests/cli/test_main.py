"""The ``dpdist`` parser (dpdist.cli._main): no help shows a doubled percent sign; argparse's refusals are one line."""

from __future__ import annotations


import pytest

from dpdist.cli import build_parser, main
from dpdist.cli._main import listing_parser


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


def test_the_listing_of_the_sub_commands_is_the_whole_parsers(capsys):
    """``dpdist --help`` (and a misspelt command) is answered from the table of the sub-commands, none of their
    modules imported: the same help and the same refusal as the whole parser's."""
    assert listing_parser().format_help() == build_parser().format_help()
    refusals = []
    for parser in (listing_parser(), build_parser()):
        with pytest.raises(SystemExit):
            parser.parse_args(["qurey"])
        refusals.append(capsys.readouterr().err)
    assert refusals[0] == refusals[1] and "invalid choice: 'qurey'" in refusals[0]


@pytest.mark.parametrize(("argv", "named"), [
    (["estimate", "--epsilon", "abc"], "--epsilon"),
    (["estimate", "--epsilon", ""], "--epsilon"),
    (["estimate", "--bins", "1.5"], "--bins"),
    (["estimate", "--missing", "foo"], "--missing"),
    (["release", "x.csv", "--method", "jointexp"], "--method"),
    (["release"], "--column"),
    (["budget", "create"], "--epsilon"),
    (["campaign", "create"], "--name"),
    (["nosuch"], "COMMAND"),
])
def test_argparse_refusals_are_one_line_naming_the_option(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("dpdist: error: ") and err.count("\n") == 1 and named in err and "usage:" not in err


@pytest.mark.parametrize("switches, said", [
    (["--no-clip", "--clip"], "--no-clip and --clip contradict each other: give one of them"),
    (["--clip", "--no-clip", "--clip"], "--clip and --no-clip contradict each other: give one of them"),
    (["--clip", "--clip"], "argument --clip: given more than once; give it once"),
])
def test_a_switch_given_twice_or_in_both_forms_is_refused_naming_them(tmp_path, capsys, switches, said):
    """``dpdist privatize ... --no-clip --clip`` ran, the last one silently winning."""
    config = tmp_path / "grr.json"
    config.write_text('{"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 4}')
    (tmp_path / "d.csv").write_text("x\n1\n2\n")
    with pytest.raises(SystemExit) as stopped:
        main(["privatize", "--config", str(config), "--column", "x", str(tmp_path / "d.csv"), "--out",
              str(tmp_path / "r.bin"), *switches])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith(f"dpdist: error: {said}") and err.count("\n") == 1
    assert not (tmp_path / "r.bin").exists()
