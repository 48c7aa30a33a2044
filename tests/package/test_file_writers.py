"""Files are written through ``_io``: the modules outside it that write a file themselves are the ones docs/explanation/design.md
names, each for its reason ("Files are written through `_io`", in "Layers").

A write is a call that opens a file for writing (``open(path, "w")``, ``Path.open("a")``, ``os.open``), writes one
(``write_text``, ``write_bytes``, matplotlib's ``savefig``) or opens a database (``sqlite3.connect``), outside a
``with`` of ``_io/_atomic``'s ``atomic_writer`` or ``atomic_path`` (which replace the file whole, fsynced).
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpdist
from source_support import package_trees

SOURCE = Path(dpdist.__file__).parent
ROUTED = {"atomic_writer", "atomic_path", "write_text_atomically"}
#: module -> why it writes a file itself (each named in docs/explanation/design.md)
WRITERS = {
    "serve/_database.py": "the service's database: SQLite writes its own files, in the group commit's transactions",
    "estimates/_drawing.py": "figures: matplotlib's savefig writes the file a caller names",
    "experiments/_plots.py": "the experiments' figures, two formats of one figure",
    "experiments/_runlog.py": "runs.jsonl, a log that grows by lines (appended and fsynced)",
    "client/_admin.py": "AdminClient.export's download, a scratch file read back by _io and deleted",
    "demo/_campaign.py": "the demo's server log and node script, in its own temporary folder",
    "cli/_main.py": "standard output sent to os.devnull once the reader of a pipe left",
}


def _mode(call: ast.Call, position: int) -> str:
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)
    return "r"


def _write(call: ast.Call) -> str | None:
    """What kind of write ``call`` is, or None."""
    function = call.func
    name = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
    owner = getattr(function, "value", None)
    if name == "open" and isinstance(function, ast.Name):
        return "open" if set(_mode(call, 1)) & set("wax+") else None
    if name == "open" and isinstance(owner, ast.Name) and owner.id == "os":
        flags = call.args[1] if len(call.args) > 1 else None
        read_only = isinstance(flags, ast.Attribute) and flags.attr == "O_RDONLY"  # os.open(path, os.O_RDONLY) writes nothing
        return None if read_only else "os.open"
    if name == "open":
        return "Path.open" if set(_mode(call, 0)) & set("wax+") else None
    if name in ("write_text", "write_bytes", "savefig"):
        return name
    if name == "connect" and isinstance(owner, ast.Name) and owner.id == "sqlite3":
        return "sqlite3.connect"
    return None


def writes(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, kind)`` of every write of ``tree`` outside a ``with`` of the atomic write."""
    found = []

    def visit(node: ast.AST, routed: bool) -> None:
        if isinstance(node, (ast.With, ast.AsyncWith)):
            managers = {getattr(item.context_expr.func, "id", getattr(item.context_expr.func, "attr", None))
                        for item in node.items if isinstance(item.context_expr, ast.Call)}
            routed = routed or bool(managers & ROUTED)
        if isinstance(node, ast.Call) and not routed and (kind := _write(node)) is not None:
            found.append((node.lineno, kind))
        for child in ast.iter_child_nodes(node):
            visit(child, routed)

    visit(tree, False)
    return found


def test_the_scan_finds_writes_and_passes_the_atomic_ones():
    code = ("open(p, 'w')\nopen(p)\nPath(p).open('a')\nq.write_text('x')\nfigure.savefig(p)\nsqlite3.connect(p)\n"
            "os.open(p, 1)\nwith atomic_writer(p) as h:\n    open(h, 'wb')\nwith atomic_path(p) as t, t.open('w') as h:\n"
            "    pass\n")
    assert [kind for _, kind in writes(ast.parse(code))] == [
        "open", "Path.open", "write_text", "savefig", "sqlite3.connect", "os.open"]


def test_files_are_written_by_io_or_by_the_modules_design_names():
    found = {}
    for path, tree in package_trees().items():  # parsed once per session (tests/source_support.py)
        relative = path.relative_to(SOURCE).as_posix()
        if relative.startswith("_io/"):
            continue
        text = path.read_text()
        if not any(word in text for word in ("open(", "write_text", "write_bytes", "savefig", "connect(")):
            continue
        if hits := writes(tree):
            found[relative] = hits
    unnamed = {module: hits for module, hits in found.items() if module not in WRITERS}
    assert not unnamed, f"write through dpdist._io (or name the module and why in WRITERS and docs/explanation/design.md): {unnamed}"
    assert sorted(WRITERS) == sorted(found), f"WRITERS that no longer write: {sorted(set(WRITERS) - set(found))}"


def test_design_names_every_writer():
    design = (SOURCE.parents[1] / "docs" / "explanation" / "design.md").read_text()
    assert [module for module in WRITERS if f"`{module}`" not in design] == []
