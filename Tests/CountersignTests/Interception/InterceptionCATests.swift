import Foundation
import XCTest
@testable import CountersignInterception

final class InterceptionCATests: XCTestCase {
    private func mode(of path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
    }

    func testCreateWritesAPrivateKeyAndAPublicCertificate() throws {
        let directory = try TemporaryDirectory()
        let ca = try InterceptionCA.create(certificatePath: directory.file("certs/ca.pem"), keyPath: directory.file("certs/ca.key"),
                                           scope: try .hosts(["api.example.com"]), force: false, machineName: "buildbox")
        XCTAssertEqual(try mode(of: directory.file("certs/ca.key")), 0o600)
        XCTAssertEqual(try mode(of: directory.file("certs/ca.pem")), 0o644)
        XCTAssertEqual(ca.commonName, "Countersign interception CA (buildbox)")
        let key = try OpenSSLTool.run(["pkey", "-in", directory.file("certs/ca.key"), "-noout", "-text"])
        XCTAssertEqual(key.status, 0)
        XCTAssertTrue(key.output.contains("NIST CURVE: P-256"), key.output)
        let tenYears = 10 * 365 * 24 * 3600.0
        XCTAssertEqual(ca.notAfter.timeIntervalSinceNow, tenYears, accuracy: 60)
    }

    func testCreateRefusesToOverwriteWithoutForceAndNamesTheFiles() throws {
        let directory = try TemporaryDirectory()
        let first = try InterceptionCA.make(in: directory, hosts: ["api.example.com"])
        let keyBefore = try String(contentsOfFile: directory.file("ca.key"))
        XCTAssertThrowsError(try InterceptionCA.create(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"),
                                                       scope: .unconstrained, force: false)) { error in
            XCTAssertEqual("\(error)", "refusing to overwrite the existing \(directory.file("ca.pem")) and \(directory.file("ca.key")); "
                + "pass --force to replace the CA (clients that trust the old one must then trust the new one)")
        }
        XCTAssertEqual(try String(contentsOfFile: directory.file("ca.key")), keyBefore, "the key is untouched")
        XCTAssertEqual(try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))
            .sha256Fingerprint, first.sha256Fingerprint)
    }

    func testForceReplacesBothFilesAndTheKeyStaysPrivate() throws {
        let directory = try TemporaryDirectory()
        let first = try InterceptionCA.make(in: directory, hosts: ["api.example.com"])
        chmod(directory.file("ca.key"), 0o644)
        let second = try InterceptionCA.create(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"),
                                               scope: .unconstrained, force: true)
        XCTAssertNotEqual(first.sha256Fingerprint, second.sha256Fingerprint)
        XCTAssertEqual(try mode(of: directory.file("ca.key")), 0o600)
        let loaded = try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))
        XCTAssertEqual(loaded.sha256Fingerprint, second.sha256Fingerprint)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["ca.key", "ca.pem"],
                       "no temporary files are left behind")
    }

    func testTheCertificateIsASelfSignedCAThatOpenSSLAccepts() throws {
        let directory = try TemporaryDirectory()
        _ = try InterceptionCA.make(in: directory, hosts: ["api.example.com", "10.0.0.1"])
        let verified = try OpenSSLTool.run(["verify", "-CAfile", directory.file("ca.pem"), directory.file("ca.pem")])
        XCTAssertEqual(verified.status, 0, verified.output)
        let extensions = try OpenSSLTool.run(["x509", "-in", directory.file("ca.pem"), "-noout", "-ext",
                                              "basicConstraints,keyUsage,subjectKeyIdentifier,nameConstraints"]).output
        for expected in ["X509v3 Basic Constraints: critical", "CA:TRUE, pathlen:0",
                         "X509v3 Key Usage: critical", "Certificate Sign, CRL Sign",
                         "X509v3 Subject Key Identifier", "X509v3 Name Constraints: critical",
                         "DNS:api.example.com", "IP:10.0.0.1/255.255.255.255", "Excluded:", "IP:0:0:0:0:0:0:0:0/0:0:0:0:0:0:0:0"] {
            XCTAssertTrue(extensions.contains(expected), "missing \(expected) in\n\(extensions)")
        }
        let serial = try OpenSSLTool.run(["x509", "-in", directory.file("ca.pem"), "-noout", "-serial"]).output
        XCTAssertEqual(serial.trimmingCharacters(in: .whitespacesAndNewlines).count, "serial=".count + 32, "a 128-bit serial")
    }

    func testLoadReadsTheConstraintsBack() throws {
        let directory = try TemporaryDirectory()
        let scope = try CAScope.hosts(["api.example.com", "*.corp.test", "[2001:db8::1]:443"])
        _ = try InterceptionCA.create(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"),
                                      scope: scope, force: false)
        let loaded = try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))
        XCTAssertEqual(CAScope.constrained(try XCTUnwrap(loaded.nameConstraints)), scope)
        XCTAssertTrue(loaded.permits(host: "api.example.com"))
        XCTAssertTrue(loaded.permits(host: "db.corp.test"))
        XCTAssertTrue(loaded.permits(host: "[2001:db8::1]"))
        XCTAssertTrue(loaded.permits(host: "*.corp.test"))
        XCTAssertFalse(loaded.permits(host: "www.example.com"))
    }

    func testAnUnconstrainedCAHasNoConstraintsAndPermitsEveryHost() throws {
        let directory = try TemporaryDirectory()
        _ = try InterceptionCA.make(in: directory, hosts: nil)
        let loaded = try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))
        XCTAssertNil(loaded.nameConstraints)
        XCTAssertTrue(loaded.permits(host: "anything.example"))
        XCTAssertTrue(loaded.permits(host: "192.0.2.9"))
        XCTAssertTrue(loaded.permits(host: "*.example.com"))
        XCTAssertFalse(loaded.permits(host: "not a host"))
        let text = try OpenSSLTool.text(ofCertificate: directory.file("ca.pem"))
        XCTAssertFalse(text.contains("Name Constraints"))
    }

    func testLoadExplainsAMissingFile() throws {
        let directory = try TemporaryDirectory()
        XCTAssertThrowsError(try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))) { error in
            XCTAssertEqual("\(error)", "the interception CA certificate \(directory.file("ca.pem")) does not exist; "
                + "create it with `countersign ca init`")
        }
    }

    func testLoadRefusesAKeyFromAnotherCA() throws {
        let first = try TemporaryDirectory(), second = try TemporaryDirectory()
        _ = try InterceptionCA.make(in: first, hosts: nil)
        _ = try InterceptionCA.make(in: second, hosts: nil)
        XCTAssertThrowsError(try InterceptionCA.load(certificatePath: first.file("ca.pem"), keyPath: second.file("ca.key"))) { error in
            XCTAssertTrue("\(error)".hasPrefix("the interception CA key \(second.file("ca.key")) does not belong to the certificate"), "\(error)")
            XCTAssertFalse("\(error)".contains("PRIVATE KEY"))
        }
    }

    func testLoadRefusesAnExpiredCA() throws {
        let directory = try TemporaryDirectory()
        let elevenYearsAgo = Date(timeIntervalSinceNow: -11 * 365 * 24 * 3600)
        _ = try InterceptionCA.make(in: directory, hosts: nil, now: elevenYearsAgo)
        XCTAssertThrowsError(try InterceptionCA.load(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"))) { error in
            XCTAssertTrue("\(error)".contains("expired on"), "\(error)")
            XCTAssertTrue("\(error)".contains("countersign ca init --force"), "\(error)")
        }
    }

    func testTrustInstructionsCarryThePEMFingerprintAndEveryClientRecipe() throws {
        let directory = try TemporaryDirectory()
        let ca = try InterceptionCA.make(in: directory, hosts: ["api.example.com"])
        let text = try InterceptionCA.trustInstructions(certificatePath: directory.file("ca.pem"))
        XCTAssertTrue(text.contains(ca.certificatePEM))
        XCTAssertTrue(text.contains(ca.sha256Fingerprint))
        let fingerprint = try OpenSSLTool.run(["x509", "-in", directory.file("ca.pem"), "-noout", "-fingerprint", "-sha256"]).output
        XCTAssertTrue(fingerprint.contains(ca.sha256Fingerprint), "matches openssl's fingerprint: \(fingerprint)")
        for recipe in ["/usr/local/share/ca-certificates/countersign.crt", "update-ca-certificates", "SSL_CERT_FILE",
                       "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS=\(directory.file("ca.pem"))",
                       "keytool -importcert", "curl --cacert", "permitted DNS:api.example.com",
                       "valid until:      \(CertificateFacts.timestamp(ca.notAfter))"] {
            XCTAssertTrue(text.contains(recipe), "missing \(recipe) in\n\(text)")
        }
        XCTAssertFalse(text.contains("PRIVATE KEY"))
    }
}
