/// A head the proxy forwards, ready to be written: its start line and the rewrite of its
/// received fields (`FieldRewrite`). It is written once, into memory of at least `byteBound`
/// bytes, which is the output buffer's own free space on the usual path: no array is built
/// first and copied.
public struct ForwardedHead {
    private enum StartLine {
        /// `METHOD target HTTP/1.1`.
        case request(method: String, target: String)
        /// `HTTP/1.1 status reason`.
        case status(Int, reason: String)
    }

    private let startLine: StartLine
    private let fields: FieldRewrite
    /// The most the head can take; what it takes is at most this.
    public let byteBound: Int

    init(method: String, target: String, fields: consuming FieldRewrite) {
        startLine = .request(method: method, target: target)
        byteBound = HeadSerializer.requestLineBound(method: method, target: target) + fields.byteBound
        self.fields = fields
    }

    init(status: Int, reason: String, fields: consuming FieldRewrite) {
        startLine = .status(status, reason: reason)
        byteBound = HeadSerializer.statusLineBound(reason: reason) + fields.byteBound
        self.fields = fields
    }

    public func write(to out: inout HeadWriter) {
        switch startLine {
        case .request(let method, let target): HeadSerializer.writeRequestLine(method: method, target: target, to: &out)
        case .status(let status, let reason): HeadSerializer.writeStatusLine(status: status, reason: reason, to: &out)
        }
        fields.write(to: &out)
    }

    /// The head as an array (a head that is signed before it goes; tests).
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.appendHead(bound: byteBound) { write(to: &$0) }
        return out
    }
}
