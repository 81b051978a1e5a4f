"""A process out of reach of its starter's process group, for the process-hygiene tests.

Run as a script with a file name, it double-forks a grandchild into a session of its own (as a CLI
starts a daemon), the grandchild writes its pid to the file, and all of them sleep far past any
test's time limit. :func:`start_detached` starts that script in a session of its own and waits for
the pid file. The fake loop (tests/check/programs/fake_loop.py) and the leaky conformance driver
(tests/conform/session_driver.py) both use it.
"""

import os
import subprocess
import sys
import time


def start_detached(pid_file: str, **popen: object) -> subprocess.Popen:
    """Start this script in a session of its own; return once its grandchild wrote `pid_file` (or 30 s
    passed)."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), pid_file], start_new_session=True,
                             **popen)  # type: ignore[call-overload]
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.02)
    return child


def _double_fork(pid_file: str) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pid_file, "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(600)
        os._exit(0)
    time.sleep(600)


if __name__ == "__main__":
    _double_fork(sys.argv[1])
