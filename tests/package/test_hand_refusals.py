"""The package's hand-written refusals of a bad argument stay within their ceilings.

A check of one argument is a rule of a parameter table (a function's ``validate_params``, a protocol's
``_constraints``, a command's options): described once, refused in one form, its bad-input tests generated
(tests/package/test_parameter_tables.py).  What is left by hand depends on the data or on state, not on one argument.
A refusal is counted where it is raised: ``raise InvalidParameterError(...)``, and ``raise refused(...)`` where
``refused`` is a function of the package that builds one (annotated ``-> InvalidParameterError`` or returning
``InvalidParameterError(...)``), so moving a message into such a function does not lower the count.  The names a
call stands for are resolved through the module's own definitions and its ``from ... import`` statements.
"""

from __future__ import annotations

import ast
import textwrap
from collections import Counter

from source_support import package_modules, package_trees

ERROR = "InvalidParameterError"
#: ``raise InvalidParameterError(...)`` statements the package may hold
MAX_HAND_RAISES = 315
#: those and the ``raise f(...)`` statements where ``f`` is a function of the package that builds an
#: InvalidParameterError (an SQL statement's refusals, a shared message of unknown names, ...): the ceiling above and
#: the 89 raised through builders when it was set.  A refusal moved into a builder counts here still; a new one
#: of a statement's content is paid for by a check stated as a rule elsewhere
MAX_REFUSALS = MAX_HAND_RAISES + 89


def _name(node: ast.AST | None) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


#: the nodes whose lists can hold statements (imports, definitions, returns and raises are statements)
_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements(node: ast.AST, function: ast.AST | None = None):
    """``(statement, the function that holds it)`` for every statement under ``node``: only the lists of statements
    are walked (bodies, branches, handlers, cases), a tenth of the nodes."""
    for field in node._fields:
        children = getattr(node, field, None)
        if not isinstance(children, list):
            continue
        for child in children:
            if not isinstance(child, _HOLDS_STATEMENTS):
                break
            if isinstance(child, ast.stmt):
                yield child, function
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            yield from _statements(child, inner)


def _imported(module: str, is_package: bool, statements: list) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name) of every ``from ... import`` of ``statements`` (relative ones resolved)."""
    package = module if is_package else module.rsplit(".", 1)[0]
    names = {}
    for node, _ in statements:
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            names.update({alias.asname or alias.name: (source, alias.name) for alias in node.names})
    return names


def _builders(statements: list, aliases: set[str]) -> set[str]:
    """The functions and methods of ``statements`` annotated to return the error (``aliases``: its names in the
    module), or returning one they build."""
    found = set()
    for node, function in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _name(node.returns) in aliases:
            found.add(node.name)
        elif (isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and _name(node.value.func) in aliases
              and function is not None):
            found.add(function.name)
    return found


Modules = dict[str, tuple[list, dict[str, tuple[str, str]], set[str], set[str]]]


def _modules(sources: dict[str, tuple[ast.Module, bool]]) -> Modules:
    """Module -> (its statements, its imported names, the error's names in it, the names of its functions and methods
    that build the error), of ``sources`` (module -> its tree and whether it is a package)."""
    found = {}
    for module, (tree, is_package) in sources.items():
        statements = list(_statements(tree))
        imported = _imported(module, is_package, statements)
        aliases = {ERROR, *(local for local, (_, name) in imported.items() if name == ERROR)}
        found[module] = (statements, imported, aliases, _builders(statements, aliases))
    return found


def _is_builder(modules: Modules, module: str, name: str, depth: int = 0) -> bool:
    """Whether ``name`` in ``module`` is a function of the package that builds the error (re-exports followed)."""
    if module not in modules or depth > 5:
        return False
    _, imported, _, builders = modules[module]
    return name in builders or (name in imported and _is_builder(modules, *imported[name], depth + 1))


def refusals(sources: dict[str, tuple[ast.Module, bool]]) -> tuple[Counter, Counter]:
    """Per module of ``sources``, the ``raise`` statements that build an InvalidParameterError by hand, and those that
    build it through a function of the package."""
    modules = _modules(sources)
    by_hand: Counter = Counter()
    through_builders: Counter = Counter()
    for module, (statements, _, aliases, builders) in modules.items():
        for node, _ in statements:
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            called = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = _name(called)
            if name in aliases:
                by_hand[module] += 1
            elif isinstance(node.exc, ast.Call) and name is not None and (
                    name in builders if isinstance(called, ast.Attribute) else _is_builder(modules, module, name)):
                through_builders[module] += 1
    return by_hand, through_builders


def test_the_hand_written_refusals_stay_within_their_ceilings():
    trees = package_trees()
    by_hand, through_builders = refusals({module: (trees[path], is_package)
                                          for module, (path, is_package) in package_modules().items()})
    for counted, ceiling, what in ((by_hand, MAX_HAND_RAISES, f"'raise {ERROR}(...)'"),
                                   (by_hand + through_builders, MAX_REFUSALS, f"raises of an {ERROR} built by hand "
                                                                              "or by a function of the package")):
        total = sum(counted.values())
        assert total <= ceiling, (
            f"{total} {what} in src/dpdist, above {ceiling}: state the new checks as rules of a parameter table "
            f"(dpdist._validation; the CLI's option rules). Most in: {counted.most_common(5)}")


_PACKAGE = {
    "p.errors": """
        class InvalidParameterError(ValueError): ...
        class MalformedDocumentError(InvalidParameterError): ...
    """,
    "p.messages": """
        from .errors import InvalidParameterError, MalformedDocumentError
        def refused(what) -> InvalidParameterError:
            return InvalidParameterError(what)
        def malformed(what):  # a subclass: not this count's error
            return MalformedDocumentError(what)
    """,
    "p": "from .messages import refused",  # a re-export
    "p.a.user": """
        from .. import refused
        from ..messages import malformed
        from ..errors import InvalidParameterError as Bad
        class Parser:
            def _refused(self, why):
                return Bad(why)
            def parse(self, x):
                if x == 1:
                    raise refused("one")  # through a builder, re-exported by the package
                elif x == 2:
                    raise self._refused("two")  # through a method of the module
                elif x == 3:
                    raise Bad("three")  # by hand, under another name
                elif x == 4:
                    raise malformed("four")
                raise Bad  # by hand, without a message
    """,
}


def test_a_refusal_is_counted_however_it_is_built():
    trees = {module: (ast.parse(textwrap.dedent(text)), module == "p") for module, text in _PACKAGE.items()}
    by_hand, through_builders = refusals(trees)
    assert by_hand == Counter({"p.a.user": 2}) and through_builders == Counter({"p.a.user": 2})
