"""data_bench's rates: the loader timed as one stream of batches, whole items timed over passes."""

from __future__ import annotations

import torch


class _Counted(torch.utils.data.Dataset):
    """A dataset that notes each clip asked of it (in this process)."""

    def __init__(self, dataset):
        self.dataset, self.served = dataset, []

    def __getitem__(self, req):
        self.served.append(req)
        return self.dataset[req]


def _counted_dataset(synth) -> _Counted:
    from harness.cli_data import _compose
    from harness.data.clip_dataset import VideoClipDataset

    spec = _compose(["data.name=synthetic", f"data.root={synth}", "data.num_frames=8", "data.crop_size=32",
                     "data.jitter=[36,48]", "data.num_classes=4", "data.train_videos=8"])
    return _Counted(VideoClipDataset.from_spec(spec, "train"))


def _small_requests(ds: _Counted, n: int) -> list:
    from harness.measure.data_bench_rates import clip_requests

    return clip_requests({"t": 4, "s": 32, "stride_range": (1, 2), "jitter_range": (36, 48)}, n,
                         len(ds.dataset.records), 0)


def test_the_loader_is_timed_as_one_stream_of_batches_cycling_through_the_clips(synth):
    from harness.measure.data_bench_rates import _loader_rate

    ds = _counted_dataset(synth)
    reqs = _small_requests(ds, 6)
    rate = _loader_rate(ds, reqs, batch=2, workers=0, min_seconds=0.0)
    # two warm-up batches, then every batch of the clips once: the stream wraps around to the first clips
    assert rate > 0 and ds.served == reqs + reqs[:4]
    ds.served.clear()
    _loader_rate(ds, reqs, batch=2, workers=0, min_seconds=0.3)
    assert len(ds.served) > 12 and ds.served[:6] == ds.served[6:12] == reqs


def test_whole_items_in_process_are_timed_over_passes_until_the_seconds_have_passed(synth):
    from harness.measure.data_bench_rates import item_rate

    ds = _counted_dataset(synth)
    reqs = _small_requests(ds, 3)
    assert item_rate(ds, reqs) > 0 and ds.served == reqs  # no seconds asked: one pass
    ds.served.clear()
    item_rate(ds, reqs, min_seconds=0.2)
    assert len(ds.served) > 3 and len(ds.served) % 3 == 0 and ds.served[:3] == ds.served[3:6] == reqs
