"""Run `harness` with every thread's stack written to stderr every SECONDS: where a process that hangs waits.

Usage (under torchrun as well): python3 tools/device/with_stack_dumps.py SECONDS HARNESS_ARGS ...
"""

import faulthandler
import runpy
import sys

if __name__ == "__main__":
    faulthandler.dump_traceback_later(float(sys.argv[1]), repeat=True)
    sys.argv = ["harness", *sys.argv[2:]]
    runpy.run_module("harness", run_name="__main__", alter_sys=True)
