"""Whether the decoder that `data.decoder` names can run here, checked before any work."""

from __future__ import annotations

import os

from harness.data.decode import torchcodec_available
from harness.data.nvdec import require_nvdec
from harness.spec import SpecError

DECODER_ENV = "HARNESS_DECODER"  # refused when set: data.decoder chooses the decoder


def require_decoder(decoder: str) -> None:
    """SpecError (exit 2, before any work) where `data.decoder` cannot decode here: HARNESS_DECODER is set,
    torchcodec cannot be imported, or (nvdec) PyNvVideoCodec or a CUDA GPU is missing."""
    old = os.environ.get(DECODER_ENV)
    if old is not None:
        raise SpecError(f"{DECODER_ENV}={old!r} is set, but the decoder is chosen by the config key data.decoder "
                        f"now (pyav, torchcodec or nvdec). Unset {DECODER_ENV} and set data.decoder="
                        f"{old.strip().lower() or 'pyav'}.")
    if decoder == "torchcodec":
        why = torchcodec_available()
        if why is not None:
            raise SpecError(f"data.decoder=torchcodec, but torchcodec cannot be used here ({why}). Install it "
                            f"('pip install torchcodec' and FFmpeg's shared libraries, e.g. 'apt-get install "
                            f"ffmpeg') or use data.decoder=pyav.")
    elif decoder == "nvdec":
        require_nvdec()
