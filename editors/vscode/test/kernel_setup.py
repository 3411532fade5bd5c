"""Replays a notebook's executed cells in a running kernel, as if the user had run them.

Usage: /usr/bin/python3 kernel_setup.py CONNECTION_FILE NOTEBOOK.ipynb
       /usr/bin/python3 kernel_setup.py --write CONNECTION_FILE

--write creates a connection file on 127.0.0.1 with free ports and a fresh key before the
kernel starts (ipykernel_launcher -f FILE then uses it), so nothing has to wait for the kernel
to write one.

Runs every code cell that carries an execution_count, in execution-count order, with
store_history=True (so the kernel's In/Out and execution count look like a real session), and
exits non-zero if any of them fails. Uses Debian's jupyter_client.
"""
import json
import sys

from jupyter_client import BlockingKernelClient


def wait_ready(kc, timeout):
    """Waits for the kernel's kernel_info reply on the shell channel.

    jupyter_client's wait_for_ready also polls the heartbeat, which on a loaded machine can
    report a starting kernel as dead; a kernel_info round trip is the real readiness signal.
    ZeroMQ queues the request until the kernel binds its sockets.
    """
    import queue
    import time
    deadline = time.monotonic() + timeout
    msg_id = kc.kernel_info()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"kernel did not answer kernel_info within {timeout} s")
        try:
            msg = kc.get_shell_msg(timeout=left)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            break
    # Drain iopub so execute_interactive starts clean.
    while True:
        try:
            kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            return


def main() -> int:
    if sys.argv[1] == "--write":
        import uuid
        from jupyter_client.connect import write_connection_file
        write_connection_file(sys.argv[2], ip="127.0.0.1", transport="tcp",
                              key=uuid.uuid4().hex.encode(), kernel_name="python3")
        return 0
    conn_file, nb_path = sys.argv[1], sys.argv[2]
    with open(nb_path, encoding="utf-8") as f:
        nb = json.load(f)
    cells = [c for c in nb["cells"] if c["cell_type"] == "code" and c.get("execution_count")]
    cells.sort(key=lambda c: c["execution_count"])

    kc = BlockingKernelClient(connection_file=conn_file)
    kc.load_connection_file()
    kc.start_channels()
    try:
        wait_ready(kc, 60)
        for cell in cells:
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            reply = kc.execute_interactive(src, store_history=True, timeout=120,
                                           output_hook=lambda msg: None)
            content = reply["content"]
            if content["status"] != "ok":
                print(f"kernel_setup: cell {cell['execution_count']} failed: "
                      f"{content.get('ename')}: {content.get('evalue')}", file=sys.stderr)
                return 1
        # Confirms the state the test relies on, from inside the kernel.
        check = "print(sorted(df.columns), type(model).__name__, tuple(lin.weight.shape))"
        out = []
        kc.execute_interactive(check, store_history=False, silent=False, timeout=60,
                               output_hook=lambda m: out.append(m["content"].get("text", ""))
                               if m["msg_type"] == "stream" else None)
        print("kernel_setup: ready:", "".join(out).strip())
    finally:
        kc.stop_channels()
    return 0


if __name__ == "__main__":
    sys.exit(main())
