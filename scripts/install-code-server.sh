#!/usr/bin/env bash
# install-code-server.sh installs what premortem's VS Code end-to-end test needs: Debian's
# chromium and ripgrep, the headers code-server's native modules build against, node-gyp, and
# code-server itself (from npm, pinned by scripts/code-server/package-lock.json).
#
# Usage: scripts/install-code-server.sh
#   Prints the path of the code-server executable on stdout (progress goes to stderr).
#
# Idempotent and cached: code-server is built once per version and Node major under
#   ${PREMORTEM_CACHE:-$HOME/.cache/premortem}/code-server/<version>-node<major>/
# and a later run only checks that it is there (a second or so). Debian packages are installed
# only when missing, so apt-get update runs only on a fresh machine.
#
# It downloads only from Debian's apt and the npm registry: install scripts are skipped
# (npm --ignore-scripts) because @vscode/ripgrep's postinstall downloads a binary from GitHub;
# Debian's rg is copied in its place and the native modules are rebuilt locally.
#
# Must run as root on Debian 12 with Node 20 and npm (code-server 4.100.3 needs Node 20;
# later code-server versions need Node 24).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pin_dir="$here/code-server"
version="$(node -p "require('$pin_dir/package.json').dependencies['code-server']")"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
cache_root="${PREMORTEM_CACHE:-${HOME:-/root}/.cache/premortem}/code-server"
dest="$cache_root/$version-node$node_major"
bin="$dest/node_modules/code-server/out/node/entry.js"

log() { printf 'install-code-server: %s\n' "$*" >&2; }

if [[ "$node_major" != 20 ]]; then
	log "code-server $version needs Node 20; this is Node $(node --version). Install Node 20 first."
	exit 2
fi

# --- Debian packages -------------------------------------------------------------------------
apt_packages=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
	build-essential python3 pkg-config)
missing=()
for p in "${apt_packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	if [[ "$(id -u)" != 0 ]]; then
		log "missing Debian packages (${missing[*]}) and not root: run as root or install them."
		exit 2
	fi
	log "apt-get install ${missing[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# --- node-gyp (code-server's native modules are rebuilt with it) -----------------------------
if ! command -v node-gyp >/dev/null 2>&1; then
	log "npm install -g node-gyp"
	npm install -g --no-audit --no-fund node-gyp >&2
fi

# --- code-server -----------------------------------------------------------------------------
if [[ -f "$dest/.complete" && -f "$bin" ]] && cmp -s "$pin_dir/package-lock.json" "$dest/package-lock.json"; then
	log "code-server $version cached in $dest"
	echo "$bin"
	exit 0
fi

log "building code-server $version into $dest"
mkdir -p "$cache_root"
work="$(mktemp -d "$cache_root/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$pin_dir/package.json" "$pin_dir/package-lock.json" "$work/"

(
	cd "$work"
	# Skips code-server's postinstall.sh: its steps are done one by one below so that no
	# install script downloads anything.
	npm ci --ignore-scripts --no-audit --no-fund >&2

	cd node_modules/code-server/lib/vscode
	# VS Code's npm-shrinkwrap.json is slightly out of sync with its package.json, so npm ci
	# refuses it; npm install still follows the shrinkwrap for everything it lists.
	npm install --omit=dev --ignore-scripts --no-audit --no-fund >&2
	mkdir -p node_modules/@vscode/ripgrep/bin
	cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
	# Rebuilds node-pty, spdlog, kerberos, native-watchdog and friends against this Node.
	# @vscode/ripgrep's postinstall sees bin/rg and downloads nothing.
	npm_config_yes=true npm rebuild >&2
	ln -sfn node_modules node_modules.asar
	# The two bin/ symlinks code-server's postinstall.sh makes.
	(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
	(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
	(cd extensions && npm install --omit=dev --no-audit --no-fund >&2)

	cd "$work"
	npm rebuild argon2 >&2
)

# Smoke test before publishing the cache entry.
"$work/node_modules/code-server/out/node/entry.js" --version >&2
touch "$work/.complete"
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
log "code-server $version ready"
echo "$bin"
