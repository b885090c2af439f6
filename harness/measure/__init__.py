"""Measurement: step times on random clips, and what they predict, without training.

`predict` (`harness profile`) times every planned shape and predicts a run's wall-clock; `throughput` compares
the trainer's step modes with a plain loop; `scaling` times the planned shapes under DDP; `step_bench` holds the
shared step timer; `bn_bench` times one BN layer per mode; `data_bench` (`harness data bench`) the loader.
"""
