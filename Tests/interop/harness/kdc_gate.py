"""A KDC outage on loopback: one port, UDP and TCP, in front of a real KDC (harness/kdc.py).
While `silent`, datagrams are read and dropped and connections accepted and held without a
byte in reply (a KDC that does not answer: what a Kerberos library waits longest on); after
`open()`, datagrams are relayed to the KDC and its answers back, and new connections are
spliced to the KDC's TCP port. Connections accepted while silent stay silent, as a real
outage leaves them. Counts what the Kerberos library sent, and is stopped by `stop()`."""
import select
import socket
import threading


class KDCGate:
    def __init__(self, kdc_port: int):
        self.kdc_port = kdc_port
        for _ in range(20):
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                tcp.bind(("127.0.0.1", port))
            except OSError:
                udp.close()
                tcp.close()
                continue
            tcp.listen(128)
            self.udp, self.tcp, self.port = udp, tcp, port
            break
        else:
            raise RuntimeError("no loopback port free on both UDP and TCP")
        self.silent = True
        self.datagrams = 0
        self.held = []
        self._lock = threading.Lock()
        self._stop = False
        self._threads = [threading.Thread(target=self._serve, daemon=True)]
        self._threads[0].start()

    @property
    def contacts(self) -> int:
        with self._lock:
            return self.datagrams + len(self.held)

    def open(self) -> None:
        """The KDC answers again from now on."""
        self.silent = False

    def krb5_conf(self, path, realm: str):
        path.write_text(f"""[libdefaults]
 default_realm = {realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
[realms]
 {realm} = {{
  kdc = 127.0.0.1:{self.port}
 }}
[domain_realm]
 localhost = {realm}
""")
        return path

    def _serve(self):
        while not self._stop:
            ready, _, _ = select.select([self.udp, self.tcp], [], [], 0.05)
            for sock in ready:
                if sock is self.udp:
                    data, client = self.udp.recvfrom(65536)
                    with self._lock:
                        self.datagrams += 1
                    if not self.silent:
                        self._spawn(self._relay_datagram, data, client)
                else:
                    connection, _ = self.tcp.accept()
                    if self.silent:
                        with self._lock:
                            self.held.append(connection)
                    else:
                        self._spawn(self._splice, connection)

    def _spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()

    def _relay_datagram(self, data: bytes, client):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as upstream:
            upstream.settimeout(5)
            upstream.sendto(data, ("127.0.0.1", self.kdc_port))
            try:
                answer, _ = upstream.recvfrom(65536)
            except OSError:
                return
            self.udp.sendto(answer, client)

    def _splice(self, connection):
        try:
            upstream = socket.create_connection(("127.0.0.1", self.kdc_port), timeout=5)
        except OSError:
            connection.close()
            return
        with connection, upstream:
            pair = {connection: upstream, upstream: connection}
            while not self._stop:
                ready, _, _ = select.select(list(pair), [], [], 0.2)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    pair[sock].sendall(data)

    def stop(self):
        self._stop = True
        self._threads[0].join(timeout=2)
        for sock in [self.udp, self.tcp, *self.held]:
            sock.close()
