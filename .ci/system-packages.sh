#!/usr/bin/env bash
# System packages the test suite drives for real: Chromium (HTML report, VS Code workbench),
# Neovim (a real LSP client), ripgrep and libkrb5-dev (code-server's install), git.
# Installs only what is missing; needs root (or sudo) when something is.
set -euo pipefail
needed=()
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v nvim >/dev/null 2>&1 || needed+=(neovim)
command -v rg >/dev/null 2>&1 || needed+=(ripgrep)
command -v git >/dev/null 2>&1 || needed+=(git)
dpkg -s libkrb5-dev >/dev/null 2>&1 || needed+=(libkrb5-dev)
if [ ${#needed[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${needed[@]}"
fi
