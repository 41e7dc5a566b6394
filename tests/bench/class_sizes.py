"""Lines, methods and attributes of classes, read with ``ast`` from this checkout or from any git revision.

    .venv/bin/python tests/bench/class_sizes.py [--rev REV] FILE:CLASS ...

Per file, a row for the whole module (``lines``: the file's; ``methods``: every function defined in it,
module functions, nested ones and ``@overload`` stubs included), then a row per class: ``lines``: the class
statement's span (decorators aside); ``methods``: the functions defined in its body (properties included);
``attributes``: the distinct names assigned as ``self.<name>`` anywhere in it, and the annotated names of
its body (a dataclass's fields). FILE alone counts every class it defines, FILE:CLASS that class.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path


def source(path: str, rev: str | None) -> str:
    if rev is None:
        return Path(path).read_text()
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout


def attributes(cls: ast.ClassDef) -> set[str]:
    names = {
        node.target.id
        for node in cls.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in ast.walk(target)]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        names |= {
            t.attr
            for t in targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
        }
    return names


def sizes(text: str, wanted: str | None) -> list[tuple[str, int, int, int | str]]:
    tree = ast.parse(text)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    rows: list[tuple[str, int, int, int | str]] = [("(module)", len(text.splitlines()), len(functions), "")]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and wanted in (None, node.name):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            rows.append((node.name, lines, len(methods), len(attributes(node))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", help="a git revision (default: the files as they are)")
    parser.add_argument("targets", nargs="+", metavar="FILE[:CLASS]")
    args = parser.parse_args()
    print(f"{'file':34} {'class':22} {'lines':>5} {'methods':>7} {'attributes':>10}")
    for target in args.targets:
        path, _, wanted = target.partition(":")
        for name, lines, methods, attrs in sizes(source(path, args.rev), wanted or None):
            print(f"{path:34} {name:22} {lines:5} {methods:7} {attrs:10}")


if __name__ == "__main__":
    main()
