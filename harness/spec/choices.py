"""The values a RunSpec's string and choice settings may take: validate checks them, the CLI offers them."""

SCALES = ("smoke", "proxy", "paper")
DEVICES = ("auto", "cuda", "cpu")
PRECISIONS = ("auto", "bf16", "fp32")
SWITCHES = ("auto", "on", "off")
EVAL_CROPS = (1, 3)  # spatial crops per evaluation view that harness.data.transforms.eval_crop_boxes makes
STEP_MODES = ("eager", "cuda_graphs", "compile_graphs", "auto")  # harness.train.step implements them
GRAPHED_STEP_MODES = ("cuda_graphs", "compile_graphs")  # the modes that replay CUDA graphs: a GPU only
COMPILED_STEP_MODES = ("compile_graphs",)  # the modes that run the step through torch.compile
# Sub-batch BN (harness.models.bn): "auto" (cuDNN per block, or the reference's interleaved layout), "triton" (CUDA).
SUB_BATCH_BN = ("auto", "triton")
SUB_BATCH_BN_CUDA_ONLY = ("triton",)
# Plain (one-group, unsynchronised) training BN: PyTorch's kernels (cuDNN on GPU) or the sub-batch kernels with one
# group (CUDA; harness.models.triton_bn).
PLAIN_BN_IMPL = ("cudnn", "triton")
POLICIES = ("step", "cosine")
BATCH_RULES = ("tokens", "flops")  # multigrid.batch_rule; harness.schedule.shapes applies them
