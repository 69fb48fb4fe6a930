import CountersignHTTP
import XCTest
@testable import CountersignAuth
@testable import CountersignProxy

/// `UpstreamDial` as a table: every (state, event) pair the shell can produce, the action
/// and the next state, with no socket.
final class UpstreamDialTests: XCTestCase {
    private typealias Plan = UpstreamDial.Plan
    private let origin = Authority(host: "origin.example", port: 443)
    private var direct: Plan { Plan(origin: origin) }
    private var directTLS: Plan { Plan(origin: origin, originSecurity: .tls) }
    private var viaParent: Plan { Plan(origin: origin, hop: .parentConnect(name: "parent proxy p:3128", security: .plain, answersChallenges: true)) }
    private var viaTLSParentToTLSOrigin: Plan {
        Plan(origin: origin, hop: .parentConnect(name: "parent proxy p:3129", security: .tls, answersChallenges: true), originSecurity: .tls)
    }
    private var viaParentWithoutAuth: Plan { Plan(origin: origin, hop: .parentConnect(name: "parent proxy p:3128", security: .plain, answersChallenges: false)) }
    private var forwardingToParent: Plan { Plan(origin: origin, hop: .parentForwarding(name: "parent proxy p:3128", security: .tls)) }

    private let answer = AuthAnswer(field: .proxyAuthorization, value: SecretValue("Basic eA=="), scheme: .basic,
                                    isHandshakeLeg: false, bindsConnection: false, credentialName: "corp")
    private let kerberos = KerberosRequest(credential: KerberosCredential(principal: "svc@EX", source: .ccache("MEMORY:t"), cacheName: "t"),
                                           service: "HTTP@p", bindings: nil)

    private func response(_ status: Int, _ fields: [(String, String)] = []) -> ResponseHead {
        ResponseHead(status: status, reason: status == 200 ? "Connection established" : "Proxy Authentication Required",
                     headers: HeaderFields(fields.map { HeaderField($0.0, $0.1) }))
    }

    private func spell(_ action: UpstreamDial.Action) -> String {
        switch action {
        case .checkSocket: return "checkSocket"
        case .startTLS(let peer): return "startTLS \(peer)"
        case .evaluateTrust(let peer): return "evaluateTrust \(peer)"
        case .sendConnect: return "sendConnect"
        case .discardChallengeBody(let framing): return "discardChallengeBody \(framing)"
        case .resendConnect(let answer): return "resendConnect \(answer.scheme)"
        case .reconnectToParent(let answer): return "reconnectToParent \(answer.scheme)"
        case .decideChallenge(let head): return "decideChallenge \(head.status)"
        case .completeParentAuth(let head): return "completeParentAuth \(head.status)"
        case .prepareParentCredential(let request): return "prepareParentCredential \(request.service)"
        case .failDescribing(let step): return "failDescribing \(step)"
        case .fail(let error): return "fail \(error.status) \(error.type.name): \(error.details)"
        case .ready: return "ready"
        case .nothing: return "nothing"
        }
    }

    private func spell(_ state: UpstreamDial.State) -> String {
        switch state {
        case .connecting: return "connecting"
        case .parentHandshake: return "parentHandshake"
        case .awaitingConnectAnswer: return "awaitingConnectAnswer"
        case .decidingChallenge(let head): return "decidingChallenge(\(head.status))"
        case .preparingParentCredential(let head): return "preparingParentCredential(\(head.status))"
        case .discardingChallengeBody(let answer): return "discardingChallengeBody(\(answer.scheme))"
        case .originHandshake: return "originHandshake"
        case .ready: return "ready"
        case .failed: return "failed"
        }
    }

    /// Drives a fresh dial through `events`, returning the last action and the state it left.
    private func run(_ plan: Plan, _ events: [UpstreamDial.Event]) -> (action: String, state: String) {
        var dial = UpstreamDial(plan)
        var last = UpstreamDial.Action.nothing
        for event in events { last = dial.handle(event) }
        return (spell(last), spell(dial.state))
    }

    /// One row: its name, the plan, the events from a fresh dial, the last action and the state left.
    private typealias Row = (String, Plan, [UpstreamDial.Event], String, String)

    private func check(_ rows: [Row], file: StaticString = #filePath, line: UInt = #line) {
        for (name, plan, events, action, state) in rows {
            let result = run(plan, events)
            XCTAssertEqual(result.action, action, name, file: file, line: line)
            XCTAssertEqual(result.state, state, name, file: file, line: line)
        }
    }

    private var upToConnect: [UpstreamDial.Event] { [.connected, .socketChecked(ownListener: nil)] }
    private var upTo407: [UpstreamDial.Event] { upToConnect + [.connectAnswered(response(407, [("Content-Length", "5")]))] }

    func testTheStepsInOrderForEachPlan() {
        let rows: [Row] = [
            ("connecting × connected", direct, [.connected], "checkSocket", "connecting"),
            ("connecting × socket checked, plain origin", direct, [.connected, .socketChecked(ownListener: nil)], "ready", "ready"),
            ("connecting × socket checked, TLS origin", directTLS, upToConnect, "startTLS origin", "originHandshake"),
            ("originHandshake × connected", directTLS, upToConnect + [.connected], "evaluateTrust origin", "originHandshake"),
            ("originHandshake × trusted", directTLS, upToConnect + [.connected, .trustEvaluated(nil)], "ready", "ready"),
            ("connecting × socket checked, through a parent", viaParent, upToConnect, "sendConnect", "awaitingConnectAnswer"),
            ("connecting × socket checked, https parent", viaTLSParentToTLSOrigin, upToConnect, "startTLS parent", "parentHandshake"),
            ("parentHandshake × connected", viaTLSParentToTLSOrigin, upToConnect + [.connected], "evaluateTrust parent", "parentHandshake"),
            ("parentHandshake × trusted", viaTLSParentToTLSOrigin, upToConnect + [.connected, .trustEvaluated(nil)], "sendConnect", "awaitingConnectAnswer"),
            ("awaitingConnectAnswer × 200", viaParent, upToConnect + [.connectAnswered(response(200))], "completeParentAuth 200", "awaitingConnectAnswer"),
            ("awaitingConnectAnswer × auth completed, plain origin", viaParent,
             upToConnect + [.connectAnswered(response(200)), .parentAuthCompleted(mutualAuthFailure: nil)], "ready", "ready"),
            ("awaitingConnectAnswer × auth completed, TLS origin inside the parent's TLS", viaTLSParentToTLSOrigin,
             upToConnect + [.connected, .trustEvaluated(nil), .connectAnswered(response(200)), .parentAuthCompleted(mutualAuthFailure: nil)],
             "startTLS origin", "originHandshake"),
            ("forwarding to an https parent: its TLS, then ready (no CONNECT)", forwardingToParent,
             upToConnect + [.connected, .trustEvaluated(nil)], "ready", "ready"),
        ]
        check(rows)
    }

    func testTheParents407() {
        let rows: [Row] = [
            ("awaitingConnectAnswer × 407 with auth", viaParent, upTo407, "decideChallenge 407", "decidingChallenge(407)"),
            // The body's fate is `ChallengeBody`'s, as for an origin's 401 (ExchangeTests).
            ("answered, a Content-Length body: dropped by its framing", viaParent,
             upTo407 + [.challengeDecided(.answer(answer), lockOut: nil)], "discardChallengeBody contentLength(5)", "discardingChallengeBody(basic)"),
            ("discardingChallengeBody × discarded: CONNECT again on this connection", viaParent,
             upTo407 + [.challengeDecided(.answer(answer), lockOut: nil), .challengeBodyDiscarded], "resendConnect basic", "awaitingConnectAnswer"),
            ("answered, a chunked body: dropped by its framing", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Transfer-Encoding", "chunked")])), .challengeDecided(.answer(answer), lockOut: nil)],
             "discardChallengeBody chunked", "discardingChallengeBody(basic)"),
            ("answered, no body", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Content-Length", "0")])), .challengeDecided(.answer(answer), lockOut: nil)],
             "discardChallengeBody contentLength(0)", "discardingChallengeBody(basic)"),
            ("answered, the parent closes: a new connection", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Content-Length", "0"), ("Connection", "close")])),
                            .challengeDecided(.answer(answer), lockOut: nil)], "reconnectToParent basic", "connecting"),
            ("answered, a close-delimited body: a new connection", viaParent,
             upToConnect + [.connectAnswered(response(407)), .challengeDecided(.answer(answer), lockOut: nil)],
             "reconnectToParent basic", "connecting"),
            ("answered, an invalid framing: a new connection", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Content-Length", "5"), ("Content-Length", "6")])),
                            .challengeDecided(.answer(answer), lockOut: nil)], "reconnectToParent basic", "connecting"),
            ("discardingChallengeBody × invalid body", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Transfer-Encoding", "chunked")])), .challengeDecided(.answer(answer), lockOut: nil),
                            .challengeBodyInvalid(detail: "bad chunk size")],
             "fail 502 http_protocol_error: parent proxy p:3128 answered CONNECT origin.example:443 with an invalid 407 body: bad chunk size", "failed"),
            ("after a reconnect the steps run again", viaParent,
             upToConnect + [.connectAnswered(response(407, [("Connection", "close")])), .challengeDecided(.answer(answer), lockOut: nil),
                            .connected, .socketChecked(ownListener: nil)],
             "sendConnect", "awaitingConnectAnswer"),
            ("a Kerberos token is made off the loop", viaParent,
             upTo407 + [.challengeDecided(.prepareKerberos(kerberos), lockOut: nil)], "prepareParentCredential HTTP@p",
             "preparingParentCredential(407)"),
            ("preparingParentCredential × prepared: the same 407 decided again", viaParent,
             upTo407 + [.challengeDecided(.prepareKerberos(kerberos), lockOut: nil), .parentCredentialPrepared],
             "decideChallenge 407", "decidingChallenge(407)"),
            ("not answerable", viaParent,
             upTo407 + [.challengeDecided(.fail(reason: "no credential"), lockOut: nil)],
             "fail 502 http_request_denied: parent proxy p:3128 answered CONNECT origin.example:443 with 407 Proxy Authentication Required", "failed"),
            ("locked out: the sentence says so", viaParent,
             upTo407 + [.challengeDecided(.passThrough(reason: "locked"), lockOut: "locked out until 12:00")],
             "fail 502 http_request_denied: parent proxy p:3128 answered CONNECT origin.example:443 with 407 Proxy Authentication Required; locked out until 12:00",
             "failed"),
            ("a 407 without parent_proxy.auth", viaParentWithoutAuth, upTo407,
             "fail 502 http_request_denied: parent proxy p:3128 answered CONNECT origin.example:443 with 407 Proxy Authentication Required", "failed"),
            ("another refusal", viaParent, upToConnect + [.connectAnswered(ResponseHead(status: 403, reason: "Forbidden"))],
             "fail 502 destination_unavailable: parent proxy p:3128 answered CONNECT origin.example:443 with 403 Forbidden", "failed"),
            ("2xx whose mutual authentication failed", viaParent,
             upToConnect + [.connectAnswered(response(200)), .parentAuthCompleted(mutualAuthFailure: "the parent's Negotiate reply does not verify")],
             "fail 502 http_protocol_error: the parent's Negotiate reply does not verify", "failed"),
        ]
        check(rows)
    }

    func testFailuresAndTimeoutsByStep() {
        let rows: [Row] = [
            ("connecting × stream failed", direct, [.streamFailed], "failDescribing tcp", "failed"),
            ("connecting × own listener", direct, [.connected, .socketChecked(ownListener: "127.0.0.1:3128")],
             "fail 403 destination_ip_prohibited: origin.example:443 is Countersign's own listening address 127.0.0.1:3128", "failed"),
            ("connecting × own listener, through a parent: the parent is named", viaParent, [.connected, .socketChecked(ownListener: "127.0.0.1:3128")],
             "fail 403 destination_ip_prohibited: parent proxy p:3128 is Countersign's own listening address 127.0.0.1:3128", "failed"),
            ("connecting × step timed out: TCP has no step deadline", direct, [.stepTimedOut], "nothing", "connecting"),
            ("parentHandshake × stream failed", viaTLSParentToTLSOrigin, upToConnect + [.streamFailed], "failDescribing parentHandshake", "failed"),
            ("parentHandshake × step timed out", viaTLSParentToTLSOrigin, upToConnect + [.stepTimedOut],
             "fail 504 connection_timeout: TLS handshake with the parent proxy p:3129 not completed within 10s", "failed"),
            ("parentHandshake × refused", viaTLSParentToTLSOrigin,
             upToConnect + [.connected, .trustEvaluated(ProxyError(.tlsCertificateError, details: "p: not trusted"))],
             "fail 502 tls_certificate_error: p: not trusted", "failed"),
            ("originHandshake × stream failed", directTLS, upToConnect + [.streamFailed], "failDescribing originHandshake", "failed"),
            ("originHandshake × step timed out", directTLS, upToConnect + [.stepTimedOut],
             "fail 504 connection_timeout: TLS handshake with origin.example port 443 not completed within 10s", "failed"),
            ("originHandshake × refused", directTLS, upToConnect + [.connected, .trustEvaluated(ProxyError(.tlsCertificateError, details: "o: pin"))],
             "fail 502 tls_certificate_error: o: pin", "failed"),
            ("awaitingConnectAnswer × stream failed", viaParent, upToConnect + [.streamFailed],
             "fail 502 connection_terminated: parent proxy p:3128 closed the connection during CONNECT origin.example:443", "failed"),
            ("awaitingConnectAnswer × step timed out", viaParent, upToConnect + [.stepTimedOut],
             "fail 504 http_response_timeout: parent proxy p:3128 did not answer CONNECT origin.example:443 within 15s", "failed"),
            ("awaitingConnectAnswer × invalid head", viaParent, upToConnect + [.stepImpossible(ProxyError(.httpProtocolError, details: "bad"))],
             "fail 502 http_protocol_error: bad", "failed"),
            ("decidingChallenge × stream failed", viaParent, upTo407 + [.streamFailed],
             "fail 502 connection_terminated: parent proxy p:3128 closed the connection during CONNECT origin.example:443", "failed"),
            ("discardingChallengeBody × stream failed", viaParent, upTo407 + [.challengeDecided(.answer(answer), lockOut: nil), .streamFailed],
             "fail 502 connection_terminated: parent proxy p:3128 closed the connection during CONNECT origin.example:443", "failed"),
            ("discardingChallengeBody × step timed out: header_timeout bounds the 407's body too", viaParent,
             upTo407 + [.challengeDecided(.answer(answer), lockOut: nil), .stepTimedOut],
             "fail 504 http_response_timeout: parent proxy p:3128 did not answer CONNECT origin.example:443 within 15s", "failed"),
            ("discardingChallengeBody × connected again: nothing", viaParent, upTo407 + [.challengeDecided(.answer(answer), lockOut: nil), .connected],
             "nothing", "discardingChallengeBody(basic)"),
            ("preparingParentCredential × stream failed (the KDC's own bound)", viaParent,
             upTo407 + [.challengeDecided(.prepareKerberos(kerberos), lockOut: nil), .streamFailed], "failDescribing tcp", "failed"),
            ("preparingParentCredential × step timed out", viaParent,
             upTo407 + [.challengeDecided(.prepareKerberos(kerberos), lockOut: nil), .stepTimedOut], "nothing",
             "preparingParentCredential(407)"),
            ("awaitingConnectAnswer × connected again: nothing", viaParent, upToConnect + [.connected], "nothing", "awaitingConnectAnswer"),
            ("decidingChallenge × connected again: nothing", viaParent, upTo407 + [.connected], "nothing", "decidingChallenge(407)"),
            ("connecting × no TLS could start", directTLS, [.stepImpossible(ProxyError(.proxyInternalError, details: "cannot start TLS"))],
             "fail 502 proxy_internal_error: cannot start TLS", "failed"),
        ]
        check(rows)
    }

    /// Once ready or failed, late events (a timer, a stream event before the user took the
    /// stream) do nothing.
    func testTerminalStatesIgnoreEverything() {
        let late: [UpstreamDial.Event] = [.connected, .streamFailed, .stepTimedOut, .parentCredentialPrepared, .connectAnswered(response(200)),
                                          .stepImpossible(ProxyError(.proxyInternalError, details: "x"))]
        for event in late {
            XCTAssertEqual(run(direct, [.connected, .socketChecked(ownListener: nil), event]).action, "nothing", "ready × \(event)")
            XCTAssertEqual(run(direct, [.streamFailed, event]).action, "nothing", "failed × \(event)")
        }
    }

    func testOnlyTheConnectStepsReadTheStream() {
        var dial = UpstreamDial(viaParent)
        XCTAssertEqual(dial.reading, .nothing)
        _ = dial.handle(.connected)
        _ = dial.handle(.socketChecked(ownListener: nil))
        XCTAssertEqual(dial.reading, .connectAnswer)
        _ = dial.handle(.connectAnswered(response(407, [("Content-Length", "0")])))
        XCTAssertEqual(dial.reading, .nothing, "deciding the 407 reads nothing more")
        _ = dial.handle(.challengeDecided(.answer(answer), lockOut: nil))
        XCTAssertEqual(dial.reading, .challengeBody)
        _ = dial.handle(.challengeBodyDiscarded)
        XCTAssertEqual(dial.reading, .connectAnswer, "the next CONNECT's answer")
    }
}
