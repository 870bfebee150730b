#!/bin/sh
# Debian packages the tests need: graphviz (`dot`, for SVG/PNG export), chromium (driven by
# Playwright in the browser tests; never a downloaded browser), an emoji font (so the
# screenshots the browser test saves show the app's icons) and bubblewrap (`bwrap`: code
# handlers run in its sandbox, tests/test_sandbox_isolation.py). Installed only when missing.
set -e
missing=""
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
[ -x /usr/bin/chromium ] || missing="$missing chromium"
[ -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || missing="$missing fonts-noto-color-emoji"
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$missing"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
else
    echo "missing:$missing (install them with apt-get; browser/export/sandbox tests will be skipped)" >&2
fi
