"""The package's structure: floors written down once, imports running down them, no circle between files.

Every import counts: at module level, inside a function and under ``if TYPE_CHECKING:``
(a lazy or type-only import still ties two files together; hiding it only hides the tie).
Importing ``a.b`` from ``a`` counts as importing ``a.b``; ``from a import name`` counts as
importing ``a`` (its ``__init__``), as Python does.  The floors are the picture in
``docs/explanation/design.md`` ("Layers"): a module imports only modules of lower floors, and the files
of one package import each other without a circle.  An import inside a function stays only
for a measured cost or an optional extra, and says so (``# lazy: <reason>``).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpdist
from dpdist.cli._commands import COMMANDS
from source_support import import_graph, imports, package_modules as _modules, source_imports as _source_imports

SOURCE = Path(dpdist.__file__).parent
DESIGN = Path(__file__).resolve().parents[2] / "docs" / "explanation" / "design.md"
#: What the contract must not load, nor a first query unless its release needs it (their cost is the reason of most
#: lazy imports).
HEAVY = ("scipy", "dp_accounting", "matplotlib", "pandas", "polars", "pyarrow", "dask", "httpx", "starlette", "uvicorn", "psycopg",
         "narwhals", "duckdb", "pyspark", "ibis")


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path that ends where it starts), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def floors(text: str) -> dict[str, int]:
    """The floor of every top-level module, from the picture under ``## Layers`` (``__init__``: the root)."""
    section = text.split("\n## Layers\n", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    found: dict[str, int] = {}
    for line in block.splitlines():
        match = re.match(r"^\s*(\d+)\s{2,}(\S.*)$", line)
        if match:
            for name in match.group(2).split(" · "):
                assert name.strip() not in found, f"{name} stands on two floors"
                found[name.strip()] = int(match.group(1))
    return found


def top_level(module: str) -> str:
    """``dpdist.local.frequency.grr`` -> ``local``; the root package -> ``__init__``."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def running_up(graph: dict[str, set[str]], floor: dict[str, int]) -> list[str]:
    """The imports between two top-level modules that do not go to a lower floor."""
    return [
        f"{source} -> {target} ({top_level(source)} on {floor[top_level(source)]}, "
        f"{top_level(target)} on {floor[top_level(target)]})"
        for source, targets in sorted(graph.items())
        for target in sorted(targets)
        if top_level(source) != top_level(target) and floor[top_level(target)] >= floor[top_level(source)]
    ]


def unexplained_lazy_imports() -> list[str]:
    """Imports inside functions with no ``# lazy: <reason>`` on their lines, in every package."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        if "_clients_js" in relative.parts:
            continue
        lines, found_imports = _source_imports(path)
        for node, in_function, type_only in found_imports:
            if not in_function or type_only:
                continue
            said = " ".join(lines[node.lineno - 2 : node.end_lineno])
            if not re.search(r"# lazy: \S", said):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    return found


# ---------------------------------------------------------------------- the checks can fail
def test_find_cycle_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_lazy_and_type_only_imports_are_counted():
    code = "import x\ndef f():\n    import y\nif TYPE_CHECKING:\n    import z\n"
    kinds = {node.names[0].name: (lazy, typed) for node, lazy, typed in imports(ast.parse(code))}
    assert kinds == {"x": (False, False), "y": (True, False), "z": (False, True)}


def test_an_import_running_up_is_found():
    floor = {"local": 3, "estimates": 2, "__init__": 4}
    graph = {"dpdist.estimates._x": {"dpdist.local._protocol"}, "dpdist.local._protocol": {"dpdist.estimates"},
             "dpdist": {"dpdist.local"}}
    assert running_up(graph, floor) == ["dpdist.estimates._x -> dpdist.local._protocol (estimates on 2, local on 3)"]


def test_the_picture_is_read():
    picture = "x\n## Layers\n\n```text\nfloor  modules\n  1   b · c\n  0   a\n```\n"
    assert floors(picture) == {"a": 0, "b": 1, "c": 1}


# ---------------------------------------------------------------------- the package
def test_the_package_has_no_circle_between_files():
    graph = import_graph()
    assert "dpdist.local._protocol" in graph and graph["dpdist.local._protocol"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_every_top_level_module_stands_on_one_floor_of_the_picture():
    floor = floors(DESIGN.read_text())
    present = {top_level(name) for name in _modules()}
    assert present == set(floor), f"not in the picture: {sorted(present - set(floor))}; gone: {sorted(set(floor) - present)}"


def test_imports_run_down_the_floors():
    up = running_up(import_graph(), floors(DESIGN.read_text()))
    assert not up, "imports against the floors of docs/explanation/design.md:\n" + "\n".join(up)


#: the parties of a relayed collection, which must not learn what another learns: none imports the others' modules
PARTIES = ("dpdist.serve", "dpdist.relay", "dpdist.issuer", "dpdist.client")


def test_no_party_imports_another_party():
    graph = import_graph()
    party = {name: next((owner for owner in PARTIES if name == owner or name.startswith(owner + ".")), None) for name in graph}
    across = [f"{source} -> {target}" for source, targets in graph.items() for target in targets
              if party[source] and party.get(target) and party[target] != party[source]
              and source != "dpdist.serve.client"]  # (the deprecated name of dpdist.client, re-exporting it)
    assert not across, "a party imports another's modules (what two share lives below both):\n" + "\n".join(sorted(across))


def test_every_import_inside_a_function_says_why():
    found = unexplained_lazy_imports()
    assert not found, "imports inside functions without '# lazy: <reason>' (hoist them, or say why):\n" + "\n".join(found)


def loaded_by(code: str) -> list[list[str]]:
    """The modules a new Python process loads running ``code``: at each ``loaded()`` it calls, those loaded since the
    process started (its interpreter's own start left out), sorted."""
    prelude = ("import json, sys\nstarted = set(sys.modules)\n"
               "def loaded():\n    print(json.dumps(sorted(set(sys.modules) - started)))\n")
    out = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def outside_the_standard_library(modules: list[str]) -> list[str]:
    """The packages of ``modules`` that are neither the standard library's nor dpdist."""
    return sorted({name.split(".")[0] for name in modules} - set(sys.stdlib_module_names) - {"dpdist"})


@functools.cache
def _fresh_interpreter() -> list[list[str]]:
    """One new process for the three tests below (0.3 CPU-s): ``import dpdist``, then ``dpdist --help``, then the
    contract used alone (``dpdist.local._protocol``, a GRR aggregator built and added to)."""
    return loaded_by(
        "import contextlib, io as text\n"
        "import dpdist\nloaded()\n"
        "from dpdist.cli import main\n"
        "with contextlib.redirect_stdout(text.StringIO()):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass\n"
        "loaded()\n"
        "from dpdist.local import _protocol, make\n"
        "make('grr', epsilon=1.0, domain_size=4).aggregator().add([0, 1])\n"
        "loaded()\n"
    )


def test_import_dpdist_loads_the_standard_library_only():
    """``import dpdist`` loads no NumPy, let alone SciPy, an engine or an optional extra: every sub-package loads on
    first use (PEP 562)."""
    assert outside_the_standard_library(_fresh_interpreter()[0]) == []


def test_the_command_lines_listing_loads_the_standard_library_only():
    """``dpdist --help`` lists the sub-commands from their table, none of their modules (nor NumPy) imported."""
    loaded = _fresh_interpreter()[1]
    assert outside_the_standard_library(loaded) == []
    assert not set(loaded) & set(COMMANDS)


def test_the_contract_does_no_file_io():
    """Importing the contract (and building and using an aggregator) loads no I/O module, and nothing heavy."""
    loaded = _fresh_interpreter()[2]
    assert not [name for name in loaded if name == "dpdist.io" or name.startswith("dpdist._io")]
    assert not set(outside_the_standard_library(loaded)) & set(HEAVY)


#: what no query of Laplace releases loads in a new process (SciPy is for the Gaussian's calibration; the protocols,
#: pandas and matplotlib for other work)
NOT_FOR_A_QUERY = ("scipy", "pandas", "matplotlib", "dpdist.local", "dpdist.amplification")
DECILES = "QUANTILES(income, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)"


def _among(loaded: list[str], names) -> list[str]:
    return sorted({name for name in loaded for given in names if name == given or name.startswith(f"{given}.")})


@pytest.mark.slow
def test_a_first_query_loads_what_its_release_needs_only(tmp_path):
    """A new process's first query, on a Polars frame in Python and through ``dpdist query`` on a CSV file: deciles
    per public region (discrete Laplace noise: the tree or JointExp in each region) load no SciPy, no local protocol,
    no pandas, no plotting; the expressions no SQL parser, the command line no Polars (PyArrow reads its file)."""
    polars = pytest.importorskip("polars")
    rng = np.random.default_rng(5)
    table = tmp_path / "t.csv"
    polars.DataFrame({"region": rng.choice(["north", "south", "east", "west"], 3_000),
                      "income": rng.lognormal(10.3, 0.8, 3_000)}).write_csv(table)
    python = loaded_by(
        "import polars, dpdist\nfrom dpdist.queries import quantiles\n"
        f"query = dpdist.query(polars.read_csv({str(table)!r}), epsilon=1.0).group_by('region', keys=['north', "
        "'south', 'east', 'west'])\n"
        "query.agg(quantiles('income', [0.1, 0.5, 0.9], (0, 300_000))).release().table()\nloaded()\n")[0]
    command_line = loaded_by(
        "import contextlib, io as text\nfrom dpdist.cli import main\n"
        "with contextlib.redirect_stdout(text.StringIO()):\n"
        f"    main(['query', 'SELECT region, {DECILES} FROM t GROUP BY region', '--table', 't={table}', '--epsilon', "
        "'1', '--bounds', 'income=0,300000', '--keys', 'region=north,south,east,west'])\nloaded()\n")[0]
    assert _among(python, (*NOT_FOR_A_QUERY, "sqlglot")) == []
    assert _among(command_line, (*NOT_FOR_A_QUERY, "polars")) == []
    assert "sqlglot" in outside_the_standard_library(command_line)  # the check sees what the command loads


def test_the_io_layer_is_the_one_entry_to_files(tmp_path):
    from dpdist import io, local

    proto = local.make("oue", epsilon=1.0, domain_size=16)
    aggregator = proto.aggregator().add(proto.privatize([1, 2, 3, 3], rng=0))
    assert not hasattr(aggregator, "save") and not hasattr(local.Aggregator, "load")
    io.save_state(tmp_path / "state.bin", aggregator)
    assert io.load_state(tmp_path / "state.bin").aggregator == aggregator
    assert io.load_state(tmp_path / "state.bin", proto, journal=False).aggregator == aggregator
