#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's chromium through playwright-core; nothing is
# downloaded at test time, so CI installs the browser here when it is missing (we run as root).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium
test -x /usr/bin/chromium
