#!/usr/bin/env python3
"""A small pipelined HTTP/1.1 client for the benchmarks' set-up (bench/waitlist.py, bench/job.py):
tens of thousands of joins, holds or bookings in seconds where one request at a time through
http.client takes minutes. Standard library only; answers must carry Content-Length (the
server's always do)."""

import json
import socket
import threading

HEADER_BYTES_MAX = 65536  # an answer's head this client reads before giving up


class Pipe:
    """One keep-alive HTTP/1.1 connection that sends requests in batches and reads their
    answers in order (the server answers pipelined requests in order)."""

    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def close(self):
        self.socket.close()

    def send(self, requests):
        """requests: [(method, path, body or None)] -> [(status, parsed JSON or None)]."""
        data = []
        for method, path, body in requests:
            payload = b"" if body is None else json.dumps(body).encode()
            head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n" % (
                method, path, len(payload))
            if body is not None:
                head += "Content-Type: application/json\r\n"
            data.append(head.encode() + b"\r\n" + payload)
        self.socket.sendall(b"".join(data))
        return [self.answer() for _ in requests]

    def answer(self):
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > HEADER_BYTES_MAX:
                raise RuntimeError("pipelined: an answer's head longer than %d bytes" % HEADER_BYTES_MAX)
            self.read()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length is None:
            raise RuntimeError("pipelined: an answer without Content-Length: %r" % lines[0])
        while len(self.buffer) < length:
            self.read()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        try:
            return status, json.loads(body) if body else None
        except ValueError:
            return status, body

    def read(self):
        chunk = self.socket.recv(1 << 16)
        if not chunk:
            raise RuntimeError("pipelined: the server closed the connection")
        self.buffer += chunk


def pipelined(port, make, count, connections=4, depth=16):
    """make(i) -> (method, path, body) for i in range(count), over CONNECTIONS connections
    with DEPTH in flight each; make is called just before its batch is sent (a ttl aimed at
    an instant is computed then). Returns the answers in order of i."""
    answers = [None] * count
    errors = []

    def worker(first):
        pipe = Pipe(port)
        try:
            for start in range(first * depth, count, connections * depth):
                batch = list(range(start, min(start + depth, count)))
                for i, answer in zip(batch, pipe.send([make(i) for i in batch])):
                    answers[i] = answer
        except Exception as error:  # reported by the caller, the whole run fails
            errors.append(error)
        finally:
            pipe.close()

    threads = [threading.Thread(target=worker, args=(c,)) for c in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return answers
