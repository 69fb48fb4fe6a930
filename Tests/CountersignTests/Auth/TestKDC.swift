import Foundation
import XCTest
@testable import CountersignAuth

/// A throwaway MIT KDC on a loopback port with a test realm, created per test case: a client
/// principal with a keytab, and an HTTP service principal. Needs krb5-kdc, krb5-admin-server
/// (scripts/install-test-deps.sh installs them); tests skip where they are not installed.
final class TestKDC {
    static let realm = "COUNTERSIGN.TEST"
    /// The password of pwuser@COUNTERSIGN.TEST.
    static let password = "pw-\(UUID().uuidString.prefix(8))"
    let directory: URL
    let port: Int
    private let process: Process
    var keytab: String { directory.appendingPathComponent("client.keytab").path }
    var serviceKeytab: String { directory.appendingPathComponent("service.keytab").path }
    var configFile: String { directory.appendingPathComponent("krb5.conf").path }

    static func tool(_ name: String) -> String? {
        ["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    init(clientPrincipal: String = "client@\(TestKDC.realm)", servicePrincipal: String = "HTTP/localhost@\(TestKDC.realm)") throws {
        guard let kdb5 = TestKDC.tool("kdb5_util"), let kadmin = TestKDC.tool("kadmin.local"), let kdc = TestKDC.tool("krb5kdc") else {
            throw XCTSkip("MIT KDC not installed (scripts/install-test-deps.sh installs krb5-kdc and krb5-admin-server)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-kdc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = TestKDC.freePort()
        let dir = directory.path
        try """
        [libdefaults]
         default_realm = \(TestKDC.realm)
         dns_lookup_kdc = false
         dns_lookup_realm = false
         rdns = false
         dns_canonicalize_hostname = false
         udp_preference_limit = 1
        [realms]
         \(TestKDC.realm) = {
          kdc = 127.0.0.1:\(port)
          database_name = \(dir)/principal
          key_stash_file = \(dir)/stash
         }
        [domain_realm]
         localhost = \(TestKDC.realm)
        """.write(toFile: "\(dir)/krb5.conf", atomically: true, encoding: .utf8)
        try """
        [kdcdefaults]
         kdc_tcp_listen = 127.0.0.1:\(port)
         kdc_listen = 127.0.0.1:\(port)
        [realms]
         \(TestKDC.realm) = {
          database_name = \(dir)/principal
          key_stash_file = \(dir)/stash
          acl_file = \(dir)/kadm5.acl
         }
        """.write(toFile: "\(dir)/kdc.conf", atomically: true, encoding: .utf8)
        let environment = ["KRB5_CONFIG": "\(dir)/krb5.conf", "KRB5_KDC_PROFILE": "\(dir)/kdc.conf", "PATH": "/usr/sbin:/usr/bin"]
        try TestKDC.run(kdb5, ["create", "-s", "-P", "master-\(UUID().uuidString)", "-r", TestKDC.realm], environment)
        try TestKDC.run(kadmin, ["-q", "addprinc -randkey \(clientPrincipal)"], environment)
        try TestKDC.run(kadmin, ["-q", "addprinc -randkey \(servicePrincipal)"], environment)
        try TestKDC.run(kadmin, ["-q", "ktadd -k \(dir)/client.keytab \(clientPrincipal)"], environment)
        try TestKDC.run(kadmin, ["-q", "addprinc -pw \(TestKDC.password) pwuser@\(TestKDC.realm)"], environment)
        try TestKDC.run(kadmin, ["-q", "ktadd -k \(dir)/service.keytab \(servicePrincipal)"], environment)
        process = Process()
        process.executableURL = URL(fileURLWithPath: kdc)
        process.arguments = ["-n"]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: "\(dir)/kdc.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: "\(dir)/kdc.log")
        try process.run()
        // Ready when it accepts TCP connections.
        var tries = 0
        while tries < 100, !TestKDC.accepts(port) {
            tries += 1
            usleep(50_000)
        }
    }

    deinit { stop() }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func remove() {
        stop()
        if ProcessInfo.processInfo.environment["KEEP_KDC"] == nil { try? FileManager.default.removeItem(at: directory) }
    }

    private static func run(_ tool: String, _ arguments: [String], _ environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "TestKDC", code: Int(process.terminationStatus), userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments) failed"])
        }
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
    }
}

/// A test case with a fresh KDC and the loaded library; skipped where either is missing.
/// KRB5_CONFIG is process-wide, which these tests (unlike the product) may set.
class KDCTestCase: XCTestCase {
    var kdc: TestKDC!
    var api: GSSAPI!

    override func setUpWithError() throws {
        do { api = try GSSAPI(path: GSSAPI.defaultLibrary) } catch { throw XCTSkip("\(error)") }
        kdc = try TestKDC()
        setenv("KRB5_CONFIG", kdc.configFile, 1)
    }

    override func tearDown() {
        unsetenv("KRB5_CONFIG")
        kdc?.remove()
    }
}
