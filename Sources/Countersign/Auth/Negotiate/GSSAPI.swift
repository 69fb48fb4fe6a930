import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// The system's GSSAPI (MIT Kerberos' `libgssapi_krb5.so.2`), loaded at run time the way
/// Chromium does it: Countersign builds and runs without Kerberos, and only a configuration
/// that uses it needs the library. Every GSSAPI call Countersign makes goes through this type.
public final class GSSAPI: @unchecked Sendable {
    /// The Debian package that provides the library, for error messages.
    public static let package = "libgssapi-krb5-2"
    public static let defaultLibrary = "libgssapi_krb5.so.2"
    /// For tests only: another file to load instead; a path that does not exist stands for a
    /// machine without Kerberos (a system library cannot be hidden with LD_LIBRARY_PATH).
    public static let libraryOverrideVariable = "COUNTERSIGN_GSSAPI_LIBRARY"

    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The process's library, loaded on first use; the failure is kept so every use names it.
    public static let shared: Result<GSSAPI, LoadError> = {
        let path = libraryPath(override: getenv(libraryOverrideVariable).map { String(cString: $0) })
        return Result { try GSSAPI(path: path) }.mapError { $0 as! LoadError }
    }()

    /// The file to load: the override when set and not empty, else the system's library.
    static func libraryPath(override: String?) -> String {
        guard let override, !override.isEmpty else { return defaultLibrary }
        return override
    }

    let importName: cs_gss_import_name_fn
    let releaseName: cs_gss_release_name_fn
    let initSecContext: cs_gss_init_sec_context_fn
    let deleteSecContext: cs_gss_delete_sec_context_fn
    let releaseBuffer: cs_gss_release_buffer_fn
    let acquireCredFrom: cs_gss_acquire_cred_from_fn
    let acquireCredWithPassword: cs_gss_acquire_cred_with_password_fn
    let releaseCred: cs_gss_release_cred_fn
    let displayStatus: cs_gss_display_status_fn

    public init(path: String) throws {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            throw LoadError(description: "Kerberos (Negotiate) needs the GSSAPI library \(path), which could not be loaded (\(reason)); install the \(GSSAPI.package) package")
        }
        func symbol<T>(_ name: String, _: T.Type) throws -> T {
            guard let address = dlsym(handle, name) else {
                throw LoadError(description: "the GSSAPI library \(path) lacks \(name) (MIT Kerberos 1.11 or later is needed); install the \(GSSAPI.package) package")
            }
            return unsafeBitCast(address, to: T.self)
        }
        // The handle stays open for the life of the process: the functions below point into it.
        importName = try symbol("gss_import_name", cs_gss_import_name_fn.self)
        releaseName = try symbol("gss_release_name", cs_gss_release_name_fn.self)
        initSecContext = try symbol("gss_init_sec_context", cs_gss_init_sec_context_fn.self)
        deleteSecContext = try symbol("gss_delete_sec_context", cs_gss_delete_sec_context_fn.self)
        releaseBuffer = try symbol("gss_release_buffer", cs_gss_release_buffer_fn.self)
        acquireCredFrom = try symbol("gss_acquire_cred_from", cs_gss_acquire_cred_from_fn.self)
        acquireCredWithPassword = try symbol("gss_acquire_cred_with_password", cs_gss_acquire_cred_with_password_fn.self)
        releaseCred = try symbol("gss_release_cred", cs_gss_release_cred_fn.self)
        displayStatus = try symbol("gss_display_status", cs_gss_display_status_fn.self)
    }

    // MARK: Constants (RFC 2744, RFC 4178, RFC 1964)

    static let completeStatus: UInt32 = 0           // GSS_S_COMPLETE
    static let continueNeeded: UInt32 = 1           // GSS_S_CONTINUE_NEEDED
    static let mutualFlag: UInt32 = 2               // GSS_C_MUTUAL_FLAG
    static let initiateOnly: Int32 = 1              // GSS_C_INITIATE
    static let indefinite: UInt32 = 0xFFFF_FFFF     // GSS_C_INDEFINITE

    /// 1.3.6.1.5.5.2, SPNEGO.
    static let spnegoOID: [UInt8] = [0x2b, 0x06, 0x01, 0x05, 0x05, 0x02]
    /// 1.2.840.113554.1.2.1.4, GSS_C_NT_HOSTBASED_SERVICE ("HTTP@host").
    static let hostBasedServiceOID: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04]
    /// 1.2.840.113554.1.2.2.1, GSS_KRB5_NT_PRINCIPAL_NAME ("svc@REALM").
    static let krb5PrincipalOID: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01]

    /// Whether a major status is an error (a calling or routine error; supplementary bits aside).
    static func failed(_ major: UInt32) -> Bool { major & 0xFFFF_0000 != 0 }

    /// Calls `body` with an OID the library can read; the bytes live for the call only.
    func withOID<R>(_ bytes: [UInt8], _ body: (UnsafeMutablePointer<cs_gss_OID_desc>) throws -> R) rethrows -> R {
        var copy = bytes
        return try copy.withUnsafeMutableBytes { raw in
            var oid = cs_gss_OID_desc(length: UInt32(raw.count), elements: raw.baseAddress)
            return try withUnsafeMutablePointer(to: &oid, body)
        }
    }

    /// Calls `body` with channel bindings carrying only `applicationData` (RFC 5929's
    /// "tls-server-end-point:" + hash; no addresses), or with nil when there are none.
    func withChannelBindings<R>(_ applicationData: [UInt8]?, _ body: (UnsafeMutablePointer<cs_gss_channel_bindings_desc>?) throws -> R) rethrows -> R {
        guard var bytes = applicationData else { return try body(nil) }
        return try bytes.withUnsafeMutableBytes { raw in
            let empty = cs_gss_buffer_desc(length: 0, value: nil)
            var bindings = cs_gss_channel_bindings_desc(initiator_addrtype: 0, initiator_address: empty, acceptor_addrtype: 0,
                                                        acceptor_address: empty,
                                                        application_data: cs_gss_buffer_desc(length: raw.count, value: raw.baseAddress))
            return try withUnsafeMutablePointer(to: &bindings, body)
        }
    }

    /// Imports a name ("HTTP@host" as a host-based service, or a Kerberos principal).
    func name(_ text: String, type: [UInt8]) throws -> GSSName {
        var minor: UInt32 = 0
        var handle: UnsafeMutableRawPointer?
        var bytes = Array(text.utf8)
        let major = bytes.withUnsafeMutableBytes { raw in
            var buffer = cs_gss_buffer_desc(length: raw.count, value: raw.baseAddress)
            return withOID(type) { oid in importName(&minor, &buffer, oid, &handle) }
        }
        guard !GSSAPI.failed(major), let handle else {
            throw GSSError(operation: "reading the name \(text)", message: statusMessage(major: major, minor: minor))
        }
        return GSSName(api: self, handle: handle)
    }

    /// The library's own words for a status: the GSSAPI major message and the mechanism's minor one.
    func statusMessage(major: UInt32, minor: UInt32) -> String {
        var parts: [String] = []
        for (value, type) in [(major, Int32(1)), (minor, Int32(2))] where value != 0 {
            var context: UInt32 = 0
            repeat {
                var ignored: UInt32 = 0
                var text = cs_gss_buffer_desc(length: 0, value: nil)
                guard !GSSAPI.failed(displayStatus(&ignored, value, type, nil, &context, &text)) else { break }
                if let value = text.value, text.length > 0 {
                    parts.append(String(decoding: UnsafeRawBufferPointer(start: value, count: text.length), as: UTF8.self))
                }
                _ = releaseBuffer(&ignored, &text)
            } while context != 0
        }
        return parts.isEmpty ? "GSSAPI status \(major)/\(minor)" : parts.joined(separator: ": ")
    }
}

/// A GSSAPI failure in the library's words (which name principals and hosts, never keys or tickets).
public struct GSSError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let message: String
    /// The mechanism's status code (a krb5 error code), 0 when none.
    public var minor: UInt32 = 0
    public var description: String { "\(operation) failed: \(message)" }

    /// KRB5_KDC_UNREACH: the library already waited out its timeouts on every KDC.
    public var kdcUnreachable: Bool { minor == UInt32(bitPattern: -1765328228) }
}

/// An imported name, released with its owner.
final class GSSName {
    let api: GSSAPI
    var handle: UnsafeMutableRawPointer?

    init(api: GSSAPI, handle: UnsafeMutableRawPointer) {
        self.api = api
        self.handle = handle
    }

    deinit {
        var minor: UInt32 = 0
        _ = api.releaseName(&minor, &handle)
    }
}
