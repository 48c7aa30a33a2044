"""The reference pages say what the code does, and the pages are laid out as the documentation promises.

- the command-line reference renders every sub-command of ``dpdist``'s parser (the options themselves are rendered
  from the parser when the site is built: tests/docs/test_docs.py checks them in the HTML);
- the error codes page names every refusal code the servers and clients raise, and the configuration page every
  ``DPDIST_*`` variable the code reads;
- every page of docs/ has one title and at most 600 lines, speaks of behaviour rather than of the project's
  history, and every ``docs/...`` path named in the repository (docstrings, messages, READMEs, tests) exists.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

import dpdist
from dpdist.cli._main import COMMANDS
from source_support import package_trees

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCE = Path(dpdist.__file__).parent
PAGES = sorted(path for path in DOCS.rglob("*.md") if "_build" not in path.parts)


def test_the_command_line_reference_renders_every_sub_command_of_the_parser():
    page = (DOCS / "reference" / "cli.md").read_text()
    rendered = re.findall(r"^```\{argparse\}\n:module: dpdist\.cli\n:func: build_parser\n:prog: dpdist\n:path: (\S+)\n```",
                          page, re.MULTILINE)
    commands = [command for module in COMMANDS.values() for command in module]
    assert rendered == commands  # each sub-command once, in the order `dpdist --help` lists them
    for command in commands:
        assert f"\n## dpdist {command}\n" in page and f"[`dpdist {command}`](#dpdist-{command})" in page, command


#: the classes whose first string argument (or ``code=``) is a refusal's or a client error's code
_RAISERS = re.compile(r"(Error|Refusal)$|^(InvalidRequest|Unauthorized|Forbidden|NotFound|Conflict|TooSlow|TooLarge|"
                      r"UnsupportedMediaType|UnsupportedContentCoding|RateLimited|Busy|Failure|Unprocessable|Refused)$")
_CODE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$|^(busy|internal|exhausted|unauthorized|redirected)$")


def _codes_in(tree: ast.AST) -> set[str]:
    codes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if _RAISERS.search(name):
                for argument in [*node.args, *(keyword.value for keyword in node.keywords if keyword.arg == "code")]:
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and _CODE.match(argument.value):
                        codes.add(argument.value)
        elif isinstance(node, ast.Dict):  # a JSON answer written out: {"error": "internal", ...}
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "error" and isinstance(value, ast.Constant) \
                        and isinstance(value.value, str) and _CODE.match(value.value):
                    codes.add(value.value)
    return codes


@pytest.mark.slow  # a walk of the whole package's syntax trees, 0.5 CPU-s (their parse, shared, 0.8): the scan's unit test below stays
def test_the_error_codes_page_names_every_code_the_code_raises():
    codes = set()
    for path, tree in package_trees().items():  # the syntax trees the package's tests share
        if "_clients_js" not in path.parts:
            codes |= _codes_in(tree)
    assert len(codes) >= 80  # the scan finds the refusals (a broken scan would find none and pass)
    page = (DOCS / "reference" / "errors.md").read_text()
    assert sorted(code for code in codes if f"`{code}`" not in page) == []


def test_the_code_scan_finds_a_refusal_written_either_way():
    tree = ast.parse('raise Conflict("campaign_full", "full")\nraise RelayError(409, "pin_mismatch", "x")\n'
                     'answer = {"error": "internal", "detail": "x"}\nraise ValueError("not a code")')
    assert _codes_in(tree) == {"campaign_full", "pin_mismatch", "internal"}


def test_the_configuration_page_names_every_variable_the_code_reads():
    variables = {name for path in SOURCE.rglob("*.py") if "_clients_js" not in path.parts
                 for name in re.findall(r"\bDPDIST_[A-Z0-9_]*[A-Z0-9]\b", path.read_text())}
    variables -= {"DPDIST_MAX_BODY_BYTES"}  # an option's variable, given as the rule's example on the page
    assert {"DPDIST_ADMIN_TOKEN", "DPDIST_DB"} <= variables
    page = (DOCS / "reference" / "configuration.md").read_text()
    assert sorted(name for name in variables if f"`{name}`" not in page) == []
    assert "`DPDIST_MAX_BODY_BYTES`" in page


def test_every_page_has_one_title_and_at_most_600_lines():
    for page in PAGES:
        lines = page.read_text().splitlines()
        fence, titles = False, []
        for line in lines:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("# "):
                titles.append(line)
        assert len(titles) == 1 and lines[0] == titles[0], (page, titles)
        assert len(lines) <= 600, (page, len(lines))


def test_the_documentation_is_in_four_kinds():
    index = (DOCS / "index.md").read_text()
    for kind in ("tutorials", "how-to", "reference", "explanation"):
        assert (DOCS / kind / "index.md").is_file() and f"{kind}/index" in index, kind


#: process history the product must not carry (the project's issue, attack, audit and review numbers)
PROCESS = re.compile(r"attack ?[0-9]|audit[0-9]|issue [0-9]+|re-?attack|out[s]ider|newcomer[0-9]|finding F?[0-9]",
                     re.IGNORECASE)
#: PROCESS for lowercased ASCII text: a search of ASCII text's lowercase finds what PROCESS finds in it, 5x faster than
#: a case-blind search (which was 0.7 CPU-s over the repository's files)
_PROCESS_LOWER = re.compile(PROCESS.pattern.replace("F?", "f?"))


def _names_process(text: str) -> bool:
    """Whether ``text`` has a line PROCESS finds (its lines are searched one by one only then)."""
    return bool(_PROCESS_LOWER.search(text.lower()) if text.isascii() else PROCESS.search(text))


def test_the_pages_say_behaviour_not_history():
    found = [f"{page.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
             for page in PAGES for text in [page.read_text()] if _names_process(text)
             for number, line in enumerate(text.splitlines(), start=1) if PROCESS.search(line)]
    assert found == [], "\n".join(found)


def test_code_tests_and_clients_say_behaviour_not_history():
    files = subprocess.run(["git", "ls-files", "src", "tests", "clients", "benchmarks", "README.md"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    texts = [(name, (ROOT / name).read_text(errors="replace")) for name in files
             if name.endswith((".py", ".js", ".mjs", ".java", ".md", ".html")) and "vendor" not in name
             and (ROOT / name).is_file()]
    found = [f"{name}:{number}: {line.strip()[:120]}"
             for name, text in texts if _names_process(text)
             for number, line in enumerate(text.splitlines(), start=1)
             if PROCESS.search(line) and "PROCESS = re.compile" not in line]
    assert found == [], "\n".join(found)


def test_every_docs_path_named_in_the_repository_exists():
    """README, the clients' READMEs, docstrings, messages, benchmarks and tests name pages by their path."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    named = {}
    for name in files:
        path = ROOT / name
        if path.suffix not in {".py", ".md", ".js", ".mjs", ".java", ".toml", ".html", ".txt", ".ts"} \
                or "vendor" in path.parts or name == "CHANGELOG.md" or not path.is_file():  # history names old paths
            continue
        for target in re.findall(r"(?<![\w/.])docs/([\w./-]+?\.(?:md|rst))", path.read_text(errors="replace")):
            named.setdefault(target, name)
    assert len(named) >= 30
    missing = {target: where for target, where in named.items()
               if not (DOCS / target).exists() and "NAME" not in target}
    assert missing == {}
