import CountersignConfig
import CountersignHTTP
import CountersignInterception
import Foundation
import XCTest
@testable import CountersignProxy

/// `Routing.route` as a table: (request head, listener, tunnel it came inside, snapshot) to
/// forward / tunnel / intercept / refuse, with no socket.
final class RoutingTests: XCTestCase {
    private static let configText = """
    { listen: [
        { address: "127.0.0.1:3128" },
        { address: "127.0.0.1:3129", proxy_auth: { users: { app: { password_env: "APP_PASSWORD" } } } },
        { address: "127.0.0.1:8080", mode: "gateway", upstream: "https://api.example" },
      ],
      unlisted_hosts: "deny",
      interception: { ca_certificate: "ca.pem", ca_key: "ca.key" },
      hosts: {
        "api.example": { upstream_tls: true },
        "plain.example": { intercept: false },
        "open.example:8443": { intercept: false },
      } }
    """

    private var directory: URL!
    private var snapshot: ConfigSnapshot!
    private var tunnelOnlySnapshot: ConfigSnapshot!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-routing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ca = try InterceptionCA.create(certificatePath: directory.appendingPathComponent("ca.pem").path,
                                           keyPath: directory.appendingPathComponent("ca.key").path,
                                           scope: .hosts(["api.example"]), force: true)
        let runtime = InterceptionRuntime(ca: ca, tls: try InterceptionTLSContext(minter: LeafMinter(ca: ca)))
        let configuration = try ConfigLoader.load(text: Self.configText, sourcePath: directory.appendingPathComponent("c.json5").path,
                                                  environment: ["APP_PASSWORD": "s3cret"])
        snapshot = try SnapshotBuilder.build(configuration, generation: 1, interception: runtime)
        let unlisted = try ConfigLoader.load(text: #"{ listen: [{ address: "127.0.0.1:3128" }], unlisted_hosts: "tunnel", interception: { ca_certificate: "ca.pem", ca_key: "ca.key" }, hosts: { "api.example": {} } }"#,
                                             sourcePath: directory.appendingPathComponent("d.json5").path, environment: [:])
        tunnelOnlySnapshot = try SnapshotBuilder.build(unlisted, generation: 2, interception: nil)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// One route in words: what a reader of the table can check at a glance.
    private func spell(_ routed: RoutedRequest) -> String {
        switch routed.route {
        case .forward(let target, let path, let framing):
            return "forward \(target.scheme)://\(target.host):\(target.port)\(path) Host=\(target.hostField)\(framing == .none ? "" : " with body")"
        case .tunnel(let authority):
            return "tunnel \(authority.host):\(authority.port)"
        case .intercept(let authority, let host, _):
            return "intercept \(authority.host):\(authority.port) as \(host.pattern)"
        case .refuse(let error, let closing):
            return "refuse \(error.status) \(error.type.name)\(closing ? " closing" : "")"
        }
    }

    private func head(_ method: String, _ target: String, _ fields: [(String, String)] = [("Host", "x")]) -> RequestHead {
        RequestHead(method: method, target: target, headers: HeaderFields(fields.map { HeaderField($0.0, $0.1) }))
    }

    private func route(_ head: RequestHead, listener: Int = 0, inside: InterceptedTunnel? = nil, snapshot: ConfigSnapshot? = nil) -> RoutedRequest {
        let snapshot = snapshot ?? self.snapshot!
        return Routing.route(head, listener: snapshot.configuration.listeners[listener], inside: inside, snapshot: snapshot)
    }

    func testForwardListenerTable() {
        let basic = "Basic " + Data("app:s3cret".utf8).base64EncodedString()
        let rows: [(String, RequestHead, Int, String)] = [
            ("absolute http to a listed host upgraded by upstream_tls, default port follows",
             head("GET", "http://api.example/a?b"), 0, "forward https://api.example:443/a?b Host=api.example"),
            ("an explicit :80 is kept even when upgraded", head("GET", "http://api.example:80/a"), 0, "forward https://api.example:80/a Host=api.example:80"),
            ("absolute https", head("GET", "https://api.example/x"), 0, "forward https://api.example:443/x Host=api.example"),
            ("plain http to a listed host", head("POST", "http://plain.example/p", [("Host", "x"), ("Content-Length", "3")]), 0,
             "forward http://plain.example:80/p Host=plain.example with body"),
            ("unlisted host denied", head("GET", "http://other.example/"), 0, "refuse 403 http_request_denied"),
            ("unlisted host denied with a body: the connection closes", head("POST", "http://other.example/", [("Host", "x"), ("Content-Length", "1")]), 0,
             "refuse 403 http_request_denied closing"),
            ("CONNECT to an intercepted host", head("CONNECT", "api.example:443"), 0, "intercept api.example:443 as api.example"),
            ("CONNECT to a host with intercept: false", head("CONNECT", "plain.example:443"), 0, "tunnel plain.example:443"),
            ("CONNECT to a host:port entry", head("CONNECT", "open.example:8443"), 0, "tunnel open.example:8443"),
            ("CONNECT to an unlisted host always closes", head("CONNECT", "other.example:443"), 0, "refuse 403 http_request_denied closing"),
            ("origin-form on a forward listener", head("GET", "/x"), 0, "refuse 400 http_request_error"),
            ("OPTIONS * keeps the connection", head("OPTIONS", "*"), 0, "refuse 400 http_request_error"),
            ("an invalid target closes", head("GET", "http://exa mple/"), 0, "refuse 400 http_request_error closing"),
            ("conflicting framing closes", head("POST", "http://plain.example/", [("Host", "x"), ("Content-Length", "1"), ("Transfer-Encoding", "chunked")]), 0,
             "refuse 400 http_request_error closing"),
            ("proxy_auth without credentials", head("GET", "http://plain.example/"), 1, "refuse 407 http_request_denied"),
            ("proxy_auth with a wrong password", head("GET", "http://plain.example/", [("Proxy-Authorization", "Basic YXBwOm5v")]), 1,
             "refuse 407 http_request_denied"),
            ("proxy_auth answered", head("GET", "http://plain.example/", [("Proxy-Authorization", basic)]), 1,
             "forward http://plain.example:80/ Host=plain.example"),
            ("gateway: origin-form to the one upstream", head("GET", "/users?id=1"), 2, "forward https://api.example:443/users?id=1 Host=api.example"),
            ("gateway: absolute-form refused", head("GET", "http://api.example/"), 2, "refuse 400 http_request_error"),
        ]
        for (name, request, listener, expected) in rows {
            XCTAssertEqual(spell(route(request, listener: listener)), expected, name)
        }
    }

    func testWhatTheAccessRecordNames() {
        XCTAssertEqual(route(head("GET", "http://other.example:81/")).authority, Authority(host: "other.example", port: 81),
                       "a refused request names its host")
        XCTAssertEqual(route(head("GET", "/x")).authority, nil)
        XCTAssertEqual(route(head("GET", "http://plain.example/"), listener: 1).proxyUser, .rejected)
        let basic = "Basic " + Data("app:s3cret".utf8).base64EncodedString()
        XCTAssertEqual(route(head("GET", "http://plain.example/", [("Proxy-Authorization", basic)]), listener: 1).proxyUser, .user("app"))
        XCTAssertEqual(route(head("GET", "http://plain.example/")).proxyUser, nil, "a listener without proxy_auth names no user")
    }

    func testInsideAnInterceptedTunnel() throws {
        let entry = try XCTUnwrap(snapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        let tunnel = InterceptedTunnel(authority: Authority(host: "api.example", port: 443), host: entry)
        let rows: [(String, RequestHead, String)] = [
            ("origin-form for the tunnel's host", head("GET", "/a", [("Host", "api.example")]), "forward https://api.example:443/a Host=api.example"),
            ("Host with the default port spelled", head("GET", "/a", [("Host", "api.example:443")]), "forward https://api.example:443/a Host=api.example"),
            ("Host in another case", head("GET", "/a", [("Host", "API.Example")]), "forward https://api.example:443/a Host=api.example"),
            ("Host with another port is misdirected", head("GET", "/a", [("Host", "api.example:8443")]), "refuse 421 http_request_denied"),
            ("absolute https for the same authority", head("GET", "https://api.example/b"), "forward https://api.example:443/b Host=api.example"),
            ("another Host is misdirected", head("GET", "/a", [("Host", "evil.example")]), "refuse 421 http_request_denied"),
            ("origin-form without a Host is misdirected", head("GET", "/a"), "refuse 421 http_request_denied"),
            ("the first of two Host fields decides", head("GET", "/a", [("Host", "evil.example"), ("Host", "api.example")]), "refuse 421 http_request_denied"),
            ("the first of two Host fields decides, usual first", head("GET", "/a", [("Host", "api.example"), ("Host", "evil.example")]),
             "forward https://api.example:443/a Host=api.example"),
            ("a Host that only begins like the tunnel's", head("GET", "/a", [("Host", "api.example.evil")]), "refuse 421 http_request_denied"),
            ("absolute http is misdirected", head("GET", "http://api.example/b"), "refuse 421 http_request_denied"),
            ("a second CONNECT closes", head("CONNECT", "api.example:443"), "refuse 400 http_request_error closing"),
            ("proxy_auth is not asked again inside", head("GET", "/a", [("Host", "api.example")]), "forward https://api.example:443/a Host=api.example"),
        ]
        for (name, request, expected) in rows {
            XCTAssertEqual(spell(route(request, listener: 1, inside: tunnel)), expected, name)
        }
    }

    /// A tunnel to a port other than 443 is named with its port; the bare host means port 443.
    func testInsideAnInterceptedTunnelOnAnotherPort() throws {
        let entry = try XCTUnwrap(snapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        let tunnel = InterceptedTunnel(authority: Authority(host: "api.example", port: 8443), host: entry)
        let rows: [(String, RequestHead, Bool)] = [
            ("Host with the tunnel's port", head("GET", "/a", [("Host", "api.example:8443")]), true),
            ("Host in another case, with the port", head("GET", "/a", [("Host", "Api.Example:8443")]), true),
            ("Host without the port names port 443", head("GET", "/a", [("Host", "api.example")]), false),
            ("Host with port 443", head("GET", "/a", [("Host", "api.example:443")]), false),
        ]
        for (name, request, forwarded) in rows {
            guard case .forward = route(request, listener: 1, inside: tunnel).route else {
                XCTAssertFalse(forwarded, name)
                continue
            }
            XCTAssertTrue(forwarded, name)
        }
    }

    /// A tunnel remembers where its requests go, but only within one generation: after a
    /// reload the next request in the same tunnel is routed with the new snapshot's pieces.
    func testATunnelsRequestsFollowAReload() throws {
        let entry = try XCTUnwrap(snapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        let tunnel = InterceptedTunnel(authority: Authority(host: "api.example", port: 443), host: entry)
        let request = head("GET", "/a", [("Host", "api.example")])
        guard case .forward(let first, _, _) = route(request, inside: tunnel).route,
              case .forward(let again, _, _) = route(request, inside: tunnel).route,
              case .forward(let reloaded, _, _) = route(request, inside: tunnel, snapshot: tunnelOnlySnapshot).route
        else { return XCTFail("not forwarded") }
        XCTAssertTrue(first.tls === snapshot.upstreamTLS(for: entry))
        XCTAssertTrue(again.tls === first.tls)
        let reloadedEntry = try XCTUnwrap(tunnelOnlySnapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        XCTAssertTrue(reloaded.tls === tunnelOnlySnapshot.upstreamTLS(for: reloadedEntry))
        XCTAssertFalse(reloaded.tls === first.tls)
    }

    func testUnlistedTunnelAndNoInterceptionRuntime() {
        XCTAssertEqual(spell(route(head("CONNECT", "any.example:443"), snapshot: tunnelOnlySnapshot)), "tunnel any.example:443")
        XCTAssertEqual(spell(route(head("CONNECT", "api.example:443"), snapshot: tunnelOnlySnapshot)), "tunnel api.example:443",
                       "intercept defaults to true, but without an interception runtime the CONNECT is a blind tunnel")
        XCTAssertEqual(spell(route(head("GET", "http://any.example/"), snapshot: tunnelOnlySnapshot)), "forward http://any.example:80/ Host=any.example")
    }

    /// The route carries the snapshot's own compiled pieces (TLS context, parent), so what
    /// serves the request uses the generation it was routed with.
    func testTheRouteCarriesTheSnapshotsUpstreamTLS() throws {
        guard case .forward(let target, _, _) = route(head("GET", "https://api.example/x")).route else { return XCTFail("not forwarded") }
        let entry = try XCTUnwrap(snapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        XCTAssertTrue(target.tls === snapshot.upstreamTLS(for: entry))
        guard case .forward(let other, _, _) = route(head("GET", "https://api.example/x"), snapshot: tunnelOnlySnapshot).route else { return XCTFail("not forwarded") }
        XCTAssertFalse(other.tls === target.tls)
    }
    // MARK: - The connection's memo of its last forwarded target

    private func route(_ head: RequestHead, listener: Int = 0, snapshot: ConfigSnapshot? = nil, memo: inout RouteMemo) -> RoutedRequest {
        let snapshot = snapshot ?? self.snapshot!
        return Routing.route(head, listener: snapshot.configuration.listeners[listener], inside: nil, snapshot: snapshot, memo: &memo)
    }

    private func upstream(_ routed: RoutedRequest) -> UpstreamTarget? {
        if case .forward(let upstream, _, _) = routed.route { return upstream }
        return nil
    }

    /// A request for the scheme and authority the last one was forwarded to takes the same
    /// upstream (the very object), with its own path, and is routed as it would be without the memo.
    func testTheNextRequestForTheSameAuthorityTakesTheRememberedUpstream() throws {
        var memo = RouteMemo()
        let first = route(head("GET", "http://api.example/a"), memo: &memo)
        let rows: [(String, String)] = [
            ("http://api.example/b?c", "forward https://api.example:443/b?c Host=api.example"),
            ("http://api.example?q=1", "forward https://api.example:443/?q=1 Host=api.example"),
            ("http://api.example", "forward https://api.example:443/ Host=api.example"),
        ]
        for (target, expected) in rows {
            let again = route(head("GET", target), memo: &memo)
            XCTAssertEqual(spell(again), expected, target)
            XCTAssertEqual(spell(again), spell(route(head("GET", target))), "\(target): as without the memo")
            XCTAssertTrue(try XCTUnwrap(upstream(again)) === upstream(first), "\(target): the remembered upstream")
            XCTAssertEqual(again.authority, Authority(host: "api.example", port: 80))
        }
        let posted = route(head("POST", "http://api.example/p", [("Host", "x"), ("Content-Length", "3")]), memo: &memo)
        XCTAssertEqual(spell(posted), "forward https://api.example:443/p Host=api.example with body", "the framing is the request's own")
    }

    /// Only the same `scheme://authority`, byte for byte and ending where the path begins, is
    /// taken from the memo; anything else is routed afresh (and refused where it must be).
    func testAnotherAuthorityOrABadPathIsRoutedAfresh() {
        var memo = RouteMemo()
        _ = route(head("GET", "http://plain.example/"), memo: &memo)
        let rows: [(String, RequestHead, String)] = [
            ("a longer host that starts alike", head("GET", "http://plain.example.net/"), "refuse 403 http_request_denied"),
            ("the same host on another port", head("GET", "http://plain.example:8080/"), "forward http://plain.example:8080/ Host=plain.example:8080"),
            ("an explicit default port", head("GET", "http://plain.example:80/"), "forward http://plain.example:80/ Host=plain.example"),
            ("the same host in another case", head("GET", "http://PLAIN.example/x"), "forward http://plain.example:80/x Host=plain.example"),
            ("another scheme", head("GET", "https://plain.example/"), "forward https://plain.example:443/ Host=plain.example"),
            ("a fragment after the remembered authority", head("GET", "http://plain.example/#frag"), "refuse 400 http_request_error closing"),
            ("conflicting framing", head("POST", "http://plain.example/", [("Host", "x"), ("Content-Length", "1"), ("Transfer-Encoding", "chunked")]),
             "refuse 400 http_request_error closing"),
            ("a CONNECT spelled like it", head("CONNECT", "http://plain.example/"), "refuse 400 http_request_error closing"),
        ]
        for (name, request, expected) in rows {
            _ = route(head("GET", "http://plain.example/"), memo: &memo)
            XCTAssertEqual(spell(route(request, memo: &memo)), expected, name)
        }
    }

    /// `proxy_auth` is asked of every request, remembered upstream or not.
    func testProxyAuthIsCheckedOnEveryRequest() {
        var memo = RouteMemo()
        let basic = "Basic " + Data("app:s3cret".utf8).base64EncodedString()
        let allowed = route(head("GET", "http://plain.example/", [("Proxy-Authorization", basic)]), listener: 1, memo: &memo)
        XCTAssertEqual(allowed.proxyUser, .user("app"))
        let without = route(head("GET", "http://plain.example/"), listener: 1, memo: &memo)
        XCTAssertEqual(spell(without), "refuse 407 http_request_denied")
        XCTAssertEqual(without.proxyUser, .rejected)
        let again = route(head("GET", "http://plain.example/x", [("Proxy-Authorization", basic)]), listener: 1, memo: &memo)
        XCTAssertEqual(spell(again), "forward http://plain.example:80/x Host=plain.example")
        XCTAssertEqual(again.proxyUser, .user("app"))
    }

    /// After a reload the same target is routed with the new snapshot's pieces.
    func testAReloadForgetsTheRememberedUpstream() throws {
        var memo = RouteMemo()
        let first = try XCTUnwrap(upstream(route(head("GET", "https://api.example/x"), memo: &memo)))
        let reloaded = try XCTUnwrap(upstream(route(head("GET", "https://api.example/x"), snapshot: tunnelOnlySnapshot, memo: &memo)))
        XCTAssertFalse(reloaded === first)
        let entry = try XCTUnwrap(tunnelOnlySnapshot.configuration.hosts.lookup(host: "api.example", port: 443))
        XCTAssertTrue(reloaded.tls === tunnelOnlySnapshot.upstreamTLS(for: entry))
        XCTAssertEqual(spell(route(head("GET", "http://other.example/"), snapshot: snapshot, memo: &memo)), "refuse 403 http_request_denied",
                       "a generation's own hosts decide")
    }
}
