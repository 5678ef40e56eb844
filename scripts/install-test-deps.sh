#!/usr/bin/env bash
# Installs what the optional browser test of the HTML report needs:
# Debian's `chromium` (report/html_browser_test.go drives it headless; the
# test skips when it is absent). Installs only when chromium is missing and
# only as root; prints what it did either way. Safe to run repeatedly.
set -euo pipefail
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "install-test-deps: $b already installed ($(command -v "$b")); nothing to do"
    exit 0
  fi
done
if [[ "$(id -u)" != 0 ]]; then
  echo "install-test-deps: chromium missing and not running as root; not installing (the HTML browser test will skip)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-deps: chromium missing and no apt-get here; not installing (the HTML browser test will skip)"
  exit 0
fi
# --no-install-recommends: chromium alone with what it depends on (about
# 290 MB), not the desktop services it recommends (avahi-daemon, cups,
# upower, ...: 115 packages with them), none of which headless needs.
echo "install-test-deps: installing chromium with apt-get install --no-install-recommends"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "install-test-deps: installed $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
