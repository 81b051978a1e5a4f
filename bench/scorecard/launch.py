"""``python -m bench.scorecard.launch NAME=VALUE... -- PROGRAM [ARGS...]``: a framework's extra variables.

``framework.json``'s ``env`` may refer to the variables ``stopbench check`` sets for each run
(``"OPENAI_API_BASE": "${OPENAI_BASE_URL}"``), which exist only once a run starts. This sets each
``NAME`` to ``VALUE`` with ``$VAR`` and ``${VAR}`` expanded from the run's environment, then replaces
itself with the program (``exec``: the program is the process ``check`` started, in its process
group, with nothing between).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: python -m bench.scorecard.launch NAME=VALUE... -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    cut = argv.index("--")
    pairs, program = argv[:cut], argv[cut + 1:]
    if not program:
        print("bench.scorecard.launch: no program after --", file=sys.stderr)
        return 2
    env = dict(os.environ)
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not name:
            print(f"bench.scorecard.launch: {pair!r}: expected NAME=VALUE", file=sys.stderr)
            return 2
        env[name] = os.path.expandvars(value)
    try:
        os.execvpe(program[0], program, env)
    except OSError as exc:
        print(f"bench.scorecard.launch: cannot run {program[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced the process


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
