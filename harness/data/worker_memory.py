"""Loader workers keep the memory they free for their next clip rather than handing it back to the kernel.

Why: glibc's malloc serves a large allocation (above its mmap threshold: 128 KiB at first, raised as large blocks
are freed) with a fresh mapping, and gives the top of its heap back to the kernel once more than its trim threshold
lies free there. A loader worker allocates and frees megabytes for every clip (the decoder's frames, the converted
crops, the resized clip), so each clip's memory came from pages the kernel had to map and zero again: on the 2-core
development CPU about 1,000 page faults per 32x224 clip of a Kinetics-like prepared copy read in one process (34 at
8x112, 99 at 16x112), 8 or fewer with the thresholds below, and about a tenth less CPU time per 32x224 clip. In a
DataLoader's workers the batch's shared memory, new for every batch, faults in its pages as well (about 1,200 per
32x224 clip), which this leaves as it is: there a worker's faults per clip fell from 1,600-1,900 to 1,300 (8x112:
122-131 to 91). Each worker keeps up to TRIM_THRESHOLD bytes free at its heap's top for reuse.

The thresholds are set in the loader's worker processes only (the DataLoader's `worker_init_fn`), not in the
process that trains, whose memory is the user's. Elsewhere than glibc (no `mallopt`) nothing changes.
"""

from __future__ import annotations

import ctypes

# mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20  # blocks up to this size come from the heap, reused after a free
TRIM_THRESHOLD = 64 << 20  # free memory at the heap's top kept up to this much


def keep_freed_memory() -> bool:
    """Raise this process's malloc thresholds (module docs); False where the C library has no `mallopt`."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the process runs on
    except (OSError, AttributeError, TypeError):  # no such symbol (not glibc); no process library (Windows)
        return False
    # trim first: setting the mmap threshold by hand stops glibc from moving the trim threshold with it
    return mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1


def loader_worker_init(worker_id: int) -> None:
    """A DataLoader `worker_init_fn`: :func:`keep_freed_memory` in each worker."""
    keep_freed_memory()
