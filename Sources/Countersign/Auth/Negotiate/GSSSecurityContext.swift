import COpenSSL

/// One SPNEGO security context with a service (RFC 4559): the initiator's side of the legs,
/// with mutual authentication and, over TLS, the `tls-server-end-point` channel binding.
final class GSSSecurityContext: @unchecked Sendable {
    enum Step: Equatable {
        /// Send this token and expect the server's next one.
        case continueWith([UInt8])
        /// The context is established; a last token to send, if the mechanism made one.
        case complete([UInt8]?)
    }

    private let api: GSSAPI
    private let credential: GSSCredential
    private let target: GSSName
    private let service: String
    /// RFC 5929 application data ("tls-server-end-point:" + certificate hash), nil off TLS.
    private let channelBinding: [UInt8]?
    private var handle: UnsafeMutableRawPointer?
    private(set) var isEstablished = false

    init(api: GSSAPI, credential: GSSCredential, service: String, channelBinding: [UInt8]?) throws {
        self.api = api
        self.credential = credential
        self.service = service
        self.channelBinding = channelBinding
        // "HTTP@host" is a host-based service; "HTTP/host@REALM" (a configured spn) a principal.
        target = try api.name(service, type: service.contains("/") ? GSSAPI.krb5PrincipalOID : GSSAPI.hostBasedServiceOID)
    }

    /// The next leg: nil input for the first token, else the server's token.
    func step(_ input: [UInt8]?) throws -> Step {
        var minor: UInt32 = 0
        var output = cs_gss_buffer_desc(length: 0, value: nil)
        var returnedFlags: UInt32 = 0
        var inputBytes = input ?? []
        let major = inputBytes.withUnsafeMutableBytes { inputRaw in
            var inputBuffer = cs_gss_buffer_desc(length: inputRaw.count, value: inputRaw.baseAddress)
            return api.withChannelBindings(channelBinding) { bindings in
                api.withOID(GSSAPI.spnegoOID) { mech in
                    withUnsafeMutablePointer(to: &inputBuffer) { inputPointer in
                        api.initSecContext(&minor, credential.handle, &handle, target.handle, mech, GSSAPI.mutualFlag, 0, bindings,
                                           input == nil ? nil : inputPointer, nil, &output, &returnedFlags, nil)
                    }
                }
            }
        }
        defer { _ = api.releaseBuffer(&minor, &output) }
        let token = output.value.map { Array(UnsafeRawBufferPointer(start: $0, count: output.length)) } ?? []
        guard !GSSAPI.failed(major) else {
            throw GSSError(operation: input == nil ? "starting Kerberos for \(service)" : "checking the token from \(service)",
                           message: api.statusMessage(major: major, minor: minor), minor: minor)
        }
        if major & GSSAPI.continueNeeded != 0 { return .continueWith(token) }
        // Asked for, mutual authentication is a guarantee only when the library says it happened.
        guard returnedFlags & GSSAPI.mutualFlag != 0 else {
            throw GSSError(operation: "authenticating \(service)", message: "the service did not prove its identity (no mutual authentication)")
        }
        isEstablished = true
        return .complete(token.isEmpty ? nil : token)
    }

    deinit {
        var minor: UInt32 = 0
        _ = api.deleteSecContext(&minor, &handle, nil)
    }
}
