#!/usr/bin/env python3
"""A Kindling client in Python, written from docs/protocol.md and docs/protocol.schema.json alone.

It speaks the wire protocol with nothing but the standard library and `msgpack` (Debian: python3-msgpack):

    kindling_client.py state kindling://host:7077
    kindling_client.py submit kindling://host:7077 /path/to/hello-driver.mjs [ARGS...]
    kindling_client.py fake-worker kindling://host:7077 [--heartbeats 3]

`state` prints the master's view of the cluster; `submit` runs a plain function module (an ES module whose
default export takes the arguments) as a driver on a worker and follows it until it ends (exit 0 only if
FINISHED); `fake-worker` registers a worker that offers nothing, heartbeats, and goes. With a shared secret
(`--secret`, or KINDLING_AUTHENTICATE_SECRET) every connection proves it first. CI runs it against a real master
and worker, so the docs it was written from are checked on every commit.
"""

import argparse
import hashlib
import hmac
import os
import socket
import struct
import sys
import time
import urllib.parse

import msgpack

PROTOCOL_VERSION = 1
MASTER = "Master"
# A driver's states after which nothing more happens to it (DriverState, "finished").
FINISHED_DRIVER_STATES = {"FINISHED", "RELAUNCHING", "KILLED", "FAILED", "ERROR"}
# The installation's entry for a plain function driver: `<workerUrl> <appPath> [args...]`.
DRIVER_WRAPPER = "@kindling/worker/DriverWrapper"


class RemoteError(Exception):
    """A `failure` or `reject` from the node: a map with `_tag` and the error's fields."""

    def __init__(self, error):
        self.error = error
        fields = ", ".join(f"{k}={v!r}" for k, v in error.items() if k != "_tag")
        super().__init__(f"{error.get('_tag')}: {fields}")


def parse_url(url):
    """kindling://host:port, the first master of a list."""
    if not url.startswith("kindling://"):
        raise SystemExit(f"not a kindling:// URL: {url}")
    first = url[len("kindling://"):].split(",")[0].strip("/")
    host, _, port = first.rpartition(":")
    return host.strip("[]"), int(port)


class Connection:
    """One control connection: handshake, then envelopes in frames (4-byte big-endian length + MessagePack)."""

    def __init__(self, host, port, secret=None, address=None, timeout=15.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.address = address
        self.next_id = 0
        self.inbox = []  # `send` envelopes that arrived while an ask waited
        self._handshake(secret)

    def close(self):
        self.sock.close()

    def _write(self, envelope):
        payload = msgpack.packb(envelope, use_bin_type=True)
        self.sock.sendall(struct.pack(">I", len(payload)) + payload)

    def _read_exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the node closed the connection")
            data += chunk
        return data

    def _read(self):
        """The next envelope other than a ping (a node pings a quiet connection; it needs no answer)."""
        while True:
            (size,) = struct.unpack(">I", self._read_exactly(4))
            envelope = msgpack.unpackb(self._read_exactly(size), raw=False)
            if envelope.get("_tag") == "reject":
                raise RemoteError(envelope["error"])
            if envelope.get("_tag") != "ping":
                return envelope

    def _expect(self, kind):
        envelope = self._read()
        if envelope.get("_tag") != kind:
            raise ConnectionError(f"expected {kind}, got {envelope!r}")
        return envelope

    def _handshake(self, secret):
        # The dialler speaks first; a nonce says it has a secret. HMAC keys and labels are UTF-8 bytes.
        client_nonce = os.urandom(32) if secret else None
        self._write({"_tag": "hello", "version": PROTOCOL_VERSION, "address": self.address, "nonce": client_nonce})
        if secret:
            key = secret.encode("utf-8")
            challenge = self._expect("challenge")
            server_nonce = challenge["nonce"]
            expected = hmac.new(key, b"kindling-server" + client_nonce + server_nonce, hashlib.sha256).digest()
            if not hmac.compare_digest(expected, challenge["proof"]):
                raise ConnectionError("the node does not know our secret")
            proof = hmac.new(key, b"kindling-client" + server_nonce + client_nonce, hashlib.sha256).digest()
            self._write({"_tag": "proof", "proof": proof})
        welcome = self._expect("welcome")
        if welcome["version"] != PROTOCOL_VERSION:
            raise ConnectionError(f"the node speaks protocol version {welcome['version']}")

    def ask(self, body, to=MASTER):
        """Sends an ask and waits for its reply body; a failure raises RemoteError."""
        self.next_id += 1
        ask_id = self.next_id
        self._write({"_tag": "ask", "id": ask_id, "from": self.address, "to": to, "body": body})
        while True:
            envelope = self._read()
            tag = envelope.get("_tag")
            if tag == "send":
                self.inbox.append(envelope)
            elif tag in ("reply", "failure") and envelope["id"] == ask_id:
                if tag == "failure":
                    raise RemoteError(envelope["error"])
                return envelope["body"]

    def send(self, body, to=MASTER):
        self._write({"_tag": "send", "from": self.address, "to": to, "body": body})

    def receive(self):
        """The next one-way message sent to this node."""
        if self.inbox:
            return self.inbox.pop(0)
        while True:
            envelope = self._read()
            if envelope.get("_tag") == "send":
                return envelope


def master_state(conn):
    return conn.ask({"_tag": "RequestMasterState"})


def print_state(state):
    workers = state["workers"]
    alive = sum(1 for w in workers if w["state"] == "ALIVE")
    print(f"master {state['host']}:{state['port']} {state['status']}: {len(workers)} workers ({alive} ALIVE), "
          f"{len(state['activeApps'])} active apps, {len(state['activeDrivers'])} active drivers, "
          f"{len(state['completedDrivers'])} completed drivers")
    for w in workers:
        print(f"  worker {w['id']} {w['state']}: {w['coresUsed']}/{w['cores']} cores, "
              f"{w['memoryUsed']}/{w['memory']} MB")


def command_state(args):
    conn = Connection(*parse_url(args.master), secret=args.secret)
    try:
        print_state(master_state(conn))
    finally:
        conn.close()
    return 0


def command_submit(args):
    app = args.app
    app_url = app if "://" in app else "file://" + urllib.parse.quote(os.path.abspath(app))
    description = {
        "appUrl": app_url,  # file: and http(s): URLs are fetched by the worker that launches the driver
        "mem": args.memory,  # MB
        "cores": args.cores,
        "supervise": False,
        "command": {
            "mainModule": DRIVER_WRAPPER,
            # The worker fills in the placeholders: its own URL, and the local path it fetched appUrl to.
            "arguments": ["{{WORKER_URL}}", "{{USER_JAR}}", *args.args],
            "environment": {},
            "nodeOptions": [],
        },
        "resourceReqs": [],
    }
    conn = Connection(*parse_url(args.master), secret=args.secret)
    try:
        response = conn.ask({"_tag": "RequestSubmitDriver", "driverDescription": description})
        if not response["success"]:
            print(f"submission refused: {response['message']}", file=sys.stderr)
            return 1
        driver_id = response["driverId"]
        print(f"submitted {driver_id}")
        deadline = time.monotonic() + args.wait
        last = None
        while time.monotonic() < deadline:
            status = conn.ask({"_tag": "RequestDriverStatus", "driverId": driver_id})
            state = status["state"]
            if state != last:
                where = f" on {status['workerHostPort']}" if status["workerHostPort"] else ""
                print(f"{driver_id} {state}{where}")
                last = state
            if state in FINISHED_DRIVER_STATES:
                if status["exception"]:
                    print(f"  {status['exception']['name']}: {status['exception']['message']}")
                return 0 if state == "FINISHED" else 1
            time.sleep(0.2)
        print(f"{driver_id} did not end within {args.wait} s", file=sys.stderr)
        return 1
    finally:
        conn.close()


def command_fake_worker(args):
    master_host, master_port = parse_url(args.master)
    # The worker's address is a port it owns. Its hello advertises it, so the master knows the connection as the
    # worker's: it answers on it, dials back only once it has closed, and drops the worker when it closes. (A
    # worker that outlives its connection must serve its address; this one goes with it, so it only holds it.)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    host, port = listener.getsockname()
    address = {"host": host, "port": port}
    worker_id = f"worker-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{host}-{port}"
    worker_ref = {"address": address, "name": "Worker"}
    conn = Connection(master_host, master_port, secret=args.secret, address=address)
    try:
        # Offers no cores and no memory, so the master never gives it work it cannot do.
        conn.send({
            "_tag": "RegisterWorker",
            "id": worker_id,
            "host": host,
            "port": port,
            "worker": worker_ref,
            "cores": 0,
            "memory": 0,  # MB
            "workerWebUiUrl": f"http://{host}:{port}",
            "masterAddress": {"host": master_host, "port": master_port},
            "resources": {},
        })
        answer = conn.receive()["body"]
        if answer["_tag"] != "RegisteredWorker":
            print(f"registration refused: {answer}", file=sys.stderr)
            return 1
        print(f"registered {worker_id} with {answer['master']['address']['host']}:"
              f"{answer['master']['address']['port']}")
        for n in range(args.heartbeats):
            time.sleep(args.interval)
            conn.send({"_tag": "Heartbeat", "workerId": worker_id, "worker": worker_ref})
            seen = next(w for w in master_state(conn)["workers"] if w["id"] == worker_id)
            print(f"heartbeat {n + 1}: the master sees {worker_id} {seen['state']}, "
                  f"last heartbeat at {seen['lastHeartbeat']} ms")
    finally:
        conn.close()
        listener.close()
    # Another connection, to see what the master made of the worker's leaving.
    time.sleep(0.5)
    observer = Connection(master_host, master_port, secret=args.secret)
    try:
        gone = [w["state"] for w in master_state(observer)["workers"] if w["id"] == worker_id]
        print(f"after disconnecting: {worker_id} {gone[0] if gone else 'removed'}")
    finally:
        observer.close()
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description="A Kindling client written from the protocol docs")
    parser.add_argument("--secret", default=os.environ.get("KINDLING_AUTHENTICATE_SECRET"),
                        help="the cluster's shared secret (default: $KINDLING_AUTHENTICATE_SECRET)")
    commands = parser.add_subparsers(dest="command", required=True)

    state = commands.add_parser("state", help="print the master's state")
    state.add_argument("master")
    state.set_defaults(run=command_state)

    submit = commands.add_parser("submit", help="run a plain function module as a driver and follow it")
    submit.add_argument("master")
    submit.add_argument("app", help="a path or a file:// or http(s):// URL of an ES module")
    submit.add_argument("args", nargs=argparse.REMAINDER)
    submit.add_argument("--memory", type=int, default=512, help="the driver's memory in MB")
    submit.add_argument("--cores", type=int, default=1)
    submit.add_argument("--wait", type=float, default=60, help="seconds to follow the driver")
    submit.set_defaults(run=command_submit)

    fake = commands.add_parser("fake-worker", help="register a worker that offers nothing and heartbeats")
    fake.add_argument("master")
    fake.add_argument("--heartbeats", type=int, default=3)
    fake.add_argument("--interval", type=float, default=1.0, help="seconds between heartbeats")
    fake.set_defaults(run=command_fake_worker)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (RemoteError, ConnectionError, OSError) as error:
        print(f"kindling_client: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
