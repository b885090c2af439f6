#!/bin/sh
# Install Debian's `chromium` for the report's browser test (tests/integration/test_report_browser.py).
# Idempotent; needs root or sudo and apt. Usage (CI or by hand): sh tests/integration/install_chromium.sh
set -eu
for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
        echo "chromium present: $(command -v "$name")"
        exit 0
    fi
done
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# With recommends: they bring the fonts the screenshot needs to show text rather than boxes.
$SUDO apt-get install -y -qq chromium
command -v chromium
