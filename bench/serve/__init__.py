"""The replay server: a sequence served as the endpoint of any wire of :mod:`bench.wires` (JSON and
streams), with every request recorded and the client's decisions inferred from them."""

from bench.serve.app import Record, Run, Session, create_app
from bench.serve.observe import Observed, infer, observed_cell, observed_steps
from bench.serve.render import WIRES, WireName, render
from bench.serve.server import BackgroundServer, fast_stack

__all__ = ["WIRES", "BackgroundServer", "Observed", "Record", "Run", "Session", "WireName", "create_app", "fast_stack",
           "infer", "observed_cell", "observed_steps", "render"]
