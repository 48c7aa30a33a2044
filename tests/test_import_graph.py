"""The package's modules import each other without cycles (issue 13 item 4).

Every import counts, at module level or inside a function (a lazy import only
hides a cycle), except those under ``if TYPE_CHECKING:``.  Importing a name
from a package counts as importing its ``__init__``, as Python does.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dpdist

SOURCE = Path(dpdist.__file__).parent


def _modules() -> dict[str, tuple[Path, bool]]:
    modules = {}
    for path in SOURCE.rglob("*.py"):
        parts = ["dpdist", *path.relative_to(SOURCE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        if _is_type_checking_block(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rsplit(".", 1)[0]
        targets = set()
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.add(submodule if submodule in modules else module)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


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


def test_find_cycle_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "dpdist.local._protocol" in graph and graph["dpdist.local._protocol"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_contract_does_no_file_io():
    """Importing the contract (and building, saving-free using an aggregator) loads no I/O module."""
    code = (
        "import sys; from dpdist.local import _protocol, make; "
        "make('grr', epsilon=1.0, domain_size=4).aggregator().add([0, 1]); "
        "print(sorted(m for m in sys.modules if m == 'dpdist.io' or m.startswith('dpdist._io')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_io_layer_is_the_one_entry_to_files(tmp_path):
    from dpdist import io, local

    proto = local.make("oue", epsilon=1.0, domain_size=16)
    aggregator = proto.aggregator().add(proto.privatize([1, 2, 3, 3], rng=0))
    assert not hasattr(aggregator, "save") and not hasattr(local.Aggregator, "load")
    io.save_state(tmp_path / "state.bin", aggregator)
    assert io.load_state(tmp_path / "state.bin").aggregator == aggregator
    assert io.load_state(tmp_path / "state.bin", proto, journal=False).aggregator == aggregator
