"""The fields of each kind of measurement record, for tests of how the records are written and read."""

# The measurement commands with their measurement replaced: what they write around it.
THROUGHPUT = {"device": "cpu", "matmul_tflops": 1.0, "precision": "fp32", "warmup": 1, "repeats": 2, "skipped": [],
              "rows": [], "notes": "n"}
SCALING = {"suite": "smoke", "scale": "smoke", "world_size": 1, "device": "cpu", "global_batch": 2, "step": "eager",
           "warmup": 1, "repeats": 2, "shapes": [], "predicted_s": {}, "fixed_per_gpu_batch": 8,
           "sub_batch_bn": "triton"}
PROFILE = {"suite": "smoke", "scale": "smoke", "device": "cpu", "step": "eager", "runs": [], "shapes": [],
           "assumptions": "a"}
