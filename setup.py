"""The wheel's layout beyond pyproject.toml: the shipped folders mapped into the package.

The repository keeps its catalogue (``sequences/``), predicates (``predicates/``) and golden files
(``expected/``) at the top level; the wheel carries them as ``bench/_shipped/<kind>/``, where
:mod:`bench.catalogue.shipped` finds them. Every folder of data is listed as a package of its own
(setuptools treats any folder as one), so the package list is computed here: pyproject.toml cannot
list found packages and mapped ones together. Development tools (``devtools/``) and tests stay out
of the wheel.
"""

from pathlib import Path

from setuptools import find_packages, setup

SHIPPED = {"sequences": ["*.yaml", "*.yml", "*.md"], "predicates": ["*.py"], "expected": ["*.yaml"]}
"""The shipped top-level folders and the files of each that the wheel carries."""


def data_packages(kind: str) -> dict[str, str]:
    """``bench._shipped.<kind>[.<sub-folder>...]`` -> its folder in the repository."""
    root = Path(kind)
    folders = [root, *sorted(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    return {".".join(("bench._shipped", *p.parts)): p.as_posix() for p in folders}


mapped = {name: folder for kind in SHIPPED for name, folder in data_packages(kind).items()}
setup(
    packages=[*find_packages(include=["bench", "bench.*"]), "bench.report.page.assets", *mapped],
    package_dir=mapped,
    package_data={
        "bench": ["py.typed"],
        "bench.report.page.assets": ["*"],
        "bench.init_templates": ["*.txt", "*.yaml", "*.yml"],
        **{name: SHIPPED[name.split(".")[2]] for name in mapped},
    },
)
