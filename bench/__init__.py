"""stopbench: replay model-response sequences through agent-loop termination predicates.

The public API a predicate file needs::

    from bench import Continue, Stop, predicate

Everything else (catalogue, replay, golden files, reports) is reached through the
``stopbench`` command or the submodules named after it.
"""

from bench.model import (
    ALL,
    Cell,
    Continue,
    Decision,
    Finish,
    Remind,
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
)
from bench.predicate import Cap, Predicate, State, predicate
from bench.replay import replay

__all__ = [
    "ALL",
    "Cap",
    "Cell",
    "Continue",
    "Decision",
    "Finish",
    "Predicate",
    "Remind",
    "Requirement",
    "Resend",
    "Sequence",
    "State",
    "Step",
    "Stop",
    "ToolCall",
    "Turn",
    "TurnError",
    "Usage",
    "Violation",
    "predicate",
    "replay",
]
