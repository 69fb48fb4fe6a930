import XCTest
import CountersignHTTP

/// The tokens and statuses clients see in `Proxy-Status` (RFC 9209 §2.3) and the access log:
/// they come from the enum alone, and are the registry's spelling.
final class ProxyErrorTypeTests: XCTestCase {
    func testEveryTypeKeepsItsRegisteredNameAndStatus() {
        let table: [(ProxyErrorType, String, Int)] = [
            (.dnsError, "dns_error", 502),
            (.destinationUnavailable, "destination_unavailable", 502),
            (.destinationIPProhibited, "destination_ip_prohibited", 403),
            (.destinationIPUnroutable, "destination_ip_unroutable", 502),
            (.connectionRefused, "connection_refused", 502),
            (.connectionTerminated, "connection_terminated", 502),
            (.connectionTimeout, "connection_timeout", 504),
            (.connectionReadTimeout, "connection_read_timeout", 502),
            (.connectionLimitReached, "connection_limit_reached", 502),
            (.tlsProtocolError, "tls_protocol_error", 502),
            (.tlsCertificateError, "tls_certificate_error", 502),
            (.httpRequestError(status: 408), "http_request_error", 408),
            (.httpRequestError(status: 431), "http_request_error", 431),
            (.httpRequestDenied(status: 407), "http_request_denied", 407),
            (.httpRequestDenied(status: 421), "http_request_denied", 421),
            (.httpResponseIncomplete, "http_response_incomplete", 502),
            (.httpResponseHeaderSectionSize, "http_response_header_section_size", 502),
            (.httpResponseBodySize, "http_response_body_size", 502),
            (.httpResponseTimeout, "http_response_timeout", 504),
            (.httpUpgradeFailed, "http_upgrade_failed", 502),
            (.httpProtocolError, "http_protocol_error", 502),
            (.proxyInternalError, "proxy_internal_error", 502),
            (.proxyConfigurationError, "proxy_configuration_error", 502),
        ]
        for (type, name, status) in table {
            XCTAssertEqual(type.name, name)
            XCTAssertEqual("\(type)", name)
            XCTAssertEqual(type.status, status, name)
        }
        XCTAssertEqual(Exchange.Failure(.connectionTimeout, details: "x").status, 504, "a failure's status is its type's")
    }
}
