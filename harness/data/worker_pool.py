"""Process pools whose workers end with the process that started them.

Why: a ProcessPoolExecutor's workers wait on a pipe whose other end they hold themselves, so when the command that
started them is killed (SIGKILL, the OOM killer, a closed terminal's session) they wait on for ever, orphaned. The
trainer's DataLoader workers watch their parent; these are told by the kernel (Linux's PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with_parent(parent: int) -> None:
    """A pool initializer: SIGTERM to this worker when the process that started it ends (Linux; elsewhere
    nothing), and an exit now where it ended already."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A ProcessPoolExecutor of `workers` processes that end with this one."""
    return ProcessPoolExecutor(workers, initializer=end_with_parent, initargs=(os.getpid(),))
