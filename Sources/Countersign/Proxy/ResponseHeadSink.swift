import CountersignHTTP
import CountersignSupport

/// Where an exchange's response heads go. A client connection writes them as HTTP/1.1 octets
/// on its stream; an HTTP/2 stream sends them as HEADERS (`H2StreamBridge`), so a parsed head
/// is never written as HTTP/1.1 only to be parsed back. Either way the body follows on the
/// client connection's stream, in the form `sendFinal` returns. The exchange neither knows
/// nor asks which one it answers.
protocol ResponseHeadSink: AnyObject {
    /// A `1xx` other than `101`, passed on before the final head.
    func sendInterim(_ response: ResponseHead)

    /// The final head as the exchange rewrote it. `framing` is its body's on the upstream,
    /// `clientVersion` the version of the request it answers, `receivedIn` the version the
    /// upstream answered in when the head does not say it (for Via). Returns how the body
    /// follows on the client's stream.
    func sendFinal(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion, clientKeepAlive: Bool,
                   receivedIn: HTTPVersion?) -> BodyPump.Output
}

/// An HTTP/1.1 client: the heads go as octets ahead of the body on the connection's stream.
extension ClientConnection: ResponseHeadSink {
    /// Where this connection's exchanges send their response heads: the HTTP/2 stream it
    /// carries, if it carries one, or itself.
    var responseHeads: ResponseHeadSink { h2Stream ?? self }

    /// `sendFinal` of `responseHeads`, called directly on this connection when it carries no
    /// HTTP/2 stream (through the existential, the connection was retained for a witness call).
    func sendFinalHead(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion, clientKeepAlive: Bool,
                       receivedIn: HTTPVersion?) -> BodyPump.Output {
        // Bound (retained) for the call: an HTTP/2 session that fails while sending may let
        // go of the bridge, which owns this connection.
        if let h2Stream {
            return h2Stream.sendFinal(response, framing: framing, clientVersion: clientVersion, clientKeepAlive: clientKeepAlive, receivedIn: receivedIn)
        }
        return sendFinal(response, framing: framing, clientVersion: clientVersion, clientKeepAlive: clientKeepAlive, receivedIn: receivedIn)
    }

    func sendInterim(_ response: ResponseHead) {
        stream.write(ForwardedHeads.interim(response))
    }

    func sendFinal(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion, clientKeepAlive: Bool,
                   receivedIn: HTTPVersion?) -> BodyPump.Output {
        let (head, raw) = ForwardedHeads.responseHead(response, framing: framing, clientVersion: clientVersion,
                                                      clientKeepAlive: clientKeepAlive, receivedIn: receivedIn)
        // Writing lets the stream (this connection's) go nowhere: no retain around it.
        withHeld(stream) { $0.write(head) }
        return raw ? .raw : .chunked
    }
}
