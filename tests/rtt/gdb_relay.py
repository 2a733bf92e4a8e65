"""A TCP relay between rtt-capture and a real GDB server (QEMU's gdbstub) that acts at the
moment the target is halted for a poll: once armed, the first memory read (`$m`) rtt-capture
sends, which an all-stop server answers only with the target halted, calls `on_read` before
the read goes on to the server (a signal sent then lands mid-poll, the target halted). With
`refuse_write_at` (b"M2000040c,"), the next memory write there (the RdOff that gives a ring
back) never reaches the server: the relay answers it `E01`, as a server refusing it would.
The relay records every packet rtt-capture sent (`sent`), so a test can see it resume (`c`)
or detach (`D`). When rtt-capture goes, the relay keeps its connection to the server open
until release(): QEMU resumes a target whose client disconnects, OpenOCD does not; held open,
QEMU shows (its monitor's `info status`) what rtt-capture itself left behind."""
import socket
import threading


def frame(payload):
    return b"$" + payload + b"#" + f"{sum(payload) % 256:02x}".encode()


def close(connection):
    """shutdown() first: it wakes the other pump's recv() and the peer sees the end (close()
    alone leaves the connection open while a thread waits in it: QEMU would keep serving a
    client that is gone, and answer no other)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    connection.close()


class GdbRelay:
    def __init__(self, server_port):
        self.server_port = server_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.on_read = None  # armed: called once, at the next `m`
        self.fired = threading.Event()
        self.refuse_write_at = None  # b"M<hex address>,": the next write there is answered E01
        self.refused = threading.Event()
        self.sent = []  # rtt-capture's packets, in order
        self.lock = threading.Lock()
        self.server = None
        threading.Thread(target=self.serve, daemon=True).start()

    def release(self):
        """Lets go of the server (rtt-capture has gone)."""
        if self.server:
            close(self.server)

    def arm(self, on_read):
        with self.lock:
            self.on_read = on_read

    def serve(self):
        client, _ = self.listener.accept()
        server = self.server = socket.create_connection(("127.0.0.1", self.server_port))
        threading.Thread(target=self.pump_to_server, args=(client, server), daemon=True).start()
        self.pump_to_client(server, client)

    def pump_to_server(self, client, server):
        buffered = b""
        try:
            while data := client.recv(65536):
                buffered += data
                while (start := buffered.find(b"$")) >= 0:
                    end = buffered.find(b"#", start)
                    if end < 0 or len(buffered) < end + 3:
                        break
                    raw = buffered[start:end + 3]
                    if self.packet(raw[1:-3]) == "refuse":
                        data = data.replace(raw, b"")  # the server never sees it
                        client.sendall(b"+" + frame(b"E01"))
                    buffered = buffered[end + 3:]
                if b"$" not in buffered:
                    buffered = b""
                server.sendall(data)  # after packet(): an armed action happens before the server sees the read
        except OSError:
            pass

    def packet(self, payload):
        self.sent.append(payload)
        if self.refuse_write_at and payload.startswith(self.refuse_write_at):
            self.refuse_write_at = None
            self.refused.set()
            return "refuse"
        if payload.startswith(b"m"):
            with self.lock:
                act, self.on_read = self.on_read, None
            if act:
                act()
                self.fired.set()
        return "forward"

    def pump_to_client(self, server, client):
        try:
            while data := server.recv(65536):
                client.sendall(data)
        except OSError:
            pass
        finally:
            close(client)
