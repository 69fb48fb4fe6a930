import XCTest
import CountersignHTTP
import CountersignSupport
@testable import CountersignSigning

/// Placeholders resolved only toward the hosts that list them, and `inject` over whatever
/// the client sent: as an attacker would try it.
final class RequestInjectionTests: XCTestCase {
    let plan = InjectionPlan(host: "api.example.com:443", placeholders: ["apikey": .secret(Array("k3y/+=&é".utf8)), "svc": .secret(Array("pa55".utf8))])

    private func rewritten(_ outcome: RequestInjection.Outcome, file: StaticString = #filePath, line: UInt = #line) -> (String, HeaderFields, [String])? {
        guard case .rewritten(let target, let headers, let resolved) = outcome else {
            XCTFail("expected a rewrite, got \(outcome)", file: file, line: line)
            return nil
        }
        return (target, headers, resolved)
    }

    func testPlaceholdersInTheTargetAreResolvedPercentEncoded() throws {
        let outcome = RequestInjection.apply(plan, target: "/v1/items?key=countersign:apikey&other=countersign%3Asvc&x=countersign%3aapikey", headers: HeaderFields())
        let (target, _, resolved) = try XCTUnwrap(rewritten(outcome))
        XCTAssertEqual(target, "/v1/items?key=k3y%2F%2B%3D%26%C3%A9&other=pa55&x=k3y%2F%2B%3D%26%C3%A9")
        XCTAssertEqual(resolved, ["apikey", "svc"])
    }

    func testPlaceholdersInHeaderValuesAndInsideBasic() throws {
        let basic = "Basic " + Base64.encode(Array("countersign:svc:countersign:apikey".utf8))
        let headers = HeaderFields([HeaderField("X-Api-Key", "countersign:apikey"), HeaderField("Authorization", basic),
                                    HeaderField("Cookie", "a=1; token=countersign%3Asvc")])
        let (_, result, resolved) = try XCTUnwrap(rewritten(RequestInjection.apply(plan, target: "/", headers: headers)))
        XCTAssertEqual(result["X-Api-Key"], String(decoding: Array("k3y/+=&é".utf8), as: UTF8.self).latin1Spelling)
        XCTAssertEqual(result["Authorization"], "Basic " + Base64.encode(Array("pa55:k3y/+=&é".utf8)))
        XCTAssertEqual(result["Cookie"], "a=1; token=pa55")
        XCTAssertEqual(Set(resolved), ["apikey", "svc"])
        XCTAssertEqual(result.fields.map(\.name), ["X-Api-Key", "Authorization", "Cookie"], "names and order kept")
    }

    func testAPlaceholderTheHostDoesNotListIsRefusedWherever() {
        let places: [(String, HeaderFields)] = [
            ("/x?k=countersign:other", HeaderFields()),
            ("/x?k=countersign%3Aother", HeaderFields()),
            ("/x", HeaderFields([HeaderField("X-Key", "Bearer countersign:other")])),
            ("/x", HeaderFields([HeaderField("Authorization", "Basic " + Base64.encode(Array("u:countersign:other".utf8)))])),
            // Listed and unlisted together: still refused, nothing resolved goes anywhere.
            ("/x?a=countersign:apikey", HeaderFields([HeaderField("X-Key", "countersign:other-key")])),
        ]
        for (target, headers) in places {
            guard case .refused(let name) = RequestInjection.apply(plan, target: target, headers: headers) else {
                XCTFail("\(target) \(headers.fields) was not refused")
                continue
            }
            XCTAssertTrue(name.hasPrefix("other"), name)
        }
        // A host that lists nothing refuses every placeholder.
        guard case .refused("apikey") = RequestInjection.apply(InjectionPlan(host: "other.example:443"), target: "/?k=countersign:apikey", headers: HeaderFields()) else {
            return XCTFail("a placeholder went toward a host that does not list it")
        }
    }

    /// A host without an entry: the one scan that tells whether the request may hold a
    /// placeholder is what the refusal then goes on from.
    func testTheScanOfAnUnlistedHostsRequestDecidesAlone() {
        let unlisted = InjectionPlan(host: "a host without a hosts entry")
        let basic = HeaderFields([HeaderField("Authorization", "Basic " + Base64.encode(Array("u:countersign:key".utf8)))])
        let marked: [(String, HeaderFields)] = [("/?k=countersign:key", HeaderFields()), ("/", HeaderFields([HeaderField("X", "countersign:key")])), ("/", basic)]
        for (target, headers) in marked {
            let scan = RequestInjection.PlaceholderScan(target: target, headers: headers)
            XCTAssertTrue(scan.mayHoldPlaceholder, "\(target) \(headers.fields)")
            guard case .refused("key") = RequestInjection.apply(unlisted, target: target, headers: headers, scan: scan) else {
                return XCTFail("\(target) \(headers.fields) was not refused")
            }
        }
        let plain = HeaderFields([HeaderField("Authorization", "Bearer countersig"), HeaderField("Accept", "*/*")])
        XCTAssertFalse(RequestInjection.PlaceholderScan(target: "/a?b=counter", headers: plain).mayHoldPlaceholder)
    }

    func testWhatIsNotAPlaceholderIsLeftAlone() {
        for target in ["/countersign", "/countersign:", "/countersign:/x", "/COUNTERSIGN:apikey", "/countersign%3B"] {
            guard case .unchanged = RequestInjection.apply(plan, target: target, headers: HeaderFields([HeaderField("X", "countersign")])) else {
                return XCTFail("\(target) changed")
            }
        }
    }

    func testASecretThatLooksLikeAPlaceholderIsNotResolvedAgain() throws {
        let tricky = InjectionPlan(host: "h:443", placeholders: ["a": .secret(Array("countersign:b".utf8))])
        let (_, headers, resolved) = try XCTUnwrap(rewritten(RequestInjection.apply(tricky, target: "/", headers: HeaderFields([HeaderField("X", "countersign:a")]))))
        XCTAssertEqual(headers["X"], "countersign:b", "b is not listed, yet it was neither resolved nor refused: it is the secret's text")
        XCTAssertEqual(resolved, ["a"])
    }

    func testInjectReplacesTheClientsHeadersAndQueryParameters() throws {
        let injecting = InjectionPlan(host: "h:443", headers: [InjectionPlan.Header(name: "Authorization", prefix: Array("Token ".utf8), value: .secret(Array("s3cret".utf8)))],
                                      query: [InjectionPlan.QueryParameter(name: "api_key", value: .secret(Array("a b&c".utf8)))])
        let client = HeaderFields([HeaderField("authorization", "Basic Zm9vOmJhcg=="), HeaderField("Accept", "*/*"), HeaderField("Authorization", "Bearer x")])
        let (target, headers, _) = try XCTUnwrap(rewritten(RequestInjection.apply(injecting, target: "/q?api_key=mine&b=2&api%5Fkey=also", headers: client)))
        XCTAssertEqual(headers.values("Authorization"), ["Token s3cret"], "one Authorization, the injected one")
        XCTAssertEqual(target, "/q?b=2&api_key=a%20b%26c")
        let (bare, _, _) = try XCTUnwrap(rewritten(RequestInjection.apply(injecting, target: "/q", headers: HeaderFields())))
        XCTAssertEqual(bare, "/q?api_key=a%20b%26c")
    }
}

private extension String {
    /// How HeaderFields spells a value holding UTF-8 bytes (it reads values as Latin-1).
    var latin1Spelling: String { String(utf8.map { Character(Unicode.Scalar($0)) }) }

    /// An OAuth2 credential's access token is asked for (the proxy fetches it) before anything is
    /// rewritten, then put where a secret would go; a placeholder for it is asked for only when
    /// the request carries one.
    func testAnAccessTokenIsAskedForThenInjected() throws {
        var plan = InjectionPlan(host: "h:443", headers: [InjectionPlan.Header(name: "Authorization", prefix: Array("Bearer ".utf8), value: .accessToken(credential: "idp"))],
                                 placeholders: ["other": .accessToken(credential: "other")])
        guard case .needsToken("idp") = RequestInjection.apply(plan, target: "/", headers: HeaderFields()) else { return XCTFail("no token asked for") }
        plan.tokens["idp"] = Array("t0k3n".utf8)
        guard case .rewritten(_, let headers, _) = RequestInjection.apply(plan, target: "/", headers: HeaderFields([HeaderField("Authorization", "Basic x")])) else {
            return XCTFail("not injected")
        }
        XCTAssertEqual(headers.values("Authorization"), ["Bearer t0k3n"])
        guard case .needsToken("other") = RequestInjection.apply(plan, target: "/?k=countersign:other", headers: HeaderFields()) else {
            return XCTFail("the placeholder's token was not asked for")
        }
        plan.tokens["other"] = Array("o/t".utf8)
        guard case .rewritten(let target, _, let resolved) = RequestInjection.apply(plan, target: "/?k=countersign:other", headers: HeaderFields()) else {
            return XCTFail("the placeholder was not resolved")
        }
        XCTAssertEqual(target, "/?k=o%2Ft")
        XCTAssertEqual(resolved, ["other"])
    }
}
