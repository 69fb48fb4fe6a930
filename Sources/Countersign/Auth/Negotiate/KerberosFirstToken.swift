import FoundationEssentials

/// The first Negotiate token of a context, asked for off the event loop: getting it may
/// contact the KDC (acquiring the credential's tickets, then the service ticket), which can
/// take as long as the library's timeouts when the KDC does not answer. Later legs and the
/// check of the server's final token are local and stay on the loop.
public struct KerberosRequest: @unchecked Sendable, CustomStringConvertible {
    public let credential: KerberosCredential
    public let service: String
    /// RFC 5929 application data of the connection the token is for; nil off TLS.
    public let bindings: [UInt8]?

    /// Whether a prepared token answers this request (same credential, service and connection).
    func matches(_ other: KerberosRequest) -> Bool {
        credential === other.credential && service == other.service && bindings == other.bindings
    }

    public var description: String { "Kerberos ticket for \(service) as \(credential.principal)" }
}

/// A first token made for a request, or why none could be.
public struct PreparedNegotiate: @unchecked Sendable {
    public let request: KerberosRequest
    let result: Result<(handshake: NegotiateHandshake, first: String), AuthError>

    /// For a request the worker could not even queue (too many waiting): the reason is the answer.
    public static func refused(_ request: KerberosRequest, reason: String) -> PreparedNegotiate {
        PreparedNegotiate(request: request, result: .failure(AuthError(reason)))
    }

    /// A failure that took this long came from a KDC that is slow or silent, not from a stale
    /// credential: it is not asked a second time.
    static let slowKDC: TimeInterval = 5

    /// Makes the token: blocking, so only ever on a KDC thread (`KDCQueue`) or in `check`.
    public static func make(_ request: KerberosRequest, now: Date = Date()) -> PreparedNegotiate {
        let kerberos = request.credential
        let started = Date()
        do {
            return PreparedNegotiate(request: request, result: .success(try begin(request, now: now)))
        } catch let error as GSSAPI.LoadError {
            return PreparedNegotiate(request: request, result: .failure(AuthError(error.description)))
        } catch let error where (error as? GSSError)?.kdcUnreachable == true || Date().timeIntervalSince(started) > slowKDC {
            // Asking again would wait out the same timeouts on the same silent KDC.
            return PreparedNegotiate(request: request, result: .failure(
                AuthError("no Kerberos ticket for \(request.service) as \(kerberos.principal): \(error)")))
        } catch {
            // Tickets may have run out or a rotated secret may be in place: once more, afresh.
            kerberos.discard()
            do {
                return PreparedNegotiate(request: request, result: .success(try begin(request, now: now)))
            } catch {
                return PreparedNegotiate(request: request, result: .failure(
                    AuthError("no Kerberos ticket for \(request.service) as \(kerberos.principal): \(error)")))
            }
        }
    }

    private static func begin(_ request: KerberosRequest, now: Date) throws -> (handshake: NegotiateHandshake, first: String) {
        let api = try request.credential.library()
        let context = try GSSSecurityContext(api: api, credential: try request.credential.current(now: now), service: request.service,
                                             channelBinding: request.bindings)
        let handshake = NegotiateHandshake(context: context)
        return (handshake, try handshake.start())
    }
}
