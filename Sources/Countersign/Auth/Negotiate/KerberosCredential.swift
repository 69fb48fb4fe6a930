import Foundation
import CountersignSupport

/// A configured Kerberos credential as the answering machine holds it: the principal, where
/// its tickets come from, and the GSSAPI credential acquired from that on first use. One per
/// credential and configuration snapshot, shared by every worker; a reload makes a new one, so
/// a keytab or password rotated on disk takes effect then.
///
/// Tickets got with a password (or read from a cache someone else fills) run out: the
/// credential is acquired again shortly before they do, and after a failure. A keytab
/// credential is refreshed by the library itself.
public final class KerberosCredential: @unchecked Sendable, CustomStringConvertible, CustomReflectable {
    public let principal: String
    private let source: KerberosSource
    /// Names this credential's in-memory ticket cache (keytab): unique per snapshot.
    private let cacheName: String
    private let load: () -> Result<GSSAPI, GSSAPI.LoadError>
    private let held = Mutex<Held?>(nil)

    private struct Held {
        let credential: GSSCredential
        /// When to acquire again (nil: never on time alone).
        let renewAt: Date?

        func isFresh(now: Date) -> Bool { renewAt.map { now < $0 } ?? true }
    }

    public init(principal: String, source: KerberosSource, cacheName: String,
                library: @escaping () -> Result<GSSAPI, GSSAPI.LoadError> = { GSSAPI.shared }) {
        self.principal = principal
        self.source = source
        self.cacheName = cacheName
        self.load = library
    }

    /// The loaded library, or why Kerberos cannot be used on this machine.
    public func library() throws -> GSSAPI { try load().get() }

    /// A credential whose tickets are still good, acquired now when there is none or when the
    /// one held is about to run out.
    func current(now: Date) throws -> GSSCredential {
        if let fresh = held.withLock({ $0.flatMap { $0.isFresh(now: now) ? $0.credential : nil } }) { return fresh }
        // Acquired outside the lock: with a password, acquiring asks the KDC for a ticket, and a
        // KDC thread stuck on a KDC that does not answer must not hold every other one behind
        // it (a thread started once the KDC answers again acquires on its own).
        let api = try library()
        let credential = try GSSCredential(api: api, principal: principal, source: source, cacheName: cacheName)
        return held.withLock { held in
            if let other = held, other.isFresh(now: now) { return other.credential }   // acquired meanwhile: one is kept
            held = Held(credential: credential, renewAt: Self.renewal(of: credential, source: source, acquired: now))
            return credential
        }
    }

    /// Gets a ticket for `service` (by making a first token for it), as `check --online` does.
    public func obtainTicket(for service: String, now: Date = Date()) throws {
        let context = try GSSSecurityContext(api: try library(), credential: try current(now: now), service: service, channelBinding: nil)
        _ = try NegotiateHandshake(context: context).start()
    }

    /// Drops the held credential (a context could not be started with it): the next use
    /// acquires it again, from a password, cache or keytab that may have changed meanwhile.
    func discard() {
        held.withLock { $0 = nil }
    }

    /// When tickets from a password or a cache are acquired again: a fifth of their lifetime,
    /// at most five minutes, before they end.
    static func renewal(of credential: GSSCredential, source: KerberosSource, acquired: Date) -> Date? {
        if case .keytab = source { return nil }
        guard let lifetime = credential.lifetime else { return nil }
        let margin = min(300, Double(lifetime) / 5)
        return acquired.addingTimeInterval(Double(lifetime) - margin)
    }

    public var description: String { "Kerberos credential for \(principal)" }
    public var customMirror: Mirror { Mirror(self, children: ["principal": principal], displayStyle: .class) }
}
