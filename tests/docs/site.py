"""The docs site's build hook, loaded from its file: the tests read a page as `mkdocs build` shows it
(markers filled in from the code and the reports, links rebased) without needing mkdocs."""

from __future__ import annotations

import importlib.util
from functools import cache
from types import ModuleType

from tests.helpers import ROOT

HOOK = ROOT / "docs" / "_hooks" / "site.py"


@cache
def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stopbench_docs_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_page(src_uri: str) -> str:
    """The Markdown of docs/`src_uri` as the site shows it."""
    text: str = hook().expand_page(src_uri)
    return text
