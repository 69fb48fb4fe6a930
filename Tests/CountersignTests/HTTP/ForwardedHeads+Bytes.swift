@testable import CountersignHTTP

/// The forwarded heads as arrays, for tests to compare: the proxy writes them straight into
/// its output buffers (`ForwardedHead`).
extension ForwardedHeads {
    static func request(_ head: RequestHead, framing: BodyFraming, target: String, hostField: String,
                        answers: [(name: FieldName, value: [UInt8])], handshakeLeg: Bool, ownExpect: Bool,
                        receivedIn: HTTPVersion? = nil) -> [UInt8] {
        requestHead(head, framing: framing, target: target, hostField: hostField, answers: answers, handshakeLeg: handshakeLeg,
                    ownExpect: ownExpect, receivedIn: receivedIn).bytes
    }

    static func response(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion,
                         clientKeepAlive: Bool, receivedIn: HTTPVersion? = nil) -> (head: [UInt8], rawBody: Bool) {
        let (head, raw) = responseHead(response, framing: framing, clientVersion: clientVersion, clientKeepAlive: clientKeepAlive,
                                       receivedIn: receivedIn)
        return (head.bytes, raw)
    }
}
