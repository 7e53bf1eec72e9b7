"""The package's import graph has no circle, counting imports inside functions too (imports
under ``if TYPE_CHECKING:`` aside): each concept can be read without the ones that use it."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "bodi").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path], *, typing: bool = False
             ) -> set[str]:
    """The bodi modules that ``name`` imports (``typing``: those under ``if TYPE_CHECKING:``
    too)."""
    tree = ast.parse(path.read_text())
    typing_only = set() if typing else {
        id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
        and "TYPE_CHECKING" in ast.unparse(block.test) for node in ast.walk(block)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + (
                [node.module] if node.module else [])) if node.level else node.module or ""
            candidates = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found |= {c for c in candidates if c in modules and c != name}
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` (as the modules along it), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_circle_in_bodi():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph["bodi.study"] >= {"bodi.storage", "bodi.trials"}  # the parser sees imports
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_check_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


#: the package's layers, lowest first: a module imports only from its own layer or lower ones
#: (a prefix names a module or a package; the longest matching prefix places a module)
LAYERS = [
    ["bodi.device", "bodi.checks", "bodi.seeding", "bodi.directions", "bodi.diagnostics",
     "bodi.extras", "bodi.escaping", "bodi.version", "bodi.parameters"],
    ["bodi.constraints", "bodi.space", "bodi.novelty", "bodi.neighbours", "bodi.initial_design",
     "bodi.pareto", "bodi.hed", "bodi.integrations.spaces"],
    ["bodi.models", "bodi.acquisition"],
    ["bodi.trials", "bodi.storage", "bodi.stored_studies", "bodi.workers", "bodi.objective",
     "bodi.progress"],
    ["bodi.optimizers", "bodi.baselines", "bodi.study", "bodi.export"],
    ["bodi.executors", "bodi.optimize", "bodi.loading", "bodi.problems", "bodi.integrations",
     "bodi.experiments", "bodi.plots"],
    ["bodi.cli", "bodi.__main__", "bodi"],
]


def _layer(module: str) -> int | None:
    matches = [(len(prefix), i) for i, layer in enumerate(LAYERS) for prefix in layer
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1] if matches else None


def test_no_lower_layer_imports_a_higher_one():
    modules = _modules()
    assert all(_layer(name) is not None for name in modules), [
        name for name in modules if _layer(name) is None]
    upward = [f"{name} -> {dep}" for name, path in sorted(modules.items())
              for dep in sorted(_imports(name, path, modules)) if _layer(dep) > _layer(name)]
    assert not upward, upward
    # the acquisition search knows kernels only through a protocol (bodi.neighbours)
    acquisition = {dep for name, path in modules.items() if name.startswith("bodi.acquisition")
                   for dep in _imports(name, path, modules)}
    assert not {dep for dep in acquisition if dep.startswith(("bodi.hed", "bodi.models"))}


def test_the_algorithms_know_no_study():
    """The algorithms (optimizers/, baselines/) read trials from the history they are given:
    none of their modules imports bodi.storage or bodi.study, not even for type hints."""
    modules = _modules()
    opening = sorted(name for name, path in modules.items()
                     if name.startswith(("bodi.optimizers", "bodi.baselines"))
                     and any(dep.startswith(("bodi.storage", "bodi.study"))
                             for dep in _imports(name, path, modules, typing=True)))
    assert opening == []
