# The keep-alive client bench/instructions.sh and bench/syscalls.sh count requests with. Sourced, never run.

# count_requests PROXY_PORT PATH N [intercept|intercept-new]: N GETs on one keep-alive connection, each a 200:
# absolute-form to the HTTP origin (ORIGIN_PORT), or (intercept) inside one CONNECT to the HTTPS origin with TLS
# to the proxy's minted certificate, checked against its CA; or (intercept-new) each on a connection of its own.
count_requests() {
    python3 - "$@" <<'PY'
import http.client, os, ssl, sys
port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
mode = sys.argv[4] if len(sys.argv) > 4 else "plain"

class ResumingConnection(http.client.HTTPSConnection):
    """Offers the TLS session the last connection was given (its ticket), as a client that
    keeps a session cache does; `session` is None until a first connection has one."""
    session = None

    def connect(self):
        http.client.HTTPConnection.connect(self)   # TCP, and the CONNECT when tunnelled
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self._tunnel_host or self.host,
                                              session=ResumingConnection.session)

# One context for every connection: a session resumes only through the context it came from.
if mode != "plain":
    context = ssl.create_default_context(cafile=os.environ["WORK"] + ("/terminate.pem" if mode.startswith("terminate") else "/countersign-ca/ca.pem"))
    context.check_hostname = False

def connect():
    if mode == "plain":
        return http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    if mode.startswith("terminate"):
        return ResumingConnection("127.0.0.1", int(os.environ["PROXY_TERMINATE_PORT"]), timeout=30, context=context)
    tunnelled = ResumingConnection("127.0.0.1", port, timeout=30, context=context)
    tunnelled.set_tunnel("127.0.0.1", int(os.environ["UP_HTTPS_PORT"]))
    return tunnelled

url = "http://127.0.0.1:%s%s" % (os.environ["ORIGIN_PORT"], path) if mode == "plain" else path
connection = connect()
resumed = 0
for _ in range(n):
    if mode.endswith("-new") or mode.endswith("-resumed"):
        connection.close()
        connection = connect()
    connection.request("GET", url)
    response = connection.getresponse()
    if mode.endswith("-resumed"):   # the ticket came before the response (kept before a close)
        resumed += connection.sock.session_reused
        ResumingConnection.session = connection.sock.session
    response.read()
    if response.status != 200:
        sys.exit("%s answered %d" % (url, response.status))
if mode.endswith("-resumed") and resumed < n - 1:
    sys.exit("only %d of %d connections resumed their TLS session" % (resumed, n))
PY
}
