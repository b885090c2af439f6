"""Evaluation metrics (harness.train.evaluate) against brute-force definitions, and videos with unread views."""

import contextlib

import pytest
import torch

from harness.train.evaluate import evaluate, mean_average_precision, topk_accuracy


def test_topk_accuracy():
    scores = torch.tensor([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]])
    labels = torch.tensor([2, 0, 0, 2])
    acc = topk_accuracy(scores, labels, ks=(1, 2))
    assert acc["top1"] == pytest.approx(25.0)  # only row 1 is right at top-1
    assert acc["top2"] == pytest.approx(50.0)  # rows 0 and 1 (row 3's label ties for 2nd place and loses)
    assert topk_accuracy(scores, labels, ks=(5,))["top5"] == pytest.approx(100.0)  # k above the classes


def test_a_video_with_a_view_that_could_not_be_read_is_left_unscored():
    # A cut-off video's early views decode and its later ones do not: it was scored on the views it kept.
    def batch(videos, valid, clips):
        return {"clips": torch.tensor(clips, dtype=torch.float32), "video": torch.tensor(videos),
                "valid": torch.tensor(valid), "labels": torch.tensor([1, 0, 1])[torch.tensor(videos)],
                "failures": [(f"v{v}.mp4", "truncated") for v, ok in zip(videos, valid) if not ok]}

    # Two views per video; the 'model' passes the clip on as the class scores. Video 0 is right in both views,
    # video 1 right in the view that was read, video 2 right in one view of two.
    loader = [batch([0, 0, 1], [True, True, True], [[0, 9], [0, 9], [9, 0]]),
              batch([1, 2, 2], [False, True, True], [[0, 0], [9, 0], [0, 1]])]
    failures = []
    result = evaluate(torch.nn.Identity(), loader, 3, 2, False, lambda x: x, contextlib.nullcontext(),
                      torch.device("cpu"), False, on_failures=failures.extend)
    assert result["videos"] == 3 and result["videos_scored"] == 2  # video 1 is left out
    assert result["top1"] == pytest.approx(50.0)  # video 0 right, video 2's mean of its views wrong
    assert failures == [("v1.mp4", "truncated")]


def _average_precision(scores, positives):
    """AP by its definition: mean over positives of the precision at each positive's rank."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    hits, total = 0, 0.0
    for rank, i in enumerate(order, 1):
        if positives[i]:
            hits += 1
            total += hits / rank
    return total / max(1, sum(positives))


def test_mean_average_precision_matches_definition():
    torch.manual_seed(0)
    scores = torch.rand(12, 4)
    targets = (torch.rand(12, 4) > 0.6).float()
    targets[:, 3] = 0  # a class without positives is left out, as the Charades evaluation does
    expected = [_average_precision(scores[:, c].tolist(), targets[:, c].tolist()) for c in range(3)]
    assert mean_average_precision(scores, targets) == pytest.approx(100 * sum(expected) / 3)
    perfect = torch.eye(4)
    assert mean_average_precision(perfect, perfect) == pytest.approx(100.0)
