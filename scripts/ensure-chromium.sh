#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's chromium through playwright-core; nothing is
# downloaded at test time, so `npm test` (its pretest) and .ci/run install the browser here when
# it is missing. Only root can: anyone else is told how, and the browser test then fails saying so.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ensure-chromium: /usr/bin/chromium is missing; the dashboard's browser test needs it: sudo apt-get install -y chromium" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium
test -x /usr/bin/chromium
