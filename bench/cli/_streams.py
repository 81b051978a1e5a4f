"""Standard output that ends a command the way the exit-status table says (bench/cli/_common.py).

A reader that goes away (``stopbench show | head -1``) is not a failure: what is left to print goes to
/dev/null, quietly, and the command ends with its own verdict, as Unix tools do. Output that cannot be
written at all (a full disk, ``> /dev/full``) or that the stream's encoding cannot represent
(``PYTHONIOENCODING=latin-1``) is unusable input: one line on stderr and exit 2. Replacing the
characters instead would show a sequence's content other than it is.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any, TextIO

from bench.errors import UnusableInput


def to_devnull(stream: IO[Any]) -> None:
    """Point `stream`'s file descriptor at /dev/null, so what is still buffered (and the interpreter's
    final flush) goes nowhere, quietly. A stream without a descriptor (a test's capture) is left as is."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_failed(stream: IO[Any], exc: OSError) -> UnusableInput:
    """The one line for standard output that cannot be written (`exc`), after pointing it at /dev/null."""
    to_devnull(stream)
    return UnusableInput(f"cannot write to standard output: {exc.strerror or exc}")


class GuardedStdout:
    """``sys.stdout`` as the module docstring says: a closed pipe is quiet, a write error or a character
    its encoding cannot represent is :class:`~bench.errors.UnusableInput`. Everything else is the
    wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if self._gone or text == "":  # click probes a stream with write(""): no error may be spent on it
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)
        except UnicodeEncodeError as exc:
            char = exc.object[exc.start:exc.end][:1]
            raise UnusableInput(f"cannot write to standard output: its encoding {self._stream.encoding} cannot "
                                f"represent {char!r} (U+{ord(char):04X}); set PYTHONIOENCODING=utf-8") from None
        except OSError as exc:
            raise write_failed(self._stream, exc) from None

    def flush(self) -> None:
        if self._gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()
        except OSError as exc:
            raise write_failed(self._stream, exc) from None

    def _reader_gone(self) -> None:
        self._gone = True
        to_devnull(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Wrap ``sys.stdout`` in :class:`GuardedStdout` (once)."""
    if sys.stdout is not None and not isinstance(sys.stdout, GuardedStdout):
        sys.stdout = GuardedStdout(sys.stdout)
