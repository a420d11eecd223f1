#!/usr/bin/env bash
# Install Debian's chromium for the browser tests (tests/real/test_leaderboard_site.py).
# Idempotent: does nothing when a chromium binary is already on PATH. Needs root (or sudo).
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "setup_chromium: $b already installed ($("$b" --version 2>/dev/null || echo '?'))"
    exit 0
  fi
done
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "setup_chromium: installed $(chromium --version)"
