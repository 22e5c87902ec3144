# SPDX-License-Identifier: MIT
"""Runs a command and records its peak resident set size, for tests/live/cp_memory_test.sh:

  rss_run.py OUTFILE COMMAND [ARGS...]

Writes the child's ru_maxrss (KiB, from wait4) to OUTFILE once it has exited and exits with
its status (128 + signal when killed). SIGINT and SIGTERM are passed on to the child, so a
listener run through this stops the way it would on its own.
"""
import os
import signal
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    child = subprocess.Popen(sys.argv[2:])
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    while True:
        try:
            _, status, usage = os.wait4(child.pid, 0)
            break
        except InterruptedError:
            continue
    with open(sys.argv[1], "w") as f:
        f.write("%d\n" % usage.ru_maxrss)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
