"""stopbench's pytest plugin (entry point ``pytest11``): test your own loop against served sequences.

Fixtures:

* ``stopbench_sequence``: the :class:`bench.Sequence` of the test. Parametrize it with the
  ``stopbench_catalogue`` marker (every catalogue sequence, or those with a tag, a dialect or an
  id), or indirectly with ids, paths or Sequence objects::

      @pytest.mark.stopbench_catalogue(tags=["truncation"])  # also dialects=[...], ids=[...]
      def test_my_loop(stopbench_live): ...

      @pytest.mark.parametrize("stopbench_sequence", ["chat-tool-rounds", my_sequence], indirect=True)
      def test_my_loop_on_two(stopbench_live): ...

* ``stopbench_live``: that sequence served on a loopback port for the test
  (:class:`bench.check.served.Served`): ``openai_base_url``, ``anthropic_base_url``, ``api_key``,
  ``model``, ``prompt``, ``tools`` (JSON schemas), ``steers``; after the loop ran,
  ``cell(ok, reason)`` (the observed, judged cell), ``violations(ok, reason)`` and
  ``assert_meets_requirements(ok, reason)``.
* ``stopbench_serve``: a factory, ``stopbench_serve(id | path | Sequence)``, for more than one
  sequence in a test.

The catalogue is the shipped one with the project's own ``sequences/`` (beside the rootdir) added,
as the ``stopbench`` commands read it (:mod:`bench.catalogue.shipped`: a sequence of yours replaces
a shipped one with the same id); the ini option ``stopbench_sequences`` (a folder, relative to the
rootdir) reads that folder alone. :func:`assert_meets_requirements` fails with the first broken requirement, its step,
the turn served there and what the loop did.

Everything heavy (the server, the catalogue) is imported only when a test asks for it, so the plugin
costs nothing in a session that does not use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from bench.catalogue.load import Catalogue
    from bench.check import Served
    from bench.engine.model import Cell, Sequence

INI = "stopbench_sequences"
MARKER = "stopbench_catalogue"

__all__ = ["assert_meets_requirements"]


def assert_meets_requirements(sequence: Sequence, cell: Cell) -> None:
    """AssertionError with the first broken requirement, its step, the turn served and what the loop did."""
    __tracebackhide__ = True
    from bench.check import assert_meets_requirements as check
    check(sequence, cell)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI, "stopbench: the catalogue folder the stopbench fixtures read alone (relative to the "
                       "rootdir); default: the shipped catalogue with the rootdir's sequences/ added", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(tags=(), dialects=(), ids=()): run the test once per catalogue "
                                       "sequence matching all the given filters (stopbench_sequence)")


def catalogue_folders(config: pytest.Config) -> list[Path]:
    """The catalogue folders: the ini option's alone (relative to the rootdir), else the shipped
    catalogue with the rootdir's ``sequences/`` added when it has one."""
    from bench.catalogue.shipped import layered

    value = str(config.getini(INI))
    if not value:
        return layered("sequences", config.rootpath / "sequences", only_mine=False)
    path = Path(value)
    return [path if path.is_absolute() else config.rootpath / path]


def catalogue_folder(config: pytest.Config) -> str:
    """The catalogue folders as messages name them."""
    return " + ".join(str(p) for p in catalogue_folders(config))


def _catalogue(config: pytest.Config) -> Catalogue:
    cached: Catalogue | None = getattr(config, "_stopbench_catalogue", None)
    if cached is None:
        from bench.catalogue.shipped import load_layered_catalogue
        folders = catalogue_folders(config)
        for folder in folders:
            if not folder.is_dir():
                pytest.fail(f"{INI} = {folder}: no such folder", pytrace=False)
        cached, notes = load_layered_catalogue(folders)
        for note in notes:
            config.issue_config_time_warning(pytest.PytestConfigWarning(f"stopbench: {note}"), stacklevel=2)
        if cached.problems:
            pytest.fail(f"bad sequence: {cached.problems[0]}", pytrace=False)
        config._stopbench_catalogue = cached  # type: ignore[attr-defined]
    return cached


def _as_tuple(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value or ())


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or "stopbench_sequence" not in metafunc.fixturenames:
        return
    if marker.args:
        pytest.fail(f"{MARKER} takes keywords only: tags=, dialects=, ids=", pytrace=False)
    from bench.check import CheckOptions

    tags, dialects, ids = (_as_tuple(marker.kwargs.get(k)) for k in ("tags", "dialects", "ids"))
    options = CheckOptions(ids=ids, tags=tags, dialects=dialects)  # check's -s, --tag and --dialect
    cat = _catalogue(metafunc.config)
    unknown = options.unknown_ids(cat.sequences)
    if unknown:
        pytest.fail(f"{MARKER}: no sequence {', '.join(unknown)} in {catalogue_folder(metafunc.config)}",
                    pytrace=False)
    chosen = options.select(cat.sequences)
    metafunc.parametrize("stopbench_sequence", chosen, indirect=True, ids=[s.id for s in chosen])


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A sequence parameter's test id: its id, or a sequence file's stem."""
    if argname != "stopbench_sequence":
        return None
    from bench.engine.model import Sequence
    if isinstance(val, Sequence):
        return val.id
    if isinstance(val, Path) or (isinstance(val, str) and val.endswith((".yaml", ".yml"))):
        return Path(val).stem
    return None


def resolve(config: pytest.Config, what: Any) -> Sequence:
    """A Sequence from a Sequence, a path to a sequence file, or a catalogue id."""
    from bench.catalogue.load import load_sequence
    from bench.engine.model import Sequence

    if isinstance(what, Sequence):
        return what
    if isinstance(what, Path) or (isinstance(what, str) and what.endswith((".yaml", ".yml"))):
        return load_sequence(Path(what))
    if isinstance(what, str):
        found = _catalogue(config).by_id(what)
        if found is None:
            pytest.fail(f"no sequence {what!r} in {catalogue_folder(config)}", pytrace=False)
        return found
    raise TypeError(f"stopbench_sequence: expected an id, a path or a Sequence, got {type(what).__name__}")


@pytest.fixture
def stopbench_sequence(request: pytest.FixtureRequest) -> Sequence:
    """The sequence of this test (parametrized by the marker, or indirectly)."""
    if not hasattr(request, "param"):
        pytest.fail(f"{request.node.nodeid}: mark the test with @pytest.mark.{MARKER}(...) or parametrize "
                    "stopbench_sequence indirectly", pytrace=False)
    return resolve(request.config, request.param)


@pytest.fixture
def stopbench_serve(request: pytest.FixtureRequest) -> Iterator[Callable[..., Served]]:
    """``stopbench_serve(id | path | Sequence, name="loop@live")``: serve it for the rest of the test."""
    from bench.check import served

    with ExitStack() as stack:
        def serve(what: Any, name: str = "loop@live") -> Served:
            return stack.enter_context(served(resolve(request.config, what), name))
        yield serve


@pytest.fixture
def stopbench_live(stopbench_sequence: Sequence, stopbench_serve: Callable[..., Served]) -> Served:
    """`stopbench_sequence` served for this test.

    A sequence that scripts its tool results (`result:` on a call, e.g. polling that stalls or moves)
    is skipped, saying so: a live loop's tools are its own, so their results are not the ones the
    sequence's requirements assume, and the server cannot make them so."""
    from bench.check import CheckOptions

    if not CheckOptions().runs_live(stopbench_sequence):  # as stopbench check leaves it out
        pytest.skip(f"{stopbench_sequence.id} scripts its tool results (result:), which a live loop's own "
                    "tools do not return")
    return stopbench_serve(stopbench_sequence)

