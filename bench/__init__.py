"""stopbench: replay model-response sequences through agent-loop termination predicates.

Everything a predicate file needs is importable from here, and a predicate imports nothing else
from the bench::

    from bench import ALL, Continue, Decision, State, Stop, Turn, predicate

The decisions (:class:`Continue`, :class:`Stop`, :class:`Remind`, :class:`Resend`, ``ALL``), the
declarations (:func:`predicate`, :class:`Cap`, :class:`MutationNote`), what a predicate reads (:class:`Turn`,
:class:`ToolCall`, :class:`TurnError`, :class:`Usage`, :class:`State`) and the documented finish
tables of each API (``TABLES``: dialect -> raw finish -> its normalised value and source), and
:func:`predicate_factory` and :func:`shared_factory` for columns that are configurations of one
shared rules file, and the
citation values (:class:`Source`, :class:`Cite`, :class:`Note`, :class:`Cited`) a rule's source is
declared with. Also
public: the cell types and :func:`replay`, for tests of your own. Everything else (catalogue,
golden files, reports) is reached through the ``stopbench`` command or the submodules named after
it. ``mypy --strict`` checks the shipped predicates against these types (``make typecheck``).
"""

from bench.engine.cite import Cite, Cited, Note, Source
from bench.engine.discovery import shared_factory
from bench.engine.model import (
    ALL,
    ERROR_KINDS,
    Cell,
    Continue,
    Decision,
    ErrorKind,
    Finish,
    Remind,
    RequestChanges,
    Requirement,
    Resend,
    Sequence,
    Step,
    Stop,
    ToolCall,
    Turn,
    TurnError,
    Usage,
    Violation,
    next_turn,
)
from bench.engine.predicate import Cap, MutationNote, Predicate, PredicateFactory, State, predicate, predicate_factory
from bench.engine.replay import replay
from bench.wires.delivery import ErrorMode, error_mode
from bench.wires.dialects import TABLES

__all__ = [
    "ALL",
    "ERROR_KINDS",
    "TABLES",
    "Cap",
    "Cell",
    "Cite",
    "Cited",
    "Continue",
    "Decision",
    "ErrorKind",
    "ErrorMode",
    "Finish",
    "MutationNote",
    "Note",
    "Predicate",
    "PredicateFactory",
    "Remind",
    "RequestChanges",
    "Requirement",
    "Resend",
    "Sequence",
    "Source",
    "State",
    "Step",
    "Stop",
    "ToolCall",
    "Turn",
    "TurnError",
    "Usage",
    "Violation",
    "error_mode",
    "next_turn",
    "predicate",
    "predicate_factory",
    "replay",
    "shared_factory",
]
