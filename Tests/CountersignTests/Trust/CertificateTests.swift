import XCTest
@testable import CountersignTrust

final class CertificateTests: XCTestCase {
    let fixture = PKIFixture.shared

    func testReadsNamesValidityAndSubjectAltNames() throws {
        let leaf = try fixture.certificate("leaf.pem")
        XCTAssertEqual(leaf.subject, "CN=leaf,O=Countersign Tests")
        XCTAssertEqual(leaf.issuer, "CN=Countersign Test Intermediate,O=Countersign Tests")
        XCTAssertEqual(leaf.dnsNames, ["localhost"])
        XCTAssertEqual(leaf.ipAddresses, ["127.0.0.1", "::1"])
        XCTAssertEqual(leaf.signatureDigestName, "SHA256")
        XCTAssertFalse(leaf.isSelfIssued)
        XCTAssertTrue(try fixture.certificate("self-signed.pem").isSelfIssued)
    }

    func testValidityIsSecondsSince1970() throws {
        let expired = try fixture.certificate("expired.pem")
        XCTAssertEqual(expired.notBefore, 1_577_836_800) // 2020-01-01T00:00:00Z
        XCTAssertEqual(expired.notAfter, 1_704_067_200) // 2024-01-01T00:00:00Z
        XCTAssertEqual(UTCTimestamp.string(expired.notAfter), "2024-01-01T00:00:00Z")
    }

    func testFingerprintEqualsTheOpenSSLCommandLine() throws {
        let expected = Shell.pipeline("openssl x509 -in '\(fixture.path("leaf.pem"))' -noout -fingerprint -sha256")
            .split(separator: "=").last.map(String.init)
        XCTAssertEqual(PinReport.fingerprint(try fixture.certificate("leaf.pem").sha256), expected)
    }

    func testAChainFileWithADamagedCertificateAfterAGoodOneIsAnError() throws {
        // OpenSSL stops at the damaged block: the intermediate after it would silently be missing.
        let leaf = try fixture.certificate("leaf.pem").pem
        let damaged = try fixture.certificate("intermediate.pem").pem.replacingOccurrences(of: "\n", with: "\n!")
        XCTAssertThrowsError(try Certificate.parsePEM(Array((leaf + damaged).utf8), source: "chain.pem")) { error in
            XCTAssertTrue("\(error)".hasPrefix("chain.pem has 2 certificate blocks, but only the first 1 can be read"), "\(error)")
        }
    }

    func testLoadsEveryCertificateOfAChainFileInOrder() throws {
        let chain = try fixture.certificates("leaf-chain.pem")
        XCTAssertEqual(chain.map(\.subject), ["CN=leaf,O=Countersign Tests",
                                              "CN=Countersign Test Intermediate,O=Countersign Tests"])
    }

    func testDERRoundTripAndPEMText() throws {
        let leaf = try fixture.certificate("leaf.pem")
        XCTAssertEqual(try Certificate(der: leaf.der), leaf)
        XCTAssertEqual(try Certificate(pem: leaf.pem).der, leaf.der)
    }

    func testUnreadableInputsAreErrorsNamingTheFile() throws {
        XCTAssertThrowsError(try Certificate.loadPEMFile(path: fixture.path("missing.pem"))) { error in
            XCTAssertTrue("\(error)".contains("cannot read certificate file \(self.fixture.path("missing.pem"))"), "\(error)")
        }
        XCTAssertThrowsError(try Certificate.loadPEMFile(path: fixture.path("leaf.key"))) { error in
            XCTAssertTrue("\(error)".contains("contains no PEM certificate"), "\(error)")
        }
        XCTAssertThrowsError(try Certificate(der: [0x30, 0x03, 0x01, 0x01, 0xff]))
    }
}

final class IdentityTests: XCTestCase {
    let fixture = PKIFixture.shared

    func testPEMIdentityWithChain() throws {
        let identity = try ClientIdentity.load(pem: fixture.path("client-chain.pem"), keyPath: fixture.path("client.key"))
        XCTAssertEqual(identity.certificate.subject, "CN=client,O=Countersign Tests")
        XCTAssertEqual(identity.chain.map(\.subject), ["CN=Countersign Test Intermediate,O=Countersign Tests"])
        XCTAssertEqual(identity.notAfter, identity.certificate.notAfter)
        XCTAssertEqual(identity.privateKey.algorithm, "RSA")
    }

    func testEncryptedPEMKeyNeedsTheRightPassphrase() throws {
        let certificate = fixture.path("client.pem")
        let key = fixture.path("client-encrypted.key")
        XCTAssertNoThrow(try ClientIdentity.load(pem: certificate, keyPath: key, passphrase: "client-pass"))
        XCTAssertThrowsError(try ClientIdentity.load(pem: certificate, keyPath: key, passphrase: "wrong")) { error in
            XCTAssertEqual("\(error)", "private key \(key) could not be decrypted: wrong passphrase")
        }
        XCTAssertThrowsError(try ClientIdentity.load(pem: certificate, keyPath: key)) { error in
            XCTAssertEqual("\(error)", "private key \(key) is encrypted: configure its passphrase")
        }
    }

    func testKeyThatDoesNotMatchTheCertificateIsRefused() {
        let certificate = fixture.path("client.pem")
        let key = fixture.path("other.key")
        XCTAssertThrowsError(try ClientIdentity.load(pem: certificate, keyPath: key)) { error in
            XCTAssertEqual("\(error)", "the private key \(key) does not match the certificate \(certificate)"
                + " (CN=client,O=Countersign Tests)")
        }
    }

    func testPKCS12Identity() throws {
        let path = fixture.path("client.p12")
        let identity = try ClientIdentity.load(pkcs12: path, passphrase: "p12-pass")
        XCTAssertEqual(identity.certificate, try fixture.certificate("client.pem"))
        XCTAssertEqual(identity.chain.map(\.subject), ["CN=Countersign Test Intermediate,O=Countersign Tests"])
        XCTAssertThrowsError(try ClientIdentity.load(pkcs12: path, passphrase: "nope")) { error in
            XCTAssertEqual("\(error)", "\(path) could not be opened: wrong passphrase")
        }
        XCTAssertThrowsError(try ClientIdentity.load(pkcs12: fixture.path("client.pem"), passphrase: "p12-pass")) { error in
            XCTAssertTrue("\(error)".contains("is not a PKCS#12 file"), "\(error)")
        }
    }

    func testDescriptionsNeverShowSecrets() throws {
        let source = IdentitySource.pem(certificatePath: "c.pem", keyPath: "k.pem", passphrase: "hunter2")
        XCTAssertFalse("\(source)".contains("hunter2"))
        let key = try PrivateKey.loadPEMFile(path: fixture.path("client.key"))
        XCTAssertEqual("\(key)", "PrivateKey(RSA)")
    }
}
