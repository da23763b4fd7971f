"""No two of the project's modules import each other (DESIGN: dependencies point one way).

Every import counts, function-local ones included, except those under ``if TYPE_CHECKING:``
(they never run). A package's ``__init__`` counts as the package itself; ``from pkg import name``
imports ``pkg.name`` when that is a module, else ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cloudsim", "agents", "traces")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports_of(name: str) -> set[str]:
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            for child in node.orelse:  # the else branch runs
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return {m for m in found if m in MODULES and m != name}


def test_no_two_modules_import_each_other():
    graph = {name: imports_of(name) for name in MODULES}
    pairs = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets if a in graph[b]})
    assert not pairs, "modules that import each other (move the shared piece where it belongs): " + ", ".join(
        f"{a} <-> {b}" for a, b in pairs)


def test_the_check_reads_imports_inside_functions_and_skips_type_checking_ones():
    # compare hands --env deeprm to compare_deeprm from inside compare(); deeprm_plus names
    # DeepRMConfig for its annotations only, under TYPE_CHECKING.
    assert "cloudsim.run.compare_deeprm" in imports_of("cloudsim.run.compare")
    assert "agents.deeprm.config" not in imports_of("agents.deeprm.plus")
    assert "agents.deeprm.plus" in imports_of("agents.deeprm.agent")  # make_net, inside a function


def test_start_up_imports_no_table_library_or_learning_framework():
    """`import cloudsim` and `cloudsim --help` load what they need, not pandas, torch or numba: a command
    imports those when it first needs them (about 0.2 s of pandas alone; docs/scale.md)."""
    import subprocess
    import sys

    heavy = ("pandas", "torch", "numba")
    for code in ("import cloudsim", "import sys; sys.argv = ['cloudsim', '--help']\n"
                                    "from cloudsim.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"):
        probe = f"{code}\nimport sys\nprint('loaded:', *(m for m in {heavy!r} if m in sys.modules))"
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "loaded:", f"{code!r}: {done.stdout.splitlines()[-1]}"
