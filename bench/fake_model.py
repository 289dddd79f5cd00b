#!/usr/bin/env python3
# bench/fake_model.py PORTFILE: a scripted OpenAI-compatible chat-completions server on
# loopback for make bench's txbox agent section.  It never runs anything itself.  Stateless:
# the task (the first user message) says "run N" or "noop N"; while the request holds fewer
# than N tool results, the answer is one more tool call (run_command of `true`, or of a tool
# that does not exist, which the agent answers without running anything), then a final
# answer.  Writes its port to PORTFILE once it listens.
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        messages = body.get("messages", [])
        task = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        kind, _, n = task.partition(" ")
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < int(n or 0):
            if kind == "run":
                call = {"name": "run_command", "arguments": json.dumps({"command": "true"})}
            else:
                call = {"name": "noop", "arguments": "{}"}
            message = {"role": "assistant", "content": None,
                       "tool_calls": [{"id": "c%d" % done, "type": "function", "function": call}]}
            reason = "tool_calls"
        else:
            message = {"role": "assistant", "content": "done"}
            reason = "stop"
        out = json.dumps({"choices": [{"index": 0, "finish_reason": reason, "message": message}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
