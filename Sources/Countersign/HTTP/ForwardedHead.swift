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
    private var fields: FieldRewrite
    /// The most the head can take; what it takes is at most this.
    public private(set) var byteBound = 0

    /// `edit` makes the changes to the received fields, on the rewrite where the head holds it
    /// (made in place: a rewrite made apart and moved in was copied a few times per head).
    /// Inlined, as `FieldRewrite.init`, so that `edit` is too (called apart it was a closure
    /// context made and called for every head).
    @inline(__always)
    init(method: String, target: String, received: HeaderFields, keepUpgrade: Bool, edit: (inout FieldRewrite) -> Void) {
        startLine = .request(method: method, target: target)
        fields = FieldRewrite(received, keepUpgrade: keepUpgrade)
        edit(&fields)
        byteBound = HeadSerializer.requestLineBound(method: method, target: target) + fields.byteBound
    }

    @inline(__always)
    init(status: Int, reason: String, received: HeaderFields, edit: (inout FieldRewrite) -> Void) {
        startLine = .status(status, reason: reason)
        fields = FieldRewrite(received, keepUpgrade: false)
        edit(&fields)
        byteBound = HeadSerializer.statusLineBound(reason: reason) + fields.byteBound
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
