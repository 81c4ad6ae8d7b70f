"""Whoosh below its public API is known in one package only, pubsearch.codec: its ``w3``
modules read Whoosh 3 segments (w3format, w3terms, w3positions, w3columns) and write them
(w3write).

Every other module of src/pubsearch goes through them for Whoosh's private attributes,
private names and byte-layout modules, which a new Whoosh release may change: these
tests read the source (with ``ast``, not by running it) and fail on any such use
elsewhere.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import whoosh

SRC = Path(__file__).resolve().parent.parent / "src" / "pubsearch"
FORMAT_MODULES = frozenset(
    f"codec/{name}.py" for name in ("w3format", "w3terms", "w3positions", "w3columns", "w3write")
)
# Whoosh's modules of on-disk layout: codecs, hash tables and files, struct sizes, length
# bytes; and the matcher wrappers that hide a segment's deletions. (``whoosh.columns`` is
# the schema's public API for a field's column type; reading a column's internals is
# caught as private attributes.)
LOW_LEVEL_MODULES = (
    "whoosh.codec",
    "whoosh.filedb.filetables",
    "whoosh.filedb.structfile",
    "whoosh.system",
    "whoosh.util.numeric",
    "whoosh.matching.wrappers",
)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


@cache
def whoosh_private_names() -> frozenset[str]:
    """Every private name the installed Whoosh defines: attributes it sets on ``self``,
    methods, functions, classes, module and class constants, and parameters (``_lk``)."""
    names: set[str] = set()
    for path in Path(whoosh.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                names.update(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return frozenset(n for n in names if _is_private(n))


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        yield name, ast.parse(path.read_text(encoding="utf-8"))


def _whoosh_imported(tree: ast.Module) -> set[str]:
    """The names a module binds to Whoosh's modules and objects, and to the format
    modules' (a class derived from one of them is Whoosh's underneath)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(("whoosh", "pubsearch.codec", "pubsearch.index.segments")):
                bound.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            whoosh_names = [a for a in node.names if a.name.startswith("whoosh")]
            bound.update((a.asname or a.name).split(".")[0] for a in whoosh_names)
    return bound


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _own_private_names(tree: ast.Module, whoosh_bound: set[str]) -> set[str]:
    """The private attributes and methods the module's own classes (not built on Whoosh's)
    define: ``obj._x`` of one of them is the module's own business (``Vocabulary._ids``
    in analysis.py, whose name Whoosh uses too)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or {_root(b) for b in node.bases} & whoosh_bound:
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.FunctionDef) and _is_private(inner.name):
                own.add(inner.name)
            elif (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.ctx, ast.Store)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == "self"
            ):
                own.add(inner.attr)
            elif isinstance(inner, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in inner.targets
            ):
                own.update(
                    e.value
                    for e in ast.walk(inner.value)
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
    return {n for n in own if _is_private(n)}


def private_uses(tree: ast.Module, private: frozenset[str]) -> list[tuple[int, str]]:
    """Where ``tree`` uses Whoosh below its public API: ``(line, what)``."""
    found: list[tuple[int, str]] = []
    whoosh_bound = _whoosh_imported(tree)
    private = private - _own_private_names(tree, whoosh_bound)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("whoosh"):
            if node.module.startswith(LOW_LEVEL_MODULES):
                found.append((node.lineno, f"from {node.module} import"))
            found += [
                (node.lineno, f"from {node.module} import {a.name}")
                for a in node.names
                if _is_private(a.name)
            ]
            found += [
                (node.lineno, f"from {node.module} import {a.name}")
                for a in node.names
                if f"{node.module}.{a.name}".startswith(LOW_LEVEL_MODULES)
            ]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, f"import {a.name}")
                for a in node.names
                if a.name.startswith(LOW_LEVEL_MODULES)
            ]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            # self._x of a class of pubsearch's own is pubsearch's (checked below for
            # classes built on Whoosh's).
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, f"._{node.attr.lstrip('_')}"))
        elif isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Name)
                and func.id in ("getattr", "setattr", "hasattr", "delattr")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in private
            ):
                found.append((node.lineno, f"{func.id}(..., {node.args[1].value!r})"))
            found += [(node.lineno, f"{k.arg}=") for k in node.keywords if k.arg in private]
        elif isinstance(node, ast.ClassDef):
            bases = {_root(b) for b in node.bases}
            if bases & whoosh_bound:
                # A subclass of Whoosh's: its own self._x may be Whoosh's.
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.Attribute)
                        and isinstance(inner.value, ast.Name)
                        and inner.value.id == "self"
                        and inner.attr in private
                    ):
                        found.append((inner.lineno, f"self.{inner.attr} in {node.name}"))
    return sorted(set(found))


def test_whoosh_private_names_are_known() -> None:
    """The names the tests below look for are there to find."""
    private = whoosh_private_names()
    assert {"_perdoc", "_finalize_segment", "_commit_toc", "_create_column", "_lk"} <= private
    assert {"_tindex", "_postfile", "_btexts", "_field_B", "_INT_SIZE"} <= private


def test_only_the_format_modules_use_whoosh_below_its_api() -> None:
    private = whoosh_private_names()
    offenders = {
        name: uses
        for name, tree in _modules()
        if name not in FORMAT_MODULES and (uses := private_uses(tree, private))
    }
    assert offenders == {}


def test_the_format_modules_are_where_they_are_said_to_be() -> None:
    """The check above is not vacuous: the format modules do use Whoosh's internals."""
    private = whoosh_private_names()
    trees = dict(_modules())
    for name in FORMAT_MODULES:
        assert private_uses(trees[name], private), name


def test_a_private_use_added_anywhere_else_is_found() -> None:
    private = whoosh_private_names()
    for code in (
        "def f(segment):\n    return segment._perdoc\n",
        "def f(writer):\n    writer._commit_toc([])\n",
        "class Own:\n    __slots__ = ('_mine',)\n\ndef f(creader):\n    return creader._count\n",
        "from whoosh.system import _INT_SIZE\n",
        "from whoosh.codec.whoosh3 import LENGTHS_COLUMN\n",
        "from whoosh.codec import whoosh3\n",
        "import whoosh.filedb.filetables\n",
        "def f(x):\n    return getattr(x, '_tindex', None)\n",
        "def f(ix):\n    return SegmentWriter(ix, _lk=False)\n",
        "from whoosh.writing import SegmentWriter\n"
        "class W(SegmentWriter):\n    def go(self):\n        self._check_state()\n",
    ):
        assert private_uses(ast.parse(code), private), code
    for code in (
        "def f(self):\n    return self._mine\n",
        "from whoosh import columns\n",
        "class Own:\n    __slots__ = ('_count',)\n\ndef f(own):\n    return own._count\n",
        "from whoosh import query\n",
        "def f(q):\n    return q.fieldname\n",
    ):
        assert not private_uses(ast.parse(code), private), code


# -- the floor plan: no cycles, no long modules ------------------------------------------

MAX_LINES = 800


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_of(name: str, path: Path, tree: ast.Module, modules: Iterable[str]) -> set[str]:
    """The pubsearch modules ``tree`` imports anywhere (at the top, in functions, under
    TYPE_CHECKING): ``from a import b`` counts as ``a.b`` where that is a module, else as
    ``a``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pubsearch"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            if base.startswith("pubsearch"):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in modules else base)
    return found


def _import_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        imported = _imports_of(name, path, ast.parse(path.read_text(encoding="utf-8")), paths)
        graph[name] = {m for m in imported if m in paths and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back() -> None:
    """No import cycle among pubsearch's modules, counting imports made inside functions
    (a cycle hidden in a function is still two modules that need each other)."""
    assert _cycles(_import_graph()) == []


def test_a_cycle_would_be_found() -> None:
    graph = _import_graph()
    graph["pubsearch.core.config"] = graph["pubsearch.core.config"] | {"pubsearch.cli.main"}
    assert any("pubsearch.core.config" in c and "pubsearch.cli.main" in c for c in _cycles(graph))


def test_no_source_file_is_over_800_lines() -> None:
    long = {
        path.relative_to(SRC).as_posix(): lines
        for path in [*SRC.rglob("*.py"), *SRC.rglob("*.c"), *SRC.rglob("*.h")]
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


# Whoosh's own ways of running a query: its matchers (document by document) and collectors.
WHOOSH_EXECUTORS = {
    "docs_for_query",
    "search_page",
    "search_with_collector",
    "matcher",
    "collector",
}


def whoosh_executions(tree: ast.Module) -> list[tuple[int, str]]:
    """Calls in ``tree`` that would have Whoosh run a query: ``x.docs_for_query(...)``,
    ``x.matcher(...)``, ..., and ``searcher.search(...)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, receiver = node.func.attr, _root(node.func.value) or ""
            if attr in WHOOSH_EXECUTORS or (attr == "search" and "searcher" in receiver):
                found.append((node.lineno, attr))
    return found


def test_searching_never_hands_a_query_to_whoosh() -> None:
    """A search runs as pubsearch's executor runs it (masks, topdocs: posting lists read
    segment by segment through the codec), never through Whoosh's matchers or collectors."""
    searching = [(name, tree) for name, tree in _modules() if name.startswith("search/")]
    assert len(searching) > 20  # (the package is where it is said to be)
    offenders = {name: calls for name, tree in searching if (calls := whoosh_executions(tree))}
    assert offenders == {}


def test_handing_a_query_to_whoosh_would_be_found() -> None:
    for code in (
        "def f(searcher, q):\n    return searcher.search(q, limit=10)\n",
        "def f(s, q):\n    return list(s.docs_for_query(q))\n",
        "def f(q, searcher):\n    return q.matcher(searcher)\n",
    ):
        assert whoosh_executions(ast.parse(code)), code
