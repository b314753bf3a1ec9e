"""Waiting for a test server started by start.sh: one loop for every server's utility.

`wait_ready(tool, what, timeout, pid, attempt)` calls `attempt()` until it answers True (the server
serves; `attempt` may also create the bucket or container it found missing) or `timeout` seconds
pass, and gives up at once when the server's process `pid` has exited. `attempt` returns True, or
a short text saying why not yet; an OSError it raises counts as "not yet" too.
"""

import sys
import time


def alive(pid):
    """Whether process `pid` runs (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_ready(tool, what, timeout, pid, attempt, pause=0.05):
    deadline = time.monotonic() + float(timeout)
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not alive(int(pid)):
            sys.exit(f"{tool}: server process {pid} exited before it was ready ({last})")
        try:
            answer = attempt()
            if answer is True:
                return
            last = answer
        except OSError as e:
            last = f"{type(e).__name__}: {e}"
        time.sleep(pause)
    sys.exit(f"{tool}: {what} not ready after {timeout}s ({last})")
