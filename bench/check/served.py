"""A sequence served in-process, for a loop that runs in the same Python (tests, the pytest plugin).

::

    with served(sequence) as s:
        client = openai.OpenAI(base_url=s.openai_base_url, api_key=s.api_key)
        result = my_loop(client, prompt=s.prompt, tools=s.tools)
        cell = s.cell(ok=result.ok, reason=result.reason)   # observed and judged
        assert not cell.violations

The server and the inference are those of ``stopbench check`` (:mod:`bench.serve`); only the
program is replaced by code the caller runs between entering and :meth:`Served.cell`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.check.explain import assert_meets_requirements
from bench.check.program import DUMMY_KEY, PROMPT, default_model, program_env, steers, tools_url
from bench.engine.judge import judge
from bench.engine.model import Cell, Sequence, Violation
from bench.engine.replay import DEFAULT_SAFETY_CAP
from bench.serve.app import Session
from bench.serve.observe import Observed, observed_cell
from bench.serve.server import BackgroundServer
from bench.serve.tools import tool_schemas


class Served:
    """One sequence on a loopback server: where it is, what to ask, and what the loop did."""

    def __init__(self, sequence: Sequence, server: BackgroundServer, name: str) -> None:
        self.server = server
        self._mcp: Any = None
        self.session = server.session
        self.name = name
        self.api_key = DUMMY_KEY
        self.prompt = PROMPT
        self._set(sequence)

    def _set(self, sequence: Sequence) -> None:
        self.sequence = sequence
        self.model = default_model(sequence.dialect)
        self.tools: list[dict[str, Any]] = tool_schemas(sequence)
        self.steers: dict[int, str] = {int(k): v for k, v in steers(sequence).items()}

    def serve(self, sequence: Sequence) -> Served:
        """Serve another sequence from its first turn on, on the same server (a new run)."""
        self.session.start(sequence)
        self._set(sequence)
        return self

    @property
    def url(self) -> str:
        """The root URL (the Anthropic client's base URL)."""
        return self.server.url

    @property
    def openai_base_url(self) -> str:
        return self.server.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.server.url

    @property
    def mcp_url(self) -> str:
        """The sequence's tools over MCP streamable HTTP (``STOPBENCH_MCP_URL``): a server started on
        first use, stopped with the block."""
        if self._mcp is None:
            from bench.check.mcp import background_mcp
            self._mcp = background_mcp(tools_url(self.url)).start()
        return str(self._mcp.url)

    def close(self) -> None:
        if self._mcp is not None:
            self._mcp.stop()
            self._mcp = None

    def env(self, result: Path | None = None) -> dict[str, str]:
        """This process's environment plus the variables ``stopbench check`` gives a program, for a
        loop the test starts as a subprocess (`result`: where it may write its result file)."""
        return program_env(self.sequence, self.url, result or Path(os.devnull), mcp_url=self.mcp_url)

    def observed(self) -> list[Observed]:
        return self.session.observed()

    def requests(self) -> int:
        """Model requests answered so far (past the end of a ``then: end`` script included)."""
        return self.session.run.answered

    def cell(self, ok: bool | None = None, reason: str | None = None, *,
             safety_cap: int = DEFAULT_SAFETY_CAP) -> Cell:
        """The observed cell, judged against the sequence's ``require:``. `ok` and `reason` are how
        the loop ended (the server cannot see that); a run past `safety_cap` requests is ``capped``."""
        observed = self.observed()
        cell = observed_cell(self.sequence, self.name, observed, ok, reason or ("success" if ok else "failure"))
        if len(cell.steps) > safety_cap:
            kept = cell.steps[:safety_cap]
            cell = replace(cell, outcome="capped", reason=None, ok=None, steps=kept,
                           tools_run=tuple(n for s in kept for n in s.tools_run),
                           tools_failed=tuple(n for s in kept for n in s.tools_failed))
        return cell.with_violations(judge(self.sequence, cell))

    def violations(self, ok: bool | None = None, reason: str | None = None) -> tuple[Violation, ...]:
        """The requirements the loop broke (see :meth:`cell`)."""
        return self.cell(ok, reason).violations

    def assert_meets_requirements(self, ok: bool | None = None, reason: str | None = None) -> Cell:
        """The judged cell; AssertionError naming the first broken requirement, its step, the turn
        served there and what the loop did (:func:`bench.check.explain.explain`)."""
        __tracebackhide__ = True
        cell = self.cell(ok, reason)
        assert_meets_requirements(self.sequence, cell)
        return cell


@contextmanager
def served(sequence: Sequence, name: str = "loop@live") -> Iterator[Served]:
    """Serve `sequence` on a free loopback port for the duration of the block."""
    with BackgroundServer(Session(sequence)) as srv:
        s = Served(sequence, srv, name)
        try:
            yield s
        finally:
            s.close()
