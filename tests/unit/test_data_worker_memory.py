"""Loader workers keep the memory they free (harness.data.worker_memory): a clip's megabytes reuse freed pages
instead of faulting in fresh ones."""

import subprocess
import sys
import textwrap

import pytest

from harness.data.worker_memory import loader_worker_init

# A worker's pattern: allocate a few megabytes (a clip's frames), free them, again. Prints the page faults.
_CLIPS = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from harness.data.worker_memory import keep_freed_memory
    if sys.argv[1] == "keep":
        assert keep_freed_memory()
    def clip():  # eight frames of 3 MiB each, freed together
        frames = [np.ones(3 << 20, np.uint8) for _ in range(8)]
        del frames
    clip()  # the first clip's pages are new either way
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        clip()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _page_faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _CLIPS, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_clip_memory_is_reused_not_faulted_in_again():
    default, kept = _page_faults("default"), _page_faults("keep")
    assert default > 20 * 3000  # each clip's 24 MiB in fresh pages: about 6,000 faults of 4 KiB pages
    assert kept < default / 20


def test_the_trainers_loader_workers_keep_their_memory():
    from harness.train.loaders import run_loader

    loader = run_loader(list(range(4)), 1, batch_size=2)
    assert loader.worker_init_fn is loader_worker_init
    assert sorted(int(x) for batch in loader for x in batch) == [0, 1, 2, 3]  # the workers start with it
