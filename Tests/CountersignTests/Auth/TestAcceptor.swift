import COpenSSL
import Foundation
@testable import CountersignAuth

/// The service's side of SPNEGO for tests (Countersign only ever initiates): the same
/// run-time library, gss_accept_sec_context with the service keytab and the channel bindings
/// the service expects.
final class TestAcceptor {
    typealias AcceptFunction = @convention(c) (
        UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?,
        UnsafeMutablePointer<cs_gss_buffer_desc>?, UnsafeMutablePointer<cs_gss_channel_bindings_desc>?,
        UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<cs_gss_buffer_desc>?,
        UnsafeMutablePointer<UInt32>?, UnsafeMutablePointer<UInt32>?, UnsafeMutableRawPointer?) -> UInt32

    private let api: GSSAPI
    private let accept: AcceptFunction
    private var context: UnsafeMutableRawPointer?
    private var credential: UnsafeMutableRawPointer?
    private let expectedBinding: [UInt8]?

    init(api: GSSAPI, serviceKeytab: String, expectedBinding: [UInt8]?) throws {
        self.api = api
        self.expectedBinding = expectedBinding
        let handle = dlopen(GSSAPI.defaultLibrary, RTLD_NOW | RTLD_LOCAL)
        accept = unsafeBitCast(dlsym(handle, "gss_accept_sec_context")!, to: AcceptFunction.self)
        var minor: UInt32 = 0
        let key = strdup("keytab")!, value = strdup(serviceKeytab)!
        defer { free(key); free(value) }
        var element = cs_gss_key_value_element_desc(key: key, value: value)
        // The set points at the element only for the duration of the call that reads it.
        let major = withUnsafeMutablePointer(to: &element) { elementPointer in
            var store = cs_gss_key_value_set_desc(count: 1, elements: elementPointer)
            return api.acquireCredFrom(&minor, nil, GSSAPI.indefinite, nil, 2 /* GSS_C_ACCEPT */, &store, &credential, nil, nil)
        }
        guard !GSSAPI.failed(major) else { throw GSSError(operation: "acceptor credential", message: api.statusMessage(major: major, minor: minor)) }
    }

    /// The service's reply to the client's token, and whether the context is complete.
    func step(_ token: [UInt8]) throws -> (reply: [UInt8], complete: Bool) {
        var minor: UInt32 = 0
        var output = cs_gss_buffer_desc(length: 0, value: nil)
        var flags: UInt32 = 0
        var input = token
        let major = input.withUnsafeMutableBytes { inputRaw in
            var inputBuffer = cs_gss_buffer_desc(length: inputRaw.count, value: inputRaw.baseAddress)
            return api.withChannelBindings(expectedBinding) { bindings in
                accept(&minor, &context, credential, &inputBuffer, bindings, nil, nil, &output, &flags, nil, nil)
            }
        }
        defer { _ = api.releaseBuffer(&minor, &output) }
        guard !GSSAPI.failed(major) else { throw GSSError(operation: "accepting", message: api.statusMessage(major: major, minor: minor)) }
        let reply = output.value.map { Array(UnsafeRawBufferPointer(start: $0, count: output.length)) } ?? []
        return (reply, major & GSSAPI.continueNeeded == 0)
    }

    deinit {
        var minor: UInt32 = 0
        _ = api.deleteSecContext(&minor, &context, nil)
        _ = api.releaseCred(&minor, &credential)
    }
}
