"""The step of the stopbench GitHub Action (action.yml): `stopbench check` on the user's command, its verdict
in the job summary, the live record and the JUnit XML as the step's outputs.

Reads what action.yml passes: INPUT_COMMAND (split as a shell would), INPUT_ARGS (more options for
``stopbench check``), INPUT_NAME, INPUT_REPORTS (the folder for the live record and the JUnit XML) and
INPUT_FAIL_ON_VIOLATIONS; writes GITHUB_STEP_SUMMARY (appended: a heading, the table, the rest of the
verdict as text) and GITHUB_OUTPUT (``json``, ``junit``, ``exit-code``). Runs stopbench with the
interpreter running this script (``python -m bench``), the one the Action installed it into.

Exit status: stopbench check's, except that with INPUT_FAIL_ON_VIOLATIONS=false a broken requirement
(1) does not fail the step; 2 also when the inputs are unusable (no command).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2


def append(path_var: str, text: str) -> None:
    """Append `text` to the file GitHub names in `path_var`, if it names one."""
    path = os.environ.get(path_var)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def summary(command: str, stdout: str, stderr: str, code: int) -> str:
    verdict = {0: "every requirement met", 1: "requirements broken"}.get(code, "unusable input")
    table = [line for line in stdout.splitlines() if line.startswith("|")]
    rest = [line for line in stdout.splitlines() if line.strip() and not line.startswith("|")]
    if code not in (0, 1):
        rest += [line for line in stderr.splitlines() if line.strip()]
    parts = [f"## stopbench check: {verdict}\n", f"`{command}` (exit {code})\n"]
    if table:
        parts.append("\n".join(table) + "\n")
    if rest:
        parts.append("```text\n" + "\n".join(rest).replace("```", "'''") + "\n```\n")
    return "\n".join(parts) + "\n"


def live_record(stderr: str) -> str:
    """The live record's path, from check's 'wrote ...json' line."""
    wrote = [line.removeprefix("wrote ").strip() for line in stderr.splitlines() if line.startswith("wrote ")]
    return next((p for p in wrote if p.endswith(".json")), "")


def main() -> int:
    command = os.environ.get("INPUT_COMMAND", "").strip()
    if not command:
        print("stopbench action: the command input is empty: say how to run your loop (command: python my_loop.py)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    reports = Path(os.environ.get("INPUT_REPORTS") or "stopbench-reports")
    junit = reports / "stopbench-check.xml"
    argv = [sys.executable, "-m", "bench", "check", "--reports", str(reports), "--junit", str(junit),
            *shlex.split(os.environ.get("INPUT_ARGS", ""))]
    if os.environ.get("INPUT_NAME"):
        argv += ["--name", os.environ["INPUT_NAME"]]
    argv += ["--", *shlex.split(command)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    append("GITHUB_STEP_SUMMARY", summary(command, proc.stdout, proc.stderr, proc.returncode))
    append("GITHUB_OUTPUT", f"json={live_record(proc.stderr)}\njunit={junit if junit.is_file() else ''}\n"
                            f"exit-code={proc.returncode}\n")
    lenient = os.environ.get("INPUT_FAIL_ON_VIOLATIONS", "true").strip().lower() == "false"
    return 0 if lenient and proc.returncode == 1 else proc.returncode


if __name__ == "__main__":
    sys.exit(main())
