import CLibevent
import CountersignAdmin
import CountersignAuth
import CountersignHTTP
import CountersignSupport
import Foundation

/// One POST to a credential endpoint (an OAuth2 token endpoint, STS) over a connection
/// evaluated like any other upstream (the endpoint's `hosts` entry, else the system roots with
/// name validation), the answer read whole (it is small, at most 1 MiB) and parsed by the caller.
struct EndpointPost {
    /// Names the endpoint in every error, e.g. `OAuth2 token endpoint https://…`.
    let name: String
    let url: String
    let headerFields: [(name: String, value: String)]
    let body: [UInt8]
}

/// Fetches a credential (an OAuth2 client-credentials token, STS's temporary keys) with one
/// `EndpointPost`; concurrent fetches of the same key on one worker share it.
final class TokenFetcher<Answer>: StreamDelegate, UpstreamConnectDelegate {
    typealias Completion = (Result<Answer, ProxyError>) -> Void
    typealias Parse = (_ status: Int, _ body: [UInt8]) throws -> Answer

    private let post: EndpointPost
    private let parse: Parse
    private let context: WorkerContext
    private let endpoint: (authority: Authority, path: String, tls: Bool)
    /// From the snapshot of the exchange that started the fetch.
    private var headerTimeout: Double = 0
    private var completions: [Completion] = []
    private var coalescingKey = ""
    private var connection: UpstreamConnection?
    private var reader = ResponseReader(maxHeadBytes: 65536)
    private var response: ResponseHead?
    private let bodyStorage = OwnedEventBuffer()
    private var body: EventBuffer? { bodyStorage?.buffer }
    private lazy var deadline = Deadline(base: context.base) { [weak self] in
        self?.finish(.failure(self?.failure("no answer within \(Seconds.text(self?.headerTimeout ?? 0))") ?? ProxyError(.httpResponseTimeout, details: "")))
    }
    /// Fetchers in flight, by worker and credential: concurrent exchanges that need the same
    /// token wait for one fetch instead of each starting their own.

    private init(post: EndpointPost, parse: @escaping Parse, context: WorkerContext, endpoint: (authority: Authority, path: String, tls: Bool), completion: @escaping Completion) {
        self.post = post
        self.parse = parse
        self.context = context
        self.endpoint = endpoint
        self.completions = [completion]
    }

    private var completion: Completion? { completions.first }

    /// `key` names what is fetched (a credential); one fetch per key and worker at a time.
    static func fetch(_ post: EndpointPost, key credential: String, context: WorkerContext, snapshot: ConfigSnapshot,
                      parse: @escaping Parse, completion: @escaping Completion) {
        let key = "\(context.id)/\(credential)"
        if let running = activeFetchers.withLock({ $0[key] }) as? TokenFetcher<Answer> {
            running.completions.append(completion)
            return
        }
        guard case .absolute(let scheme, let authority, let path)? = try? RequestTarget.parse(post.url, method: "POST") else {
            completion(.failure(ProxyError(.proxyConfigurationError, details: "\(post.name) is not an absolute http(s) URL")))
            return
        }
        let fetcher = TokenFetcher(post: post, parse: parse, context: context, endpoint: (authority, path, scheme == .https), completion: completion)
        fetcher.coalescingKey = key
        activeFetchers.withLock { $0[key] = fetcher }
        let entry = snapshot.configuration.hosts.lookup(host: authority.host, port: authority.port)
        let tls = scheme == .https ? snapshot.upstreamTLS(for: entry) : nil
        let limits = snapshot.configuration.limits
        fetcher.headerTimeout = limits.headerTimeout
        fetcher.deadline.begin(seconds: limits.connectTimeout + limits.headerTimeout)
        fetcher.connection = UpstreamConnection.open(host: authority.host, port: authority.port, tls: tls, via: snapshot.parent,
                                                     snapshot: snapshot, context: context, delegate: fetcher)
        // No connection could even start (no descriptor left): say so now, not at the deadline.
        if fetcher.connection == nil { fetcher.finish(.failure(UpstreamConnection.cannotOpen("the \(post.name)"))) }
    }

    private func failure(_ what: String) -> ProxyError {
        ProxyError(.destinationUnavailable, details: "\(post.name): \(what)")
    }

    func upstreamReady(_ connection: UpstreamConnection) {
        self.connection = connection
        connection.stream.delegate = self
        var headers = HeaderFields()
        headers.append("Host", endpoint.authority.hostField(defaultPort: endpoint.tls ? 443 : 80))
        for field in post.headerFields { headers.append(field.name, field.value) }
        headers.append("Connection", "close")
        var bytes = HeadSerializer.request(method: "POST", target: endpoint.path, headers: headers)
        bytes.append(contentsOf: post.body)
        connection.stream.write(bytes)
        connection.stream.enableReadWrite()
    }

    func upstreamFailed(_ connection: UpstreamConnection, error: ProxyError) {
        finish(.failure(ProxyError(error.type, details: "\(post.name): \(error.details)")))
    }

    func streamReadable(_ stream: Stream) { read(from: stream) }
    func streamWritable(_ stream: Stream) {}

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.connected { return }
        read(from: stream)
        if event.eof, response != nil, reader.bodyEndsAtClose, let body, let input = stream.input {
            reader.restOfBody(from: input, to: body)
            complete()
        } else if completion != nil {
            finish(.failure(failure("the connection ended before a complete answer")))
        }
    }

    private func read(from stream: Stream) {
        guard completion != nil, let body, let input = stream.input else { return }
        if response == nil {
            switch reader.finalHead(from: input) {
            case .incomplete:
                return
            case .invalid(let error):
                finish(.failure(failure("invalid response: \(error.detail)")))
                return
            case .complete(let head):
                do {
                    try reader.expectBody(of: head, requestMethod: "POST", output: .raw)
                } catch {
                    return finish(.failure(failure("invalid response: \((error as? HTTPParseError)?.detail ?? "its framing")")))
                }
                response = head
            }
        }
        switch reader.body(from: input, to: body, room: (1 << 20) - body.count).progress {
        case .finished: complete()
        case .failed(let error): finish(.failure(failure("invalid response body: \(error.detail)")))
        case .waiting:
            if body.count >= 1 << 20 { finish(.failure(failure("the answer is larger than 1 MiB"))) }
        }
    }

    private func complete() {
        guard let response, let body else { return }
        let bytes = body.removeAll()
        do {
            finish(.success(try parse(response.status, bytes)))
        } catch {
            finish(.failure(failure("\(error)")))
        }
    }

    private func finish(_ result: Result<Answer, ProxyError>) {
        guard !completions.isEmpty else { return }
        let waiting = completions
        completions = []
        deadline.end()
        connection?.close()
        connection = nil
        _ = activeFetchers.withLock { $0.removeValue(forKey: coalescingKey) }
        for completion in waiting { completion(result) }
    }
}

/// The fetchers in flight, by worker and key (a generic class cannot hold a static store).
private let activeFetchers = Mutex<[String: AnyObject]>([:])

extension TokenFetcher where Answer == OAuth2Token {
    /// An OAuth2 client-credentials token from the client's token endpoint.
    static func fetch(client: OAuth2Client, credential: String, context: WorkerContext, snapshot: ConfigSnapshot, completion: @escaping Completion) {
        let request: OAuth2TokenRequest
        do {
            request = try OAuth2TokenRequest(client: client)
        } catch {
            completion(.failure(ProxyError(.destinationUnavailable, details: "OAuth2 token endpoint \(client.tokenURL): \(error)")))
            return
        }
        let post = EndpointPost(name: "OAuth2 token endpoint \(client.tokenURL)", url: client.tokenURL, headerFields: request.headerFields, body: request.body)
        fetch(post, key: credential, context: context, snapshot: snapshot, parse: { status, body in
            try OAuth2TokenResponse.parse(status: status, body: body, tokenURL: client.tokenURL, now: Date())
        }, completion: { result in
            Metrics.shared.countCredentialFetch(endpoint: "oauth2", ok: (try? result.get()) != nil)
            completion(result)
        })
    }
}
