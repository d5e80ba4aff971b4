"""receiver.py: a minimal complybox webhook receiver on the standard library.

It verifies X-Webhook-Signature (hex HMAC-SHA256 of the raw body, keyed
with the signing secret's UTF-8 bytes) before parsing, answers 401 on a
mismatch, deduplicates on the envelope's id (deliveries are at least once)
and answers 204 at once, handling the event afterwards.

    WEBHOOK_SECRET=... python3 receiver.py   # listens on 127.0.0.1:9000; PORT to change
"""
import hashlib
import hmac
import json
import os
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode("utf-8")
seen = set()  # a real receiver keeps this in its database
lock = threading.Lock()
work = queue.Queue()


def worker():
    while True:
        event = work.get()
        print("received", event["id"], event["eventType"], event["entityId"], flush=True)  # handle it here


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), self.headers.get("X-Webhook-Signature", "").encode("utf-8")):
            self.send_response(401)
            self.end_headers()
            return
        try:
            event = json.loads(body)
            event_id = event["id"]
        except (ValueError, KeyError, TypeError):
            self.send_response(400)
            self.end_headers()
            return
        with lock:
            duplicate = event_id in seen
            seen.add(event_id)
        if duplicate:
            print("duplicate", event_id, flush=True)
        else:
            work.put(event)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    threading.Thread(target=worker, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "9000"))), Receiver)
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()
