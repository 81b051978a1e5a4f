"""``stopbench mcp-tools``: the current run's tools as an MCP server (stdio, or streamable HTTP)."""

from __future__ import annotations

import click


@click.command("mcp-tools")
@click.option("--tools-url", envvar="STOPBENCH_TOOLS_URL", default=None, metavar="URL",
              help="The replay server's tool endpoint [default: $STOPBENCH_TOOLS_URL, set by stopbench check].")
@click.option("--http", "port", type=click.IntRange(min=0, max=65535), default=None, metavar="PORT",
              help="Serve streamable HTTP on PORT (path /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http: the address to listen on.")
def mcp_tools_cmd(tools_url: str | None, port: int | None, host: str) -> None:
    """Serve the tools of GET $STOPBENCH_TOOLS_URL over MCP; each tools/call is forwarded to
    POST $STOPBENCH_TOOLS_URL/<name>, where the replay server records it as executed.

    A program under `stopbench check` gets this server's argv in STOPBENCH_MCP_COMMAND (a JSON
    list) and a running streamable-HTTP one in STOPBENCH_MCP_URL; this command is for running it by
    hand, beside `stopbench serve`.
    """
    from bench.check.mcp import TOOLS_URL_ENV, serve_http, serve_stdio
    from bench.errors import UnusableInput

    url = (tools_url or "").strip()
    if not url:
        raise UnusableInput(f"no tool endpoint: pass --tools-url or set {TOOLS_URL_ENV} (stopbench check sets it; "
                            "beside stopbench serve it is http://127.0.0.1:PORT/_stopbench/tools)")
    if port is None:
        serve_stdio(url)
    else:
        serve_http(url, host, port)
