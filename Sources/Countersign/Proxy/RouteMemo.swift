import CountersignHTTP
import Foundation

/// A client connection's last absolute-form request that was forwarded, as a route decided
/// once: a keep-alive client asks the same `scheme://authority` again and again, and the next
/// such request, under the same snapshot generation, takes the upstream decided for it without
/// parsing the authority, looking up its `hosts` entry or spelling its `Host` field again
/// (~2,000 instructions a request). The decision is a function of the target's
/// `scheme://authority` bytes, the listener and the snapshot (`Routing.routeTarget`), and a
/// connection's listener is fixed: nothing else can change it.
struct RouteMemo {
    /// A class: reading the memo is then one retain, not a copy of every field.
    private final class Decided {
        let generation: Int
        /// The target's bytes up to its path: `http://host:port`, exactly as the client wrote them.
        let origin: [UInt8]
        let authority: Authority
        let upstream: UpstreamTarget

        init(generation: Int, origin: [UInt8], authority: Authority, upstream: UpstreamTarget) {
            self.generation = generation
            self.origin = origin
            self.authority = authority
            self.upstream = upstream
        }
    }

    private var last: Decided?

    /// The route decided for a target that starts as the last one did, with its own path; nil
    /// when this target (or the snapshot) is not the one remembered. The path gets the checks
    /// `RequestTarget.parse` makes of it (no fragment), as the authority did when remembered.
    func forward(_ target: RequestTargetText, method: String, generation: Int) -> (authority: Authority, upstream: UpstreamTarget, path: String)? {
        guard let last, last.generation == generation, !RequestMethod.equal(method, "CONNECT") else { return nil }
        return target.withBytes { bytes -> (Authority, UpstreamTarget, String)? in
            let origin = last.origin
            guard bytes.count >= origin.count, let start = bytes.baseAddress,
                  origin.withUnsafeBytes({ $0.baseAddress.map { memcmp($0, start, origin.count) == 0 } ?? false }) else { return nil }
            let rest = UnsafeBufferPointer(rebasing: bytes[origin.count...])
            // The authority ends where the path (or query) begins: `http://a.example.net/` is not `http://a.example`.
            if let first = rest.first, first != UInt8(ascii: "/") && first != UInt8(ascii: "?") { return nil }
            if rest.contains(UInt8(ascii: "#")) { return nil }
            let path: String
            if rest.isEmpty {
                path = "/"
            } else if rest[0] == UInt8(ascii: "?") {
                path = "/" + String(decoding: rest, as: UTF8.self)
            } else {
                path = String(decoding: rest, as: UTF8.self)
            }
            return (last.authority, last.upstream, path)
        }
    }

    /// Remembers the upstream decided for absolute-form `target` (whose `scheme://authority`
    /// parsed as `authority`) under snapshot `generation`.
    mutating func remember(_ target: String, authority: Authority, upstream: UpstreamTarget, generation: Int) {
        let bytes = Array(target.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 3 <= bytes.count else { return }
        let authorityStart = colon + 3
        let end = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        last = Decided(generation: generation, origin: Array(bytes[..<end]), authority: authority, upstream: upstream)
    }
}
