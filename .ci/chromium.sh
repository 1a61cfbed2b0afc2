# Sourced by .ci/run: Debian's Chromium for the console's browser tests (test/console/,
# docs/console.md "Tests"). Idempotent: nothing happens when /usr/bin/chromium exists; otherwise
# apt-get installs it (as root, or through sudo). CI=true makes a missing browser fail those tests
# instead of skipping them (test/console/browser.ts), so the install is checked by the suite.
baton_ci_chromium() {
  if [ -x /usr/bin/chromium ]; then
    echo "== chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
  echo "== chromium: installing Debian's chromium (apt-get)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
}
baton_ci_chromium
