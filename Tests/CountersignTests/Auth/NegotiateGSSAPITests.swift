import Foundation
import XCTest
@testable import CountersignAuth

/// The run-time GSSAPI loader.
final class GSSAPILoaderTests: XCTestCase {
    func testMissingLibraryIsAClearErrorNamingThePackage() {
        XCTAssertThrowsError(try GSSAPI(path: "/nonexistent/libgssapi_krb5.so.2")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("libgssapi-krb5-2"), text)
            XCTAssertTrue(text.contains("/nonexistent/libgssapi_krb5.so.2"), text)
        }
    }

    /// COUNTERSIGN_GSSAPI_LIBRARY (tests only) stands in for a machine without Kerberos.
    func testTheOverrideVariableNamesTheFileToLoad() {
        XCTAssertEqual(GSSAPI.libraryPath(override: nil), "libgssapi_krb5.so.2")
        XCTAssertEqual(GSSAPI.libraryPath(override: ""), "libgssapi_krb5.so.2")
        XCTAssertEqual(GSSAPI.libraryPath(override: "/nonexistent"), "/nonexistent")
    }

    func testALibraryWithoutTheCallsIsRefused() {
        // libc loads, but has no gss_* symbols.
        XCTAssertThrowsError(try GSSAPI(path: "libc.so.6")) { error in
            XCTAssertTrue("\(error)".contains("lacks gss_import_name"), "\(error)")
        }
    }
}

/// The initiator calls through the loaded library, against a real MIT KDC on loopback.
final class NegotiateGSSAPITests: KDCTestCase {
    private func keytabCredential(_ principal: String = "client@\(TestKDC.realm)") throws -> GSSCredential {
        try GSSCredential(api: api, principal: principal, source: .keytab(path: kdc.keytab), cacheName: "test-\(UUID().uuidString)")
    }

    /// A keytab credential gets a service ticket from the KDC, and the first SPNEGO token
    /// carries it: the whole initiator path through the dlopen'ed library.
    func testKeytabCredentialProducesASPNEGOTokenWithChannelBinding() throws {
        let credential = try keytabCredential()
        let binding = Array("tls-server-end-point:".utf8) + [UInt8](repeating: 7, count: 32)
        let context = try GSSSecurityContext(api: api, credential: credential, service: "HTTP@localhost", channelBinding: binding)
        guard case .continueWith(let token) = try context.step(nil) else { return XCTFail("a mutual context needs the server's reply") }
        // RFC 2743 §3.1 initial context token: [APPLICATION 0] then the SPNEGO OID 1.3.6.1.5.5.2.
        XCTAssertEqual(token.first, 0x60)
        XCTAssertTrue(token.count > 100, "the token carries a Kerberos AP-REQ")
        let oidAt = token.count > 1 && token[1] & 0x80 != 0 ? 2 + Int(token[1] & 0x7f) : 2
        XCTAssertEqual(Array(token[oidAt..<oidAt + 8]), [0x06, 0x06] + GSSAPI.spnegoOID)
        XCTAssertFalse(context.isEstablished)
    }

    private func handshake(clientBinding: [UInt8]?, serviceBinding: [UInt8]?,
                           tamper: Bool = false) throws -> GSSSecurityContext {
        let credential = try keytabCredential()
        let client = try GSSSecurityContext(api: api, credential: credential, service: "HTTP@localhost", channelBinding: clientBinding)
        let service = try TestAcceptor(api: api, serviceKeytab: kdc.serviceKeytab, expectedBinding: serviceBinding)
        guard case .continueWith(let first) = try client.step(nil) else { throw XCTSkip("unexpected one-leg context") }
        var (reply, complete) = try service.step(first)
        XCTAssertTrue(complete, "Kerberos through SPNEGO completes at the service in one leg")
        if tamper { reply[reply.count - 5] ^= 0x40 }
        _ = try client.step(reply)
        return client
    }

    private let binding = Array("tls-server-end-point:".utf8) + [UInt8](repeating: 0xAB, count: 32)

    /// The service's final token is checked: the context is established only with mutual authentication.
    func testMutualAuthenticationCompletesWithTheServicesToken() throws {
        XCTAssertTrue(try handshake(clientBinding: binding, serviceBinding: binding).isEstablished)
    }

    /// A service whose final token does not verify (forged, or not the service the ticket is for) is refused.
    func testATamperedServiceTokenIsRefused() throws {
        XCTAssertThrowsError(try handshake(clientBinding: binding, serviceBinding: binding, tamper: true)) { error in
            XCTAssertTrue("\(error)".contains("checking the token from HTTP@localhost"), "\(error)")
        }
    }

    /// An Extended-Protection service refuses a token bound to another certificate (a relay
    /// through a second TLS connection), not only a mismatched one in the library's say-so.
    func testChannelBindingIsEnforcedByTheService() throws {
        let other = Array("tls-server-end-point:".utf8) + [UInt8](repeating: 0xCD, count: 32)
        XCTAssertThrowsError(try handshake(clientBinding: other, serviceBinding: binding)) { error in
            XCTAssertTrue("\(error)".contains("accepting"), "\(error)")
        }
    }

    /// A password credential gets its tickets in memory; a wrong password is refused by the KDC.
    func testPasswordCredential() throws {
        let credential = try GSSCredential(api: api, principal: "pwuser@\(TestKDC.realm)", source: .password(TestKDC.password), cacheName: "unused")
        let context = try GSSSecurityContext(api: api, credential: credential, service: "HTTP@localhost", channelBinding: nil)
        guard case .continueWith = try context.step(nil) else { return XCTFail("expected a first token") }
        XCTAssertThrowsError(try GSSCredential(api: api, principal: "pwuser@\(TestKDC.realm)", source: .password("wrong"), cacheName: "unused")) { error in
            XCTAssertFalse("\(error)".contains("wrong"), "the password is not repeated in the error")
        }
    }

    /// An existing ticket cache (here filled by kinit) is used as is.
    func testTicketCacheCredential() throws {
        guard let kinit = TestKDC.tool("kinit") else { throw XCTSkip("kinit not installed") }
        let cache = "FILE:\(kdc.directory.path)/ccache"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: kinit)
        process.arguments = ["-k", "-t", kdc.keytab, "client@\(TestKDC.realm)"]
        process.environment = ["KRB5_CONFIG": kdc.configFile, "KRB5CCNAME": cache]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let credential = try GSSCredential(api: api, principal: "client@\(TestKDC.realm)", source: .ccache(cache), cacheName: "unused")
        let context = try GSSSecurityContext(api: api, credential: credential, service: "HTTP@localhost", channelBinding: nil)
        guard case .continueWith = try context.step(nil) else { return XCTFail("expected a first token") }
        XCTAssertThrowsError(try GSSCredential(api: api, principal: "client@\(TestKDC.realm)", source: .ccache("FILE:\(kdc.directory.path)/none"), cacheName: "unused"))
    }

    func testUnknownServiceIsAnErrorInTheLibrarysWords() throws {
        let credential = try keytabCredential()
        let context = try GSSSecurityContext(api: api, credential: credential, service: "HTTP@unknown.invalid", channelBinding: nil)
        XCTAssertThrowsError(try context.step(nil)) { error in
            XCTAssertTrue("\(error)".contains("HTTP@unknown.invalid"), "\(error)")
        }
    }

    /// With a keytab, MIT gets the first ticket when the credential is acquired: a KDC that
    /// cannot be reached is an error there (what makes `negotiate, ntlm` fall back).
    func testKDCDownIsAnError() throws {
        kdc.stop()
        XCTAssertThrowsError(try keytabCredential()) { error in
            XCTAssertTrue("\(error)".contains("Cannot contact any KDC"), "\(error)")
        }
    }

    func testWrongKeytabIsAnError() throws {
        XCTAssertThrowsError(try keytabCredential("someone-else@\(TestKDC.realm)")) { error in
            XCTAssertTrue("\(error)".contains("someone-else@"), "\(error)")
        }
    }

    func testRealKeytabIsParsed() throws {
        let keytab = try KeytabFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: kdc.keytab))))
        XCTAssertTrue(keytab.holds("client@\(TestKDC.realm)"))
        XCTAssertFalse(keytab.holds("HTTP/localhost@\(TestKDC.realm)"))
        XCTAssertFalse(keytab.holds("client@OTHER.REALM"))
        XCTAssertTrue(keytab.entries.allSatisfy { $0.keyVersion >= 1 })
    }
}

final class KeytabFileTests: XCTestCase {
    private func entry(realm: String, components: [String], kvno8: UInt8, enctype: UInt16, key: [UInt8], kvno32: UInt32?) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xff)] }
        func u32(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xff) } }
        func string(_ s: String) -> [UInt8] { u16(UInt16(s.utf8.count)) + Array(s.utf8) }
        var body = u16(UInt16(components.count)) + string(realm)
        for component in components { body += string(component) }
        body += u32(1) + u32(1_700_000_000) + [kvno8] + u16(enctype) + u16(UInt16(key.count)) + key
        if let kvno32 { body += u32(kvno32) }
        return u32(UInt32(body.count)) + body
    }

    func testPrincipalsAndHolesAndLongKeyVersions() throws {
        var bytes: [UInt8] = [0x05, 0x02]
        bytes += entry(realm: "CORP.EXAMPLE", components: ["HTTP", "web.corp.example"], kvno8: 3, enctype: 18, key: Array(repeating: 1, count: 32), kvno32: nil)
        bytes += [0xff, 0xff, 0xff, 0xf8] + Array(repeating: 0, count: 8)   // a hole of 8 bytes
        bytes += entry(realm: "CORP.EXAMPLE", components: ["svc"], kvno8: 0, enctype: 17, key: Array(repeating: 2, count: 16), kvno32: 300)
        let keytab = try KeytabFile(bytes: bytes)
        XCTAssertEqual(keytab.entries.map(\.principal), ["HTTP/web.corp.example@CORP.EXAMPLE", "svc@CORP.EXAMPLE"])
        XCTAssertEqual(keytab.entries.map(\.keyVersion), [3, 300])
        XCTAssertTrue(keytab.holds("svc@CORP.EXAMPLE"))
        XCTAssertFalse(keytab.holds("svc@corp.example"), "principals compare exactly, as Kerberos compares them")
    }

    func testDamagedFilesAreRefused() {
        XCTAssertThrowsError(try KeytabFile(bytes: Array("not a keytab".utf8))) { XCTAssertTrue("\($0)".contains("not a keytab")) }
        XCTAssertThrowsError(try KeytabFile(bytes: [0x05, 0x01])) { XCTAssertTrue("\($0)".contains("version 1")) }
        var truncated: [UInt8] = [0x05, 0x02]
        truncated += entry(realm: "R", components: ["a"], kvno8: 1, enctype: 18, key: [1, 2, 3], kvno32: nil).dropLast(2)
        XCTAssertThrowsError(try KeytabFile(bytes: truncated)) { XCTAssertTrue("\($0)".contains("truncated")) }
    }

    func testKeyBytesAreNotKept() throws {
        let secret: [UInt8] = Array("SECRETKEYBYTES..".utf8)
        let keytab = try KeytabFile(bytes: [0x05, 0x02] + entry(realm: "R", components: ["a"], kvno8: 1, enctype: 17, key: secret, kvno32: nil))
        XCTAssertFalse("\(keytab)".contains("SECRETKEYBYTES"))
    }
}
