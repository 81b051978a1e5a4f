"""Options shared by the subcommands (declared once, here), and loading what they point at.

Each option is a decorator; :func:`folder_options` is the set that ``run``, ``show`` and ``accept``
take. :func:`decision_timeout_option` adds ``--decision-timeout`` and runs the command
under that per-decision time limit (:mod:`bench.engine.contain`); the user's Ctrl-C, or SIGTERM (what
CI sends on a timeout), ends it with one line and exit 2, like pytest's "interrupted".

Folders: ``--sequences``, ``--predicates`` and ``--expected`` left at their defaults stand for the
shipped catalogue, predicates and golden files with the user's own ``./sequences``, ``./predicates``
and ``./expected`` added (theirs replace a shipped one with the same id, said in one line);
``--only-mine`` reads only theirs (:mod:`bench.catalogue.shipped`). A folder given explicitly is
read alone. Whatever is written (``accept``'s golden files, ``fuzz --save``) goes to the user's own
folder, never the shipped one.

Exit statuses (the README's table): 0 clean; 1 a verdict failed; 2 unusable input (or an
interrupted run). Nothing else, and no traceback.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from bench.catalogue.load import Catalogue
from bench.catalogue.shipped import Kind, collision_line, layered, load_layered_catalogue, replaced_files
from bench.check.processes import Terminated, sigterm_as_interrupt
from bench.cli._streams import to_devnull, write_failed
from bench.engine.contain import DEFAULT_DECISION_TIMEOUT, decision_time_limit
from bench.engine.discovery import SHARED_PREFIX, Broken, Loaded, discover, load_file
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.errors import UnusableInput
from bench.golden.expected import Golden, load_golden

if TYPE_CHECKING:
    from bench.faults import Recipe

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = EXIT_BAD_INPUT
"""Ctrl-C: the run gave no verdict (pytest says 2 for "interrupted" too)."""


def _path_option(flag: str, dest: str, default: str, help_text: str) -> Callable[[F], F]:
    return click.option(flag, dest, type=click.Path(path_type=Path), default=Path(default), show_default=True,
                        help=help_text)


def not_empty_path(_ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """A path option's value as a Path, refusing the empty string (exit 2): ``Path('')`` is the working
    folder, which the user did not name (an unset shell variable, most often)."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty path names no file or folder", param=param)
    return Path(value)


sequences_option = _path_option("--sequences", "sequences_dir", "sequences",
                                "Folder of sequence YAML files (sub-folders included).")
predicates_option = _path_option("--predicates", "predicates_dir", "predicates",
                                 "Folder of predicate files, one column per file.")
expected_option = _path_option("--expected", "expected_dir", "expected",
                               "Folder of golden files, expected/<predicate>.yaml.")
junit_option = click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                              metavar="PATH", help="Also write the cells as JUnit XML to PATH (one testcase per "
                                                   "cell), for CI systems that show test results.")
reports_option = _path_option("--reports", "reports_dir", "reports", "Folder the reports are written to.")
safety_cap_option = click.option("--safety-cap", type=click.IntRange(min=1), default=DEFAULT_SAFETY_CAP,
                                 show_default=True,
                                 help="Requests after which the bench ends a replay as 'capped'.")


def jobs_option(help_text: str | None = None, default: int = 1) -> Callable[[F], F]:
    """``-j/--jobs``: how many runs go side by side (at least 1); `help_text` says what one run is."""
    return click.option("-j", "--jobs", type=click.IntRange(min=1), default=default, show_default=True,
                        help=help_text)


no_entry_points_option = click.option("--no-entry-points", is_flag=True,
                                      help="Only the predicates folder, not predicates from installed packages.")
only_predicates_option = click.option("--predicate", "-p", "only", multiple=True,
                                      help="Only this predicate (repeatable).")
quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="Only the verdict line and what made it fail; no progress bar.")
ONLY_MINE_ENV = "STOPBENCH_ONLY_MINE"


def _keep_only_mine(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta["stopbench.only_mine"] = value
    return value


only_mine_option = click.option("--only-mine", is_flag=True, envvar=ONLY_MINE_ENV, expose_value=False,
                                callback=_keep_only_mine, is_eager=True,
                                help="Only your own ./sequences, ./predicates and ./expected, not the shipped "
                                     f"ones they add to by default (also {ONLY_MINE_ENV}=1).")
verbose_option = click.option("--verbose", "-v", is_flag=True,
                              help="Every problem, every violation and every unused expectation, not the first few.")


def _finite(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    """A time limit is a number of seconds: nan (which every comparison lets through, turning the
    limit off) and inf are refused like a negative one."""
    if not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number of seconds (0 turns the limit off)")
    return value


def decision_timeout_option(fn: F) -> F:
    """``--decision-timeout SECONDS``, consumed here: the command runs under that per-decision time
    limit (also applied to importing each predicate file), and Ctrl-C or SIGTERM ends it with one line."""
    @functools.wraps(fn)
    def contained(*args: Any, decision_timeout: float, **kwargs: Any) -> Any:
        try:  # SIGTERM (CI's timeout) as Ctrl-C: what was being written is left whole (bench.catalogue.files)
            with sigterm_as_interrupt(), decision_time_limit(decision_timeout or None):
                return fn(*args, **kwargs)
        except KeyboardInterrupt as exc:
            how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            click.echo(f"interrupted ({how}): stopped before a verdict", err=True)
            sys.exit(EXIT_INTERRUPTED)

    option = click.option("--decision-timeout", type=click.FloatRange(min=0), default=DEFAULT_DECISION_TIMEOUT,
                          callback=_finite, show_default=True, metavar="SECONDS",
                          help="A decision (or a predicate file's import) that takes longer crashes its cell; "
                               "0 turns the limit off.")
    return option(contained)  # type: ignore[return-value]


def folder_options(fn: F) -> F:
    """--sequences, --predicates, --expected, --safety-cap, --no-entry-points and --decision-timeout
    (which runs the command under the time limit): what run, show and accept take (run adds --reports)."""
    for opt in (only_mine_option, decision_timeout_option, no_entry_points_option, safety_cap_option, expected_option,
                predicates_option, sequences_option):
        fn = opt(fn)
    return fn


@dataclass(slots=True)
class Inputs:
    catalogue: Catalogue
    predicates: list[Loaded]


def given(param: str) -> bool:
    """Whether the user gave option `param` (by its destination name) rather than its default."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    return ctx.get_parameter_source(param) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


def _flag(param: str) -> str:
    return {"sequences_dir": "--sequences", "predicates_dir": "--predicates", "expected_dir": "--expected"}[param]


def check_folder(path: Path, param: str, what: str) -> bool:
    """Refuse a folder option that names nothing or a file (one line, exit 2); return whether the
    folder exists. A default folder that is missing is only refused for sequences."""
    if path.is_dir():
        return True
    if path.exists():
        raise UnusableInput(f"{_flag(param)} {path}: not a folder")
    if given(param):
        raise UnusableInput(f"{_flag(param)} {path}: no such folder")
    if param == "sequences_dir":
        raise UnusableInput(f"no {what} folder at {path}/ (run stopbench in a project folder, or give {_flag(param)})")
    return False


def folders(kind: Kind, path: Path, param: str) -> list[Path]:
    """The folders option `param` (value `path`) stands for: itself when given, else the shipped
    folder with the user's own added (:func:`bench.catalogue.shipped.layered`)."""
    if given(param):
        return [path]
    ctx = click.get_current_context(silent=True)
    only_mine = bool(ctx.meta.get("stopbench.only_mine")) if ctx is not None else False
    return layered(kind, path, only_mine=only_mine)


def load_sequences(sequences_dir: Path) -> Catalogue:
    """The catalogue `--sequences` stands for (:func:`folders`), with the collision line if any;
    a missing folder of the user's own is refused as :func:`check_folder` says."""
    chosen = folders("sequences", sequences_dir, "sequences_dir")
    if chosen == [sequences_dir]:
        check_folder(sequences_dir, "sequences_dir", "sequences")
    cat, notes = load_layered_catalogue(chosen)
    for note in notes:
        click.echo(note, err=True)
    return cat


def predicate_folders(predicates_dir: Path) -> list[Path]:
    """The predicate folders `--predicates` stands for, with the collision line if any; [] when
    the user's own folder is missing (a note; an explicit one is refused by :func:`check_folder`)."""
    chosen = folders("predicates", predicates_dir, "predicates_dir")
    if chosen == [predicates_dir] and not check_folder(predicates_dir, "predicates_dir", "predicates"):
        click.echo(f"note: no predicates folder at {predicates_dir}", err=True)
        return []
    for folder, stems in replaced_files(chosen, "*.py").items():
        line = collision_line("predicate(s)", [s for s in stems if not s.startswith("_")], folder)
        if line:
            click.echo(line, err=True)
    return chosen


def discover_in(folders: list[Path], *, entry_points_too: bool) -> list[Loaded]:
    """:func:`bench.engine.discovery.discover` over several folders (the shipped predicates, then the
    user's own): a later folder's file replaces an earlier one's of the same name, which is then not
    imported at all; sorted by name."""
    if len(folders) < 2:
        return discover(folders[0] if folders else None, entry_points_too=entry_points_too)
    files = {path.stem: path for folder in folders for path in sorted(folder.glob("*.py"))
             if not path.name.startswith(SHARED_PREFIX)}
    found = {name: load_file(path) for name, path in sorted(files.items())}
    dupes: list[Loaded] = []
    for p in discover(None, entry_points_too=entry_points_too):  # installed packages': a folder's name wins
        if p.name in found:
            dupes.append(Broken(f"{p.name}@{p.origin}", p.origin, f"name {p.name!r} is already taken by "
                                                                   f"{found[p.name].origin}"))
        else:
            found[p.name] = p
    return [found[k] for k in sorted(found)] + dupes


def load_inputs(sequences_dir: Path, predicates_dir: Path, no_entry_points: bool,
                only: tuple[str, ...] = ()) -> Inputs:
    """Load the catalogue and predicates, printing every problem as one line on stderr.

    A folder given explicitly that is missing, not a folder or empty, a missing sequences folder,
    and a run with no sequence or no predicate at all are unusable input (exit 2), so that such a
    run never replaces the reports with an empty table."""
    cat = load_sequences(sequences_dir)
    for problem in cat.problems:
        click.echo(f"bad sequence: {problem}", err=True)
    if not cat.sequences and not cat.problems:
        raise UnusableInput(f"{sequences_dir}: holds no sequence file (*.yaml)")
    folders = predicate_folders(predicates_dir)
    if given("predicates_dir") and not any(not p.name.startswith("_") for p in predicates_dir.glob("*.py")):
        raise UnusableInput(f"--predicates {predicates_dir}: holds no predicate file (*.py)")
    preds = discover_in(folders, entry_points_too=not no_entry_points)
    if not preds:
        raise UnusableInput(f"no predicates: none in {predicates_dir} and none installed")
    preds = named(preds, only)
    for p in preds:
        if isinstance(p, Broken):
            click.echo(f"broken predicate: {p.origin}: {p.error} (its cells are marked crashed)", err=True)
    return Inputs(cat, preds)


def named(preds: list[Loaded], only: tuple[str, ...]) -> list[Loaded]:
    """The predicates named in `only` (``--predicate``), all of them when it is empty; a name that is
    not among them is a usage error (exit 2) that lists the names there are."""
    if not only:
        return preds
    names = {p.name for p in preds}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise click.UsageError(f"no predicate named {', '.join(unknown)}; have {', '.join(sorted(names))}")
    return [p for p in preds if p.name in only]


def load_expected(expected_dir: Path, *, for_writing: bool = False) -> Golden:
    """The golden files, or one line per unusable file and exit 2 (nothing is replayed then).

    An explicit ``--expected`` must be a folder holding golden files (for ``accept`` it may be
    missing or empty: accept creates it). A missing default folder leaves every cell unreviewed,
    said in one line. Left at its default (and not for writing), it stands for the shipped golden
    files with the user's own added, a file of theirs replacing the shipped one of its predicate."""
    chosen = folders("expected", expected_dir, "expected_dir")
    if not for_writing and chosen != [expected_dir]:
        return _load_layered_expected(chosen)
    exists = check_folder(expected_dir, "expected_dir", "expected") if not for_writing else expected_dir.is_dir()
    if for_writing and expected_dir.exists() and not exists:
        raise UnusableInput(f"--expected {expected_dir}: not a folder")
    golden = load_golden(expected_dir)
    for problem in golden.problems:
        click.echo(f"bad golden file: {problem}", err=True)
    if golden.problems:
        raise UnusableInput(f"{len(golden.problems)} golden file(s) unusable in {expected_dir}; nothing replayed")
    if not for_writing:
        if not exists:
            click.echo(f"note: no golden files folder at {expected_dir}: every cell is unreviewed", err=True)
        elif not golden.files and given("expected_dir"):
            raise UnusableInput(f"--expected {expected_dir}: holds no golden file (<predicate>.yaml)")
    return golden


def _load_layered_expected(chosen: list[Path]) -> Golden:
    golden = Golden(chosen[-1])
    for folder in chosen:
        one = load_golden(folder)
        golden.problems += one.problems
        golden.files.update(one.files)
    for problem in golden.problems:
        click.echo(f"bad golden file: {problem}", err=True)
    if golden.problems:
        raise UnusableInput(f"{len(golden.problems)} golden file(s) unusable in {', '.join(map(str, chosen))}; "
                            "nothing replayed")
    for folder, stems in replaced_files(chosen, "*.yaml").items():
        line = collision_line("golden file(s)", stems, folder)
        if line:
            click.echo(line, err=True)
    return golden


class Output:
    """stdout for streamed output (JSON lines, listings) that a closed pipe does not turn into a
    failure: on BrokenPipeError it stops writing, points stdout at /dev/null (so the interpreter's
    final flush is quiet too) and lets the command finish with its own verdict. Any other write
    error (a full disk) is unusable input, one line (:mod:`bench.cli._streams`)."""

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout.buffer
        self.closed = False

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self.stream.write(data)
        except BrokenPipeError:
            self._close()
        except OSError as exc:
            self.closed = True
            raise write_failed(self.stream, exc) from None

    def flush(self) -> None:
        if self.closed:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._close()
        except OSError as exc:
            self.closed = True
            raise write_failed(self.stream, exc) from None

    def _close(self) -> None:
        self.closed = True
        to_devnull(self.stream)


class Progress:
    """A progress bar on stderr for a run that has lasted more than :attr:`AFTER` seconds, only
    when stderr is a terminal and the user did not ask for --quiet (click's progress bar)."""

    AFTER = 2.0

    def __init__(self, total: int, label: str, *, quiet: bool = False) -> None:
        import time

        self._clock = time.monotonic
        self._start = self._clock()
        self._total, self._label, self._done = total, label, 0
        self._on = not quiet and total > 0 and sys.stderr.isatty()
        self._bar: Any = None

    def advance(self, n: int = 1) -> None:
        self._done += n
        if not self._on:
            return
        if self._bar is None:
            if self._clock() - self._start < self.AFTER:
                return
            self._bar = click.progressbar(length=self._total, label=self._label, file=sys.stderr)
            self._bar.__enter__()
            self._bar.update(self._done)
        else:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def fault_recipe(spec: str | None, seed: int | None = None, prefix: str = "") -> Recipe | None:
    """The recipe ``--faults SPEC`` names (a preset or a YAML file; :func:`bench.faults.load_recipe`),
    with `seed` in place of its own when given; None without one. A recipe that cannot be used ends
    the command with one line (`prefix`, then the file and the field) and exit 2."""
    if spec is None:
        return None
    from bench.faults import RecipeError, load_recipe

    try:
        recipe = load_recipe(spec)
    except RecipeError as exc:
        click.echo(f"{prefix}--faults: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    return recipe if seed is None else recipe.with_seed(seed)
