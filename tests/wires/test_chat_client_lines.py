"""The reference loop's Chat client reads the raw event stream: its lines end only where SSE ends a line."""

from __future__ import annotations

import pytest

from bench.wires.openai_chat.client import sse_lines


def test_a_unicode_line_break_inside_a_json_string_does_not_split_the_line() -> None:
    # U+0085 (NEL) and U+2028 are line breaks to str.splitlines, not to the SSE format
    frame = 'data: {"arguments": "{\\"path\\": \\"\u0085\u2028\\"}"}'.encode()
    assert list(sse_lines([frame + b"\n\n"])) == [frame.decode(), ""]


@pytest.mark.parametrize("chunks", [[b"data: a\r\n\r\n"], [b"data: a\r", b"\n\r", b"\n"], [b"data: a\n", b"\n"],
                                    [b"data: a\r\r"]])
def test_cr_lf_cr_and_lf_end_a_line_even_split_across_chunks(chunks: list[bytes]) -> None:
    assert [line for line in sse_lines(chunks)][:2] == ["data: a", ""]


def test_bytes_that_are_not_utf8_are_a_broken_frame() -> None:
    with pytest.raises(ValueError):
        list(sse_lines([b"data: \xff\n\n"]))
