import COpenSSL
import XCTest
@testable import CountersignInterception

final class ClientHandshakeFailureTests: XCTestCase {
    private func sslError(_ reason: Int32) -> UInt {
        // ERR_PACK(ERR_LIB_SSL, 0, reason), as OpenSSL 3 packs library and reason.
        (UInt(ERR_LIB_SSL) << 23) | UInt(reason)
    }

    func testUntrustingAlertsMeanTheCAIsNotTrusted() {
        for alert in [SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN] {
            let failure = ClientHandshakeFailure(host: "api.example.com", openSSLErrors: [sslError(alert)])
            XCTAssertEqual(failure.description, "the client does not trust Countersign's CA for api.example.com; see `countersign ca show`")
        }
    }

    func testAnExpiredAlertPointsAtTheClocks() {
        let failure = ClientHandshakeFailure(host: "api.example.com", openSSLErrors: [sslError(SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED)])
        XCTAssertEqual(failure.cause, .clientRejectsValidity)
        XCTAssertTrue(failure.description.contains("check the clocks"))
    }

    func testOtherFailuresKeepOpenSSLsReason() {
        let failure = ClientHandshakeFailure(host: "api.example.com", openSSLErrors: [sslError(SSL_R_UNSUPPORTED_PROTOCOL)])
        XCTAssertEqual(failure.description, "the TLS handshake with the client for api.example.com failed: unsupported protocol")
        XCTAssertEqual(ClientHandshakeFailure(host: "h", openSSLErrors: []).description,
                       "the TLS handshake with the client for h failed: the connection closed during the handshake")
    }
}
