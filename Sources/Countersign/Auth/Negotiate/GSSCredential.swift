import COpenSSL

/// Where a Kerberos credential's tickets come from.
public enum KerberosSource: Sendable {
    /// A keytab: MIT gets (and, as they near expiry, gets again) tickets from it by itself.
    case keytab(path: String)
    /// A password, exchanged for tickets kept in memory (never in a file).
    case password(String)
    /// An existing ticket cache, e.g. "FILE:/tmp/krb5cc_app", renewed by whoever fills it.
    case ccache(String)
}

/// An initiator credential for one principal. Keytab credentials get their own in-memory
/// ticket cache (named per credential), so two credentials never share or overwrite tickets and
/// nothing is written to disk; all options go per call through the "cred store", never through
/// process-wide environment variables.
final class GSSCredential: @unchecked Sendable {
    let api: GSSAPI
    private(set) var handle: UnsafeMutableRawPointer?
    /// Seconds the tickets behind it stay valid, as the library said when it was acquired;
    /// nil when it did not say (GSS_C_INDEFINITE, or a keytab it refreshes by itself).
    let lifetime: UInt32?

    init(api: GSSAPI, principal: String, source: KerberosSource, cacheName: String) throws {
        self.api = api
        let name = try api.name(principal, type: GSSAPI.krb5PrincipalOID)
        var minor: UInt32 = 0
        var handle: UnsafeMutableRawPointer?
        var seconds: UInt32 = GSSAPI.indefinite
        let major: UInt32
        switch source {
        case .password(let password):
            var bytes = Array(password.utf8)
            major = bytes.withUnsafeMutableBytes { raw in
                var buffer = cs_gss_buffer_desc(length: raw.count, value: raw.baseAddress)
                // Asked for SPNEGO by name: MIT's default mechanism set yields a Kerberos-only
                // credential here, which SPNEGO then cannot use.
                return api.withOID(GSSAPI.spnegoOID) { spnego in
                    var mechanisms = cs_gss_OID_set_desc(count: 1, elements: spnego)
                    return api.acquireCredWithPassword(&minor, name.handle, &buffer, GSSAPI.indefinite, &mechanisms,
                                                       GSSAPI.initiateOnly, &handle, nil, &seconds)
                }
            }
            for index in bytes.indices { bytes[index] = 0 }
        case .keytab(let path):
            major = GSSCredential.acquire(api, name, store: [("client_keytab", path), ("ccache", "MEMORY:countersign-\(cacheName)")],
                                          minor: &minor, handle: &handle, seconds: &seconds)
        case .ccache(let cache):
            major = GSSCredential.acquire(api, name, store: [("ccache", cache)], minor: &minor, handle: &handle, seconds: &seconds)
        }
        guard !GSSAPI.failed(major), handle != nil else {
            throw GSSError(operation: "getting Kerberos credentials for \(principal)", message: api.statusMessage(major: major, minor: minor), minor: minor)
        }
        self.handle = handle
        lifetime = seconds == GSSAPI.indefinite ? nil : seconds
    }

    private static func acquire(_ api: GSSAPI, _ name: GSSName, store: [(String, String)], minor: inout UInt32,
                                handle: inout UnsafeMutableRawPointer?, seconds: inout UInt32) -> UInt32 {
        let strings = store.map { (strdup($0.0)!, strdup($0.1)!) }
        defer { for (key, value) in strings { free(key); free(value) } }
        var elements = strings.map { cs_gss_key_value_element_desc(key: UnsafePointer($0.0), value: UnsafePointer($0.1)) }
        return elements.withUnsafeMutableBufferPointer { buffer in
            var set = cs_gss_key_value_set_desc(count: UInt32(buffer.count), elements: buffer.baseAddress)
            return api.acquireCredFrom(&minor, name.handle, GSSAPI.indefinite, nil, GSSAPI.initiateOnly, &set, &handle, nil, &seconds)
        }
    }

    deinit {
        var minor: UInt32 = 0
        _ = api.releaseCred(&minor, &handle)
    }
}
