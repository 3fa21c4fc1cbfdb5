#!/usr/bin/env bash
# System packages the test suite drives for real: Chromium (HTML report, VS Code workbench),
# Neovim (a real LSP client), ripgrep and libkrb5-dev (code-server's install), git.
# Installs only what is missing; needs root (or sudo) when something is. Packages given as
# arguments are installed instead of that list.
# On a shared machine another apt or dpkg may hold its locks: apt-get then waits for them (up to
# REWARDKIT_APT_LOCK_TIMEOUT seconds, default 900) instead of failing at once, and says so.
set -euo pipefail
lock_timeout="${REWARDKIT_APT_LOCK_TIMEOUT:-900}"
case "$lock_timeout" in
  '' | *[!0-9]*)
    echo "system-packages: REWARDKIT_APT_LOCK_TIMEOUT must be whole seconds, got '$lock_timeout'" >&2
    exit 2
    ;;
esac
needed=("$@")
if [ $# -eq 0 ]; then
  command -v chromium >/dev/null 2>&1 || needed+=(chromium)
  command -v nvim >/dev/null 2>&1 || needed+=(neovim)
  command -v rg >/dev/null 2>&1 || needed+=(ripgrep)
  command -v git >/dev/null 2>&1 || needed+=(git)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || needed+=(libkrb5-dev)
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

# Who holds apt's and dpkg's locks, as "PID (COMMAND) holds PATH, ...", or nothing (best effort:
# lslocks).
lock_holder() {
  "${sudo_cmd[@]}" lslocks -n -o PID,COMMAND,PATH 2>/dev/null |
    awk '$3 ~ /^\/var\/lib\/dpkg\/lock(-frontend)?$|^\/var\/lib\/apt\/lists\/lock$|^\/var\/cache\/apt\/archives\/lock$/ {
      held = held (held ? ", " : "") "process " $1 " (" $2 ") holds " $3 } END { if (held) print held }' || true
}

# apt-get that waits for the locks: dpkg's through DPkg::Lock::Timeout; the package lists' (which
# apt-get update takes and that option does not cover) by retrying while apt reports a held lock.
apt_get() {
  local deadline=$((SECONDS + lock_timeout)) told="" status holder errors left
  errors="$(mktemp)"
  while true; do
    left=$((deadline > SECONDS ? deadline - SECONDS : 0))
    holder="$(lock_holder)"
    if [ -n "$holder" ] && [ -z "$told" ]; then
      echo "system-packages: another package manager is running: $holder;" \
        "waiting up to ${lock_timeout}s for it to finish (REWARDKIT_APT_LOCK_TIMEOUT)" >&2
      told=1
    fi
    status=0
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout="$left" "$@" 2>"$errors" || status=$?
    if [ "$status" -ne 0 ] && grep -q "Could not get lock" "$errors" && [ "$SECONDS" -lt "$deadline" ]; then
      if [ -z "$told" ]; then
        echo "system-packages: $(grep -m1 'Could not get lock' "$errors" | sed 's/^E: //')" \
          "Waiting up to ${lock_timeout}s for it (REWARDKIT_APT_LOCK_TIMEOUT)" >&2
        told=1
      fi
      sleep 5
      continue
    fi
    cat "$errors" >&2
    if [ "$status" -ne 0 ] && grep -q "Could not get lock" "$errors"; then
      echo "system-packages: gave up after waiting ${lock_timeout}s for apt/dpkg's lock" \
        "(REWARDKIT_APT_LOCK_TIMEOUT sets the wait)" >&2
    fi
    rm -f "$errors"
    return "$status"
  done
}

if [ ${#needed[@]} -gt 0 ]; then
  echo "system-packages: installing ${needed[*]} (apt-get waits up to ${lock_timeout}s" \
    "for another apt or dpkg to finish)" >&2
  apt_get update -qq
  apt_get install -y -qq "${needed[@]}"
fi
