import Foundation
import XCTest
import CountersignSupport
import CountersignTrust
@testable import CountersignSigning

/// RFC 9421 Appendix B.2: the example request and response (B.2) signed with the keys of B.1.
/// HMAC-SHA256 and Ed25519 are deterministic, so our signatures must equal the RFC's byte for
/// byte; RSA-PSS and ECDSA are randomized, so the RFC's signatures must verify with our base
/// and our own must verify with the RFC's public keys (and fail once the message changes).
final class RFC9421VectorTests: XCTestCase {
    static let keys = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("rfc9421")
    /// B.1.5 test-shared-secret.
    static let sharedSecret = Base64.decode("uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==")!
    static let created: Int64 = 1618884473

    static let request = SignableRequest(method: "POST", scheme: "https", authority: "example.com", target: "/foo?param=Value&Pet=dog", fields: [
        ("Host", "example.com"), ("Date", "Tue, 20 Apr 2021 02:07:55 GMT"), ("Content-Type", "application/json"),
        ("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:"),
        ("Content-Length", "18"),
    ])
    static let response = SignableResponse(status: 200, fields: [
        ("Date", "Tue, 20 Apr 2021 02:07:56 GMT"), ("Content-Type", "application/json"),
        ("Content-Digest", "sha-512=:mEWXIS7MaLRuGgxOBdODa3xqM1XdEvxoYhvlCFJ41QJgJc4GTsPp29l5oGX69wWdXymyU0rjJuahq4l5aGgfLQ==:"),
        ("Content-Length", "23"),
    ], request: request)

    private func privateKey(_ name: String) throws -> PrivateKey {
        try PrivateKey.loadPEMFile(path: Self.keys.appendingPathComponent("\(name).key").path)
    }

    private func publicKey(_ name: String) throws -> PublicKey {
        try PublicKey.loadPEMFile(path: Self.keys.appendingPathComponent("\(name).pem").path)
    }

    private func components(_ names: [String]) throws -> [SignatureComponent] { try names.map(SignatureComponent.parse) }

    // MARK: - Deterministic: byte-for-byte

    /// B.2.5: HMAC-SHA256 over date, @authority, content-type.
    func testB25HMACSignatureIsTheRFCs() throws {
        let key = try MessageSigningKey(sharedSecret: Self.sharedSecret)
        let fields = try MessageSigner.sign(.request(Self.request), label: "sig-b25", components: components(["date", "@authority", "content-type"]),
                                            parameters: SignatureParameters(created: Self.created, keyID: "test-shared-secret"), key: key)
        XCTAssertEqual(fields.signatureInput, #"sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret""#)
        XCTAssertEqual(fields.signature, "sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:")
    }

    /// B.2.5's signature base, line for line as the RFC prints it.
    func testB25SignatureBaseIsTheRFCs() throws {
        let base = try SignatureBase.build(.request(Self.request), components: components(["date", "@authority", "content-type"]),
                                           parameters: SignatureParameters(created: Self.created, keyID: "test-shared-secret").structured).base
        XCTAssertEqual(base, """
        "date": Tue, 20 Apr 2021 02:07:55 GMT
        "@authority": example.com
        "content-type": application/json
        "@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"
        """)
    }

    /// B.2.6: Ed25519 over date, @method, @path, @authority, content-type, content-length.
    func testB26Ed25519SignatureIsTheRFCs() throws {
        let key = try MessageSigningKey(privateKey: privateKey("test-key-ed25519"))
        XCTAssertEqual(key.algorithm, .ed25519)
        let fields = try MessageSigner.sign(.request(Self.request), label: "sig-b26",
                                            components: components(["date", "@method", "@path", "@authority", "content-type", "content-length"]),
                                            parameters: SignatureParameters(created: Self.created, keyID: "test-key-ed25519"), key: key)
        XCTAssertEqual(fields.signature, "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:")
    }

    // MARK: - Randomized: the RFC's signatures verify, ours verify

    /// B.2.1 (no components, nonce), B.2.2 (@query-param, tag), B.2.3 (everything): RSA-PSS-SHA512.
    func testB21ToB23RSAPSSSignaturesVerify() throws {
        let verifier = try MessageVerifyingKey(publicKey: publicKey("test-key-rsa-pss"))
        XCTAssertEqual(verifier.algorithm, .rsaPSSSHA512)
        let cases: [(String, String, String)] = [
            (#"sig-b21=();created=1618884473;keyid="test-key-rsa-pss";nonce="b3k2pp5k7z-50gnwp.yemd""#,
             "d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopemLJcWDy/lkbbHAve4cRAtx31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG52eSkFxykJeNqsrWH5S+oxNFlD4dzVuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0mKZsfxVrogUvA4HELjVKWmAvtl6UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw1fV5/SITLq9mhho8K3+7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q==", "sig-b21"),
            (#"sig-b22=("@authority" "content-digest" "@query-param";name="Pet");created=1618884473;keyid="test-key-rsa-pss";tag="header-example""#,
             "LjbtqUbfmvjj5C5kr1Ugj4PmLYvx9wVjZvD9GsTT4F7GrcQEdJzgI9qHxICagShLRiLMlAJjtq6N4CDfKtjvuJyE5qH7KT8UCMkSowOB4+ECxCmT8rtAmj/0PIXxi0A0nxKyB09RNrCQibbUjsLS/2YyFYXEu4TRJQzRw1rLEuEfY17SARYhpTlaqwZVtR8NV7+4UKkjqpcAoFqWFQh62s7Cl+H2fjBSpqfZUJcsIk4N6wiKYd4je2U/lankenQ99PZfB4jY3I5rSV2DSBVkSFsURIjYErOs0tFTQosMTAoxk//0RoKUqiYY8Bh0aaUEb0rQl3/XaVe4bXTugEjHSw==", "sig-b22"),
            (#"sig-b23=("date" "@method" "@path" "@query" "@authority" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-rsa-pss""#,
             "bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yBiMIRGOnMYwZ/5MR6fb0Kh1rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fUxN0O0iC59DzYx8DFll5GmydPxSmme9v6ULbMFkl+V5B1TP/yPViV7KsLNmvKiLJH1pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1ipwvKvfrs65ldmlu9bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zbhl5ZJzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA==", "sig-b23"),
        ]
        for (input, signature, label) in cases {
            var request = Self.request
            request.fields += [("Signature-Input", input), ("Signature", "\(label)=:\(signature):")]
            let result = MessageVerifier.verify(.request(request), key: verifier, keyID: "test-key-rsa-pss",
                                                requirements: VerificationRequirements(requiredComponents: [], maxAge: nil), now: Self.created)
            XCTAssertEqual(try? result.get(), label, "\(label): \(result)")
            request.fields[0] = ("Host", "example.org")
            request.authority = "example.org"
            request.query = "param=Value&Pet=cat"
            if label != "sig-b21" {
                XCTAssertNil(try? MessageVerifier.verify(.request(request), key: verifier, keyID: nil,
                                                         requirements: VerificationRequirements(requiredComponents: [], maxAge: nil), now: Self.created).get(),
                             "\(label) must not verify over another authority and query")
            }
        }
    }

    /// B.2.4: a response signed with ECDSA P-256 over @status and three fields.
    func testB24ECDSAResponseSignatureVerifies() throws {
        let verifier = try MessageVerifyingKey(publicKey: publicKey("test-key-ecc-p256"))
        var response = Self.response
        response.fields += [("Signature-Input", #"sig-b24=("@status" "content-type" "content-digest" "content-length");created=1618884473;keyid="test-key-ecc-p256""#),
                            ("Signature", "sig-b24=:wNmSUAhwb5LxtOtOpNa6W5xj067m5hFrj0XQ4fvpaCLx0NKocgPquLgyahnzDnDAUy5eCdlYUEkLIj+32oiasw==:")]
        let required = try components(["@status", "content-digest"])
        let result = MessageVerifier.verify(.response(response), key: verifier, keyID: "test-key-ecc-p256",
                                            requirements: VerificationRequirements(requiredComponents: required, maxAge: 300), now: Self.created + 10)
        XCTAssertEqual(try? result.get(), "sig-b24", "\(result)")
    }

    func testOurRandomizedSignaturesVerifyWithTheRFCKeysAndFailWhenTheMessageChanges() throws {
        let pairs: [(String, SignatureAlgorithm?, SignatureAlgorithm)] = [
            ("test-key-rsa-pss", nil, .rsaPSSSHA512), ("test-key-ecc-p256", nil, .ecdsaP256SHA256),
            ("test-key-rsa", .rsaV15SHA256, .rsaV15SHA256), ("test-key-rsa", nil, .rsaPSSSHA512),
        ]
        let covered = try components(["@method", "@target-uri", "content-digest", #""@query-param";name="param""#])
        for (name, asked, expected) in pairs {
            let signer = try MessageSigningKey(privateKey: privateKey(name), algorithm: asked)
            XCTAssertEqual(signer.algorithm, expected, name)
            let fields = try MessageSigner.sign(.request(Self.request), label: "cs", components: covered,
                                                parameters: SignatureParameters(created: Self.created, algorithm: "", keyID: name), key: signer)
            XCTAssertTrue(fields.signatureInput.contains(#"alg="\#(expected.rawValue)""#), fields.signatureInput)
            var request = Self.request
            request.fields += [("Signature-Input", fields.signatureInput), ("Signature", fields.signature)]
            let verifier = try MessageVerifyingKey(publicKey: publicKey(name), algorithm: asked)
            let requirements = VerificationRequirements(requiredComponents: covered, maxAge: 60)
            XCTAssertEqual(try? MessageVerifier.verify(.request(request), key: verifier, keyID: name, requirements: requirements, now: Self.created).get(), "cs", name)
            request.method = "PUT"
            XCTAssertNil(try? MessageVerifier.verify(.request(request), key: verifier, keyID: name, requirements: requirements, now: Self.created).get(), name)
        }
    }
}
