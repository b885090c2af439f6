#!/bin/sh
# Install Debian's `ffmpeg` for the tests that make real videos with it (other tools' codecs and containers, the
# user's own videos). Idempotent; needs root or sudo and apt. Usage (CI or by hand): sh tests/integration/install_ffmpeg.sh
set -eu
if command -v ffmpeg >/dev/null 2>&1; then
    echo "ffmpeg present: $(command -v ffmpeg)"
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends ffmpeg
command -v ffmpeg
