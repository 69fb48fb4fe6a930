import CountersignInterception

/// An intercepted client that chose `h2` by ALPN stops being read as HTTP/1.1: its TLS stream
/// goes to an `H2ClientSession`, which carries each stream as a connection of its own.
extension ClientConnection {
    /// Called when the client's handshake is done; true when the connection became HTTP/2.
    func startHTTP2IfNegotiated() -> Bool {
        guard let interception, clientProtocol == .http11, let ssl = stream.ssl, ALPNSelection.negotiated(ssl) == .h2 else { return false }
        state = .http2
        headDeadline?.end()
        headDeadline = nil
        let session = H2ClientSession(context: context, stream: stream, peer: peer, listener: listener, interception: interception) { [weak self] in
            self?.http2Session = nil
            self?.shutdown(.now)
        }
        http2Session = session
        session.start()
        return true
    }

    /// An access record for an exchange on this connection, saying which HTTP version the client
    /// spoke: the last exchange's, once its line is written and nothing holds it any more (made
    /// and freed per request, a record cost ~300 instructions), else a new one.
    func newRecord() -> AccessRecord {
        let record: AccessRecord
        // (No binding of the spare before the test: it would be a second reference.)
        if spareRecord?.phase == .cleared, isKnownUniquelyReferenced(&spareRecord!) {
            record = spareRecord!
            record.restart()
        } else {
            record = AccessRecord(client: peer)
            spareRecord = record
        }
        record.clientProtocol = clientProtocol
        return record
    }
}
