# Generates golden_messages.json: wire frames signed by jupyter_client's Session, so the Go
# decoder is checked against the reference implementation. Run once with
#   /usr/bin/python3 gen_golden.py > golden_messages.json
import base64
import json

from jupyter_client.session import Session

out = {"cases": []}
for scheme, key in (("hmac-sha256", "6a7e3f0c-golden-key"), ("hmac-sha512", "another key"), ("hmac-sha256", "")):
    s = Session(key=key.encode(), signature_scheme=scheme, username="golden", session="golden-session")
    parent = s.msg("execute_request", {"code": "1+1", "silent": False})
    for msg_type, content in (
        ("status", {"execution_state": "busy"}),
        ("execute_reply", {"status": "ok", "execution_count": 3, "user_expressions": {"r": {"status": "ok", "data": {"text/plain": "{\"a\": \"é\"}"}, "metadata": {}}}}),
        ("stream", {"name": "stdout", "text": "héllo ✓\n"}),
    ):
        msg = s.msg(msg_type, content, parent=parent)
        frames = s.serialize(msg, ident=[b"topic." + msg_type.encode()])
        out["cases"].append({
            "scheme": scheme,
            "key": key,
            "msg_type": msg_type,
            "msg_id": msg["header"]["msg_id"],
            "parent_msg_id": parent["header"]["msg_id"],
            "frames": [base64.b64encode(f).decode() for f in frames],
        })
print(json.dumps(out, indent=1))
