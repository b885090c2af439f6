"""The trainer: one loop for baseline and multigrid runs, its steps, checkpoints, meter and evaluation."""
