#!/usr/bin/env bash
# Install code-server (a real VS Code workbench, from the npm registry) for the
# extension's end-to-end test, into a cache directory outside the repository.
#
# Idempotent: a second run with the same version finds the install and exits.
# Works offline apart from the npm registry: @vscode/ripgrep's postinstall
# would download rg from GitHub, so its download cache is seeded with a tarball
# holding Debian's /usr/bin/rg first.
#
# Usage: install-code-server.sh [PREFIX]
#   PREFIX defaults to $REWARDKIT_E2E_CACHE or ~/.cache/rewardkit-e2e.
# Prints the path of the code-server executable on its last line.
# Needs: Node 20 (code-server 4.100.x requires exactly that major), npm,
# and the Debian packages libkrb5-dev (a native module builds against it)
# and ripgrep (installed here with apt-get when missing and running as root).
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.100.3}"
PREFIX="${1:-${REWARDKIT_E2E_CACHE:-$HOME/.cache/rewardkit-e2e}}"
INSTALL_DIR="$PREFIX/code-server-$CODE_SERVER_VERSION"
EXECUTABLE="$INSTALL_DIR/node_modules/.bin/code-server"
MARKER="$INSTALL_DIR/.installed"

log() { printf 'install-code-server: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ -f "$MARKER" && -x "$EXECUTABLE" ]]; then
    log "code-server $CODE_SERVER_VERSION already installed in $INSTALL_DIR"
    echo "$EXECUTABLE"
    exit 0
fi

command -v node >/dev/null || die "node is not on PATH (code-server $CODE_SERVER_VERSION needs Node 20)"
command -v npm >/dev/null || die "npm is not on PATH"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[[ "$node_major" == "20" ]] || die "code-server $CODE_SERVER_VERSION needs Node 20, found $(node --version)"

missing_debs=()
command -v rg >/dev/null || missing_debs+=(ripgrep)
[[ -f /usr/include/krb5.h || -f /usr/include/krb5/krb5.h ]] || missing_debs+=(libkrb5-dev)
if ((${#missing_debs[@]})); then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
        log "installing Debian packages: ${missing_debs[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y "${missing_debs[@]}" >&2 \
            || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing_debs[@]}" >&2; }
    else
        die "missing Debian packages: ${missing_debs[*]} (apt-get install -y ${missing_debs[*]})"
    fi
fi
RG="$(command -v rg)"

mkdir -p "$INSTALL_DIR"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Fetch the package once; read the pinned @vscode/ripgrep version from its shrinkwrap.
log "fetching code-server@$CODE_SERVER_VERSION"
tarball="$(cd "$work" && npm pack --silent "code-server@$CODE_SERVER_VERSION" | tail -n 1)"
tar -xzf "$work/$tarball" -C "$work" package/lib/vscode/npm-shrinkwrap.json
ripgrep_version="$(node -e '
    const lock = require(process.argv[1]);
    const entry = lock.packages && lock.packages["node_modules/@vscode/ripgrep"];
    if (!entry) { process.exit(1); }
    console.log(entry.version);
' "$work/package/lib/vscode/npm-shrinkwrap.json")" || die "no @vscode/ripgrep in code-server's shrinkwrap"

# The asset name @vscode/ripgrep's postinstall builds: ripgrep-<VERSION>-<target>.tar.gz.
ripgrep_tarball="$(cd "$work" && npm pack --silent "@vscode/ripgrep@$ripgrep_version" | tail -n 1)"
tar -xzf "$work/$ripgrep_tarball" -C "$work" package/lib/postinstall.js
rg_release="$(sed -n "s/^const VERSION = '\(.*\)';/\1/p" "$work/package/lib/postinstall.js")"
[[ -n "$rg_release" ]] || die "cannot read the ripgrep release from @vscode/ripgrep@$ripgrep_version"
case "$(uname -m)" in
    x86_64) rg_target=x86_64-unknown-linux-musl ;;
    aarch64) rg_target=aarch64-unknown-linux-musl ;;
    *) die "unsupported machine $(uname -m)" ;;
esac
tmp_root="${TMPDIR:-/tmp}"
cache_dir="$tmp_root/vscode-ripgrep-cache-$ripgrep_version"
mkdir -p "$cache_dir" "$work/rg"
cp "$RG" "$work/rg/rg"
tar -czf "$cache_dir/ripgrep-$rg_release-$rg_target.tar.gz" -C "$work/rg" rg
log "seeded $cache_dir with Debian's rg"

# code-server's postinstall refuses to run as root unless npm_config_unsafe_perm=true is in its
# environment, but npm 7+ has no such setting and warns 'Unknown env config "unsafe-perm"' when
# it is given one. So npm itself does not get it: the shell npm runs install scripts with
# (script-shell, a setting npm knows) sets it for the scripts alone.
script_shell="$work/script-shell"
cat > "$script_shell" <<'EOF'
#!/bin/sh
npm_config_unsafe_perm=true exec /bin/sh "$@"
EOF
chmod +x "$script_shell"

# Install by name (npm pack above left the tarball in npm's cache: no second download), so that
# allowScripts can approve, by name and version, the two install scripts code-server needs: its
# postinstall and argon2's native build, which npm 11.19+ otherwise lists as unreviewed (a
# warning, later an error). yes=true overrides a ~/.npmrc that says yes=false.
log "installing code-server into $INSTALL_DIR (about a minute)"
(
    cd "$INSTALL_DIR"
    cat > package.json <<EOF
{
  "name": "rewardkit-e2e-code-server",
  "private": true,
  "allowScripts": { "code-server@$CODE_SERVER_VERSION": true, "argon2": true }
}
EOF
    npm_config_script_shell="$script_shell" npm_config_yes=true \
        npm install --no-audit --no-fund --no-save "code-server@$CODE_SERVER_VERSION" >&2
)
[[ -x "$EXECUTABLE" ]] || die "npm install finished but $EXECUTABLE is missing"
XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" "$EXECUTABLE" --version >&2 || die "the installed code-server does not run"
touch "$MARKER"
log "installed code-server $CODE_SERVER_VERSION"
echo "$EXECUTABLE"
