"""The exceptions that end a command with exit status 2: an input the bench cannot use.

Every such error carries one line for the user, naming the file and the field (or line, or
event) at fault. The command line prints that line and exits 2 without a traceback; library
callers can catch :class:`UnusableInput` to handle every kind at once.
"""

from __future__ import annotations


class UnusableInput(ValueError):
    """An input (file, folder, option value) the bench cannot use; ``str()`` is the one-line message."""
