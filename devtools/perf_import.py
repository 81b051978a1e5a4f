"""Stream-assembly figures for ``make perf``: importing very long streams is linear in their size.

Two captures are generated deterministically into a temporary folder (never committed, removed
afterwards) and imported with :func:`bench.importers.import_capture`, as ``stopbench import`` does:

* an Anthropic SSE stream of about 50 MB holding 385,000 ``text_delta`` events (goal: under 10 s),
  and the same stream cut to a quarter of its deltas: the ratio of the two times is about 4 when
  assembly is linear, about 16 when it is quadratic (each piece appended to the text so far);
* about 200 MB of Chat Completions chunks, half text pieces and half pieces of one tool call's
  arguments.

Each import is checked against the generated stream (the text and arguments have the expected
length), so a figure is never the time of an import that lost pieces.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.importers import import_capture

WORDS = ("alpha ", "bravo ", "charlie ", "delta ", "echo ", "foxtrot ", "golf ", "hotel ", "india ", "juliet ")
ANTHROPIC_DELTAS = 385_000
ANTHROPIC_PIECE = 4
"""Words per text delta: about 30 characters, so the stream comes to about 50 MB."""
CHAT_BYTES = 200_000_000


def _pieces(words_per_piece: int) -> Iterator[str]:
    words = itertools.cycle(WORDS)
    while True:
        yield "".join(next(words) for _ in range(words_per_piece))


def write_anthropic(path: Path, deltas: int) -> int:
    """An Anthropic message stream of `deltas` text deltas; returns the length of the text."""
    total = 0
    head = ('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_perf","type":"message",'
            '"role":"assistant","model":"perf","content":[],"stop_reason":null,'
            '"usage":{"input_tokens":10,"output_tokens":1}}}\n\n'
            'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            '"content_block":{"type":"text","text":""}}\n\n')
    with path.open("w", encoding="utf-8") as fh:
        fh.write(head)
        for piece in itertools.islice(_pieces(ANTHROPIC_PIECE), deltas):
            total += len(piece)
            fh.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
                     f'"delta":{{"type":"text_delta","text":"{piece}"}}}}\n\n')
        fh.write('event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
                 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
                 f'"usage":{{"output_tokens":{deltas}}}}}\n\n'
                 'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return total


def write_chat(path: Path, size: int) -> tuple[int, int]:
    """Chat chunks up to about `size` bytes, text and tool-call argument pieces alternating;
    returns the lengths of the text and of the arguments."""
    text = args = 0
    written = 0
    prefix = '{"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1700000000,"model":"perf","choices":'
    with path.open("w", encoding="utf-8") as fh:
        first = (f'data: {prefix}[{{"index":0,"delta":{{"role":"assistant","content":"","tool_calls":[{{"index":0,'
                 '"id":"call_perf","type":"function","function":{"name":"write_file","arguments":""}}]},'
                 '"finish_reason":null}]}\n\n')
        fh.write(first)
        written += len(first)
        for n, piece in enumerate(_pieces(3)):
            if written >= size:
                break
            if n % 2:
                line = (f'data: {prefix}[{{"index":0,"delta":{{"tool_calls":[{{"index":0,'
                        f'"function":{{"arguments":"{piece}"}}}}]}},"finish_reason":null}}]}}\n\n')
                args += len(piece)
            else:
                line = f'data: {prefix}[{{"index":0,"delta":{{"content":"{piece}"}},"finish_reason":null}}]}}\n\n'
                text += len(piece)
            fh.write(line)
            written += len(line)
        fh.write(f'data: {prefix}[{{"index":0,"delta":{{}},"finish_reason":"tool_calls"}}]}}\n\ndata: [DONE]\n\n')
    return text, args


def _timed_import(path: Path) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = import_capture(path)
    return time.perf_counter() - wall, time.process_time() - cpu, result.turns[0].turn


def report(anthropic_deltas: int = ANTHROPIC_DELTAS, chat_bytes: int = CHAT_BYTES) -> None:
    """Generate, import and print the figures (see the module docstring); ``make perf`` passes smaller
    sizes than the defaults (the figures that matter, MB/s and the CPU ratio for 4 times the deltas,
    do not depend on the size when assembly is linear) and prints the time scaled to the defaults."""
    with tempfile.TemporaryDirectory(prefix="stopbench-perf-import-") as tmp:
        figures = []
        for deltas in (anthropic_deltas // 4, anthropic_deltas):
            path = Path(tmp) / f"anthropic-{deltas}.sse"
            expected = write_anthropic(path, deltas)
            size = path.stat().st_size
            wall, cpu, turn = _timed_import(path)
            content = getattr(turn, "content", None) or ""
            if len(content) != expected:
                raise SystemExit(f"perf_import: the Anthropic import lost text ({len(content)} of {expected})")
            path.unlink()
            figures.append((deltas, size, wall, cpu))
        (q_deltas, _, q_wall, q_cpu), (deltas, size, wall, cpu) = figures
        print(f"importing an Anthropic stream of {deltas:,} text deltas ({size / 1e6:.1f} MB): {wall:.2f} s wall, "
              f"{cpu:.2f} s CPU ({size / 1e6 / cpu:.1f} MB per CPU second; goal at {ANTHROPIC_DELTAS:,} deltas: "
              f"under 10 s); a quarter of it ({q_deltas:,} "
              f"deltas) {q_wall:.2f} s: CPU ratio {cpu / q_cpu:.2f} for 4 times the deltas (linear: about 4)")
        if deltas != ANTHROPIC_DELTAS:
            print(f"  scaled linearly to the goal's {ANTHROPIC_DELTAS:,} deltas: about "
                  f"{cpu * ANTHROPIC_DELTAS / deltas:.1f} s CPU (an estimate from this run, not a measurement)")
        path = Path(tmp) / "chat.sse"
        text, args = write_chat(path, chat_bytes)
        size = path.stat().st_size
        wall, cpu, turn = _timed_import(path)
        got_text = len(getattr(turn, "content", None) or "")
        calls = getattr(turn, "tool_calls", ())
        got_args = len(calls[0].arguments) if calls else 0
        if (got_text, got_args) != (text, args):
            raise SystemExit(f"perf_import: the chat import lost pieces (text {got_text} of {text}, "
                             f"arguments {got_args} of {args})")
        print(f"importing {size / 1e6:.0f} MB of Chat Completions chunks (text and tool-call argument pieces): "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU ({size / 1e6 / cpu:.1f} MB per CPU second)")


if __name__ == "__main__":
    report()
