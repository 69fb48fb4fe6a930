import CountersignConfig
import CountersignHTTP

/// What serves a request: decided from its head, the listener it came on, the intercepted
/// tunnel it came inside (if any) and one configuration snapshot, with no I/O, so the
/// whole table is tested without a socket and one request never mixes two generations.
enum Route {
    /// To an upstream (origin or parent), through the request pipeline.
    case forward(UpstreamTarget, path: String, framing: BodyFraming)
    /// A blind CONNECT tunnel to `authority`.
    case tunnel(Authority)
    /// A CONNECT answered by Countersign, the client's TLS terminated with a minted leaf.
    /// (Boxed, as is `refuse`: their large payloads made every copy of a route, forwarded ones
    /// included, go through the enum's generic copy.)
    indirect case intercept(Authority, host: HostConfig, runtime: InterceptionRuntime)
    /// Answered by Countersign with `error`; `closing` when the connection cannot go on
    /// (a body of unknown length follows, or the client is in a state not to be trusted).
    indirect case refuse(ProxyError, closing: Bool)
}

/// A route and what the access record names for it before anything is sent.
struct RoutedRequest {
    /// What the proxy's own authentication (`listen[].proxy_auth`) found.
    enum ProxyUser: Equatable {
        case user(String)
        case rejected
    }

    var route: Route
    /// The host the request is for, once known (refusals name it too, for the access line
    /// and /status).
    var authority: Authority?
    var proxyUser: ProxyUser?
}

enum Routing {
    /// `route`, with the connection's memo of its last forwarded absolute-form target: a request
    /// for the same `scheme://authority` under the same generation takes the upstream decided
    /// then; its framing and the listener's `proxy_auth` are checked as for any request.
    static func route(_ head: RequestHead, listener: borrowing ListenerConfig, inside interception: InterceptedTunnel?,
                      snapshot: ConfigSnapshot, memo: inout RouteMemo) -> RoutedRequest {
        guard interception == nil, let remembered = memo.forward(head.targetText, method: head.method, generation: snapshot.generation) else {
            let routed = route(head, listener: listener, inside: interception, snapshot: snapshot)
            if interception == nil, case .forward(let upstream, _, _) = routed.route, let authority = routed.authority {
                memo.remember(head.target, authority: authority, upstream: upstream, generation: snapshot.generation)
            }
            return routed
        }
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forRequest(head)
        } catch {
            return refusal(error)
        }
        switch checkProxyAuth(head, listener: listener, framing: framing) {
        case .refused(let routed):
            return routed
        case .passed(let proxyUser):
            return RoutedRequest(route: .forward(remembered.upstream, path: remembered.path, framing: framing),
                                 authority: remembered.authority, proxyUser: proxyUser)
        }
    }

    static func route(_ head: RequestHead, listener: borrowing ListenerConfig, inside interception: InterceptedTunnel?,
                      snapshot: ConfigSnapshot) -> RoutedRequest {
        let target: RequestTarget
        let framing: BodyFraming
        do {
            target = try RequestTarget.parse(head.target, method: head.method)
            framing = try BodyFraming.forRequest(head)
        } catch {
            return refusal(error)
        }
        // Inside an intercepted tunnel the client authenticated to us (if it had to) on the CONNECT.
        if let interception {
            return routeIntercepted(head, target: target, framing: framing, interception: interception, snapshot: snapshot)
        }
        switch checkProxyAuth(head, listener: listener, framing: framing) {
        case .refused(let routed):
            return routed
        case .passed(let proxyUser):
            // Made whole where it is decided: setting the user afterwards copied the route.
            return routeTarget(target, head: head, framing: framing, listener: listener, snapshot: snapshot, proxyUser: proxyUser)
        }
    }

    /// A head whose target or framing does not parse: refused, and the connection closed.
    private static func refusal(_ error: any Error) -> RoutedRequest {
        if let error = error as? HTTPParseError { return RoutedRequest(route: .refuse(.badRequest(error), closing: true)) }
        return RoutedRequest(route: .refuse(ProxyError(.httpRequestError(status: 400), details: "invalid request"), closing: true))
    }

    private enum ProxyAuthCheck {
        case passed(RoutedRequest.ProxyUser?)
        case refused(RoutedRequest)
    }

    /// The listener's `proxy_auth`, if it has one, asked of the request's credentials.
    private static func checkProxyAuth(_ head: RequestHead, listener: borrowing ListenerConfig, framing: BodyFraming) -> ProxyAuthCheck {
        guard let proxyAuth = listener.proxyAuth else { return .passed(nil) }
        switch ProxyAuthorization.check(head.headers, against: proxyAuth) {
        case .allowed(let user):
            return .passed(.user(user))
        case .denied(let reason):
            var error = ProxyError(.httpRequestDenied(status: 407), details: reason)
            error.extraHeaders = [("Proxy-Authenticate", ProxyAuthorization.challenge(realm: proxyAuth.realm))]
            return .refused(RoutedRequest(route: .refuse(error, closing: framing != .none), proxyUser: .rejected))
        }
    }

    private static func routeTarget(_ target: RequestTarget, head: RequestHead, framing: BodyFraming, listener: borrowing ListenerConfig,
                                    snapshot: ConfigSnapshot, proxyUser: RoutedRequest.ProxyUser?) -> RoutedRequest {
        let configuration = snapshot.configuration
        let closing = framing != .none
        switch target {
        case .authority(let authority):
            let host = configuration.hosts.lookup(host: authority.host, port: authority.port)
            if host == nil && configuration.unlistedHosts == .deny {
                return RoutedRequest(route: .refuse(.denied("\(authority.host) is not a configured host"), closing: true), authority: authority, proxyUser: proxyUser)
            }
            if let host, host.intercept, let runtime = snapshot.interception {
                return RoutedRequest(route: .intercept(authority, host: host, runtime: runtime), authority: authority, proxyUser: proxyUser)
            }
            return RoutedRequest(route: .tunnel(authority), authority: authority, proxyUser: proxyUser)
        case .absolute(let scheme, let authority, let path):
            guard listener.mode == .forward else {
                return RoutedRequest(route: .refuse(ProxyError(.httpRequestError(status: 400), details: "this listener is a gateway: send origin-form requests"),
                                                    closing: closing), authority: authority, proxyUser: proxyUser)
            }
            let host = configuration.hosts.lookup(host: authority.host, port: authority.port)
            if host == nil && configuration.unlistedHosts == .deny {
                return RoutedRequest(route: .refuse(.denied("\(authority.host) is not a configured host"), closing: closing), authority: authority, proxyUser: proxyUser)
            }
            // `upstream_tls` upgrades http:// requests; the default port follows the scheme.
            let useTLS = scheme == .https || (host?.upstreamTLS ?? false)
            var endpoint = authority
            if useTLS && scheme == .http && !hasExplicitPort(head.target) { endpoint.port = 443 }
            let plan = snapshot.plan(for: host)
            let upstream = UpstreamTarget(authority: endpoint, tls: useTLS ? snapshot.upstreamTLS(for: plan) : nil, plan: plan, parent: snapshot.parent)
            return RoutedRequest(route: .forward(upstream, path: path, framing: framing), authority: authority, proxyUser: proxyUser)
        case .origin(let path):
            guard listener.mode == .gateway, let upstream = listener.upstream else {
                return RoutedRequest(route: .refuse(ProxyError(.httpRequestError(status: 400), details: "a forward proxy needs an absolute URI (http://host/path)"),
                                                    closing: closing), proxyUser: proxyUser)
            }
            let authority = Authority(host: upstream.host, port: upstream.port)
            let host = configuration.hosts.lookup(host: authority.host, port: authority.port)
            let plan = snapshot.plan(for: host)
            let target = UpstreamTarget(authority: authority, tls: upstream.scheme == "https" ? snapshot.upstreamTLS(for: plan) : nil,
                                        plan: plan, parent: snapshot.parent)
            return RoutedRequest(route: .forward(target, path: join(upstream.path, path), framing: framing), proxyUser: proxyUser)
        case .asterisk:
            return RoutedRequest(route: .refuse(ProxyError(.httpRequestError(status: 400), details: "OPTIONS * is not forwarded"), closing: false), proxyUser: proxyUser)
        }
    }

    /// A request inside an intercepted tunnel: for that host only, upstream over TLS.
    private static func routeIntercepted(_ head: RequestHead, target: RequestTarget, framing: BodyFraming, interception: InterceptedTunnel,
                                         snapshot: ConfigSnapshot) -> RoutedRequest {
        let authority = interception.authority
        let path: String
        switch target {
        case .origin(let originPath) where interception.accepts(head.headers):
            path = originPath
        case .absolute(.https, let requested, let absolutePath) where requested == authority:
            path = absolutePath
        case .authority:
            return RoutedRequest(route: .refuse(ProxyError(.httpRequestError(status: 400), details: "CONNECT inside an intercepted tunnel"), closing: true),
                                 authority: authority)
        default:
            let error = ProxyError(.httpRequestDenied(status: 421),
                                   details: "this tunnel is for \(authority); the request is for \(head.headers["Host"].map(LoggableTarget.of) ?? "another host")")
            return RoutedRequest(route: .refuse(error, closing: framing != .none), authority: authority)
        }
        return RoutedRequest(route: .forward(interception.upstream(in: snapshot), path: path, framing: framing), authority: authority)
    }
}
