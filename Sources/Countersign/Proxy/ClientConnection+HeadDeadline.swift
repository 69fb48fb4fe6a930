import CountersignInterception
import CountersignHTTP
import CountersignSupport

/// The head deadline of a client connection (`limits.header_timeout`): it runs from the
/// connection's start (an intercepted one's, from its TLS handshake) and from the first byte
/// of each later head, ciphertext included, and no byte pushes it back. Between requests it
/// does not run: the idle timeout rules there.
extension ClientConnection {
    func restartHeadDeadline() {
        if headDeadline == nil {
            headDeadline = Deadline(base: context.base) { [unowned self] in self.headTimedOut() }
        }
        headDeadline?.restart(seconds: context.config.limits.headerTimeout)
    }

    /// Bytes of a head arrived (or ciphertext that may hold some): the head has begun, and
    /// its deadline runs from the first of them, whatever comes after.
    func headBegan() {
        guard state == .readingHead else { return }
        if let interception, !interception.handshakeDone { return }
        if headDeadline == nil {
            headDeadline = Deadline(base: context.base) { [unowned self] in self.headTimedOut() }
        }
        headDeadline?.begin(seconds: context.config.limits.headerTimeout)
    }

    /// Between requests the idle timeout rules; the next head's deadline starts with its
    /// first byte. Ciphertext already read (a record in progress) counts as that byte.
    func awaitNextHead() {
        headDeadline?.end()
        // Asked with no retain around the stream: reading its state lets nothing go.
        if withHeld(stream, { $0.holdsUndecryptedInput }) { return headBegan() }
        stream.rawReadWatch?.arm()
    }

    func handshakeFinished() {
        interception?.handshakeDone = true
        if startHTTP2IfNegotiated() { return }
        // Its deadline is met; the first request is awaited like any next one.
        awaitNextHead()
    }

    func headTimedOut() {
        guard state == .readingHead else { return }
        let headerTimeout = Seconds.text(context.config.limits.headerTimeout)
        if let interception, !interception.handshakeDone {
            context.log.warn("the TLS handshake with the client for \(interception.authority.host) was not completed within \(headerTimeout) (header_timeout)",
                             [("client", .string(peer.description)), ("host", .string(interception.authority.host))])
            shutdown(.now)
            return
        }
        if stream.inputLength == 0 && exchangesServed == 0 {
            // A connection that never sent a byte gets no answer.
            shutdown(.now)
            return
        }
        let record = newRecord()
        fail(with: ProxyError(.httpRequestError(status: 408), details: "request head not received within \(headerTimeout)"), record: record, close: true)
    }

    func logClientHandshakeFailure(host: String, event: StreamEvent) {
        let failure = ClientHandshakeFailure(host: host, openSSLErrors: stream.takeOpenSSLErrors())
        context.log.warn(failure.description, [("client", .string(peer.description)), ("host", .string(host)), ("event", .string(event.description))])
    }
}
