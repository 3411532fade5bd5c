#!/usr/bin/env bash
# build-vsix.sh builds the premortem VS Code extension for linux-x64: installs its npm
# dependencies from package-lock.json (when missing or stale), builds the Go server into
# bin/linux-x64/premortem, bundles the TypeScript with esbuild and packages it with vsce.
#
# Usage: editors/vscode/build-vsix.sh
#   Prints the path of the .vsix on stdout (progress goes to stderr).
set -euo pipefail

ext_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$ext_dir/../.." && pwd)"
cd "$ext_dir"

# npm ci only when the lock file changed since the last install (node_modules keeps a copy).
# --ignore-scripts: nothing here needs an install script (esbuild finds its binary in the
# @esbuild/linux-x64 package; keytar and vsce-sign are only for publishing), and keytar's
# would try to download a prebuilt binary from outside npm.
if ! cmp -s package-lock.json node_modules/.package-lock.json.premortem 2>/dev/null; then
	npm ci --ignore-scripts --no-audit --no-fund >&2
	cp package-lock.json node_modules/.package-lock.json.premortem
fi

version="$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)"
(cd "$root" && CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -trimpath \
	-ldflags "-s -w -X main.version=$version" -o "$ext_dir/bin/linux-x64/premortem" ./cmd/premortem) >&2

npx tsc --noEmit -p . >&2
npm run --silent test:unit >&2
node esbuild.mjs --production >&2
# The project's licence ships in the .vsix (vsce refuses to package without one).
cp "$root/LICENSE" "$ext_dir/LICENSE"
out="$ext_dir/premortem-linux-x64.vsix"
rm -f "$out"
npx vsce package --target linux-x64 --no-dependencies -o "$out" >&2
echo "$out"
