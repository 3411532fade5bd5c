#!/usr/bin/env bash
# e2e.sh proves the whole chain in a real editor: a real ipykernel with set-up state, VS Code
# (code-server) with the premortem .vsix installed, driven by headless Chromium through
# playwright-core. It asserts squiggles on the right cells, the Problems panel, a hover and a
# quick fix, saves screenshots in editors/vscode/test/artifacts/ and times the first squiggle.
#
# Usage: editors/vscode/test/e2e.sh [--vsix FILE] [--no-kernel]
#   Without --vsix it builds one with editors/vscode/build-vsix.sh.
#   --no-kernel starts no kernel: only the static layer can work, the runtime assertions are
#   skipped and the status bar must say "no kernel".
# Environment:
#   PREMORTEM_E2E_ARTIFACTS  where screenshots and logs go (default editors/vscode/test/artifacts)
#   PREMORTEM_E2E_TRACE      "messages" or "verbose" to log LSP traffic into logs/*premortem*.log
#   PREMORTEM_E2E_ONLY       "static" to require only the static assertions (runtime ones are
#                            still run and reported)
# Exit status: 0 when every required assertion passed, 1 when one failed, 2 on set-up errors.
#
# Everything listens on 127.0.0.1 only; every process started here (kernel, code-server and
# the server it spawns, Chromium) is killed on exit, also on failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ext_dir="$(dirname "$here")"
root="$(cd "$ext_dir/../.." && pwd)"
artifacts="${PREMORTEM_E2E_ARTIFACTS:-$here/artifacts}"
python=/usr/bin/python3
notebook_src="$root/testdata/e2e/crashes.ipynb"

vsix=""
no_kernel=0
while (($#)); do
	case "$1" in
	--no-kernel)
		no_kernel=1
		shift
		;;
	--vsix)
		vsix="$(realpath "$2")"
		shift 2
		;;
	*)
		echo "usage: $0 [--vsix FILE] [--no-kernel]" >&2
		exit 2
		;;
	esac
done

log() { printf 'e2e: %s\n' "$*" >&2; }

if ! "$python" -c 'import ipykernel, jupyter_client, pandas, sklearn, torch' 2>/dev/null; then
	log "$python lacks ipykernel/jupyter_client/pandas/sklearn/torch; cannot run the end-to-end test"
	exit 2
fi

code_server="$("$root/scripts/install-code-server.sh")"
if [[ -z "$vsix" ]]; then
	vsix="$("$ext_dir/build-vsix.sh")"
fi
# playwright-core is a devDependency of the extension.
if [[ ! -d "$ext_dir/node_modules/playwright-core" ]]; then
	(cd "$ext_dir" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi

tmp="$(mktemp -d /tmp/premortem-e2e.XXXXXX)"
pgids=()
cleanup() {
	local rc=$?
	for pg in "${pgids[@]}"; do
		kill -TERM -- "-$pg" 2>/dev/null || true
	done
	# Give them a moment to exit, then make sure.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		local alive=0
		for pg in "${pgids[@]}"; do
			if kill -0 -- "-$pg" 2>/dev/null; then alive=1; fi
		done
		((alive)) || break
		sleep 0.3
	done
	for pg in "${pgids[@]}"; do
		kill -KILL -- "-$pg" 2>/dev/null || true
	done
	mkdir -p "$artifacts/logs"
	cp "$tmp"/*.log "$artifacts/logs/" 2>/dev/null || true
	# The extension's output channel (the server's stderr) as code-server saved it.
	find "$tmp/ud/logs" -name '*premortem*.log' -exec cp {} "$artifacts/logs/" \; 2>/dev/null || true
	find "$tmp/ud/logs" -name 'exthost.log' -exec cp {} "$artifacts/logs/" \; 2>/dev/null || true
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$artifacts"
mkdir -p "$artifacts" "$tmp/ws" "$tmp/runtime" "$tmp/ud/User" "$tmp/ext"
export JUPYTER_RUNTIME_DIR="$tmp/runtime"

# --- the kernel ---------------------------------------------------------------------------
cp "$notebook_src" "$tmp/ws/crashes.ipynb"
cp "$root/testdata/e2e/percent.py" "$tmp/ws/percent.py"
conn=""
if ((!no_kernel)); then
	conn="$tmp/runtime/kernel-e2e.json"
	"$python" "$here/kernel_setup.py" --write "$conn"
	setsid "$python" -m ipykernel_launcher -f "$conn" >"$tmp/kernel.log" 2>&1 &
	pgids+=($!)
	"$python" "$here/kernel_setup.py" "$conn" "$tmp/ws/crashes.ipynb" >&2
fi

# --- code-server ----------------------------------------------------------------------------
cat >"$tmp/ud/User/settings.json" <<EOF
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "editor.hover.delay": 200,
  "notebook.lineNumbers": "on",
  "premortem.kernel.connectionFile": "$conn",
  "premortem.kernel.autoAttach": $( ((no_kernel)) && echo false || echo true),
  "remote.autoForwardPorts": false,
  "premortem.trace.server": "${PREMORTEM_E2E_TRACE:-off}"
}
EOF
cs() {
	node "$code_server" --config "$tmp/config.yaml" --user-data-dir "$tmp/ud" --extensions-dir "$tmp/ext" "$@"
}
echo "bind-addr: 127.0.0.1:0" >"$tmp/config.yaml"
cs --install-extension "$vsix" >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log" >&2
	exit 2
}
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
setsid node "$code_server" --config "$tmp/config.yaml" --user-data-dir "$tmp/ud" --extensions-dir "$tmp/ext" \
	--auth none --bind-addr "127.0.0.1:$port" --disable-telemetry --disable-update-check \
	--disable-workspace-trust --disable-getting-started-override "$tmp/ws" >"$tmp/code-server.log" 2>&1 &
pgids+=($!)
deadline=$((SECONDS + 60))
until curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; do
	if ((SECONDS > deadline)) || ! kill -0 "${pgids[-1]}" 2>/dev/null; then
		log "code-server did not come up:"
		cat "$tmp/code-server.log" >&2
		exit 2
	fi
	sleep 0.2
done
log "code-server on 127.0.0.1:$port, kernel ${conn:-none}"

# --- the browser test -------------------------------------------------------------------------
set +e
setsid node "$here/e2e.mjs" \
	--url "http://127.0.0.1:$port/?folder=$tmp/ws" \
	--notebook crashes.ipynb \
	--artifacts "$artifacts" \
	--settings "$tmp/ws/.vscode/settings.json" \
	--only "${PREMORTEM_E2E_ONLY:-all}" \
	$( ((no_kernel)) && echo --no-kernel) &
test_pid=$!
pgids+=("$test_pid")
wait "$test_pid"
rc=$?
set -e
exit "$rc"
