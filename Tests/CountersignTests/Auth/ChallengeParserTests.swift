import XCTest
import CountersignHTTP
@testable import CountersignAuth

final class ChallengeParserTests: XCTestCase {
    func testRFC9110ExampleWithTwoChallengesInOneField() {
        // RFC 9110 §11.6.1 example.
        let challenges = ChallengeParser.parse(fieldValues: [
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        ])
        XCTAssertEqual(challenges.count, 2)
        XCTAssertEqual(challenges[0].scheme, "Newauth")
        XCTAssertEqual(challenges[0][param: "realm"], "apps")
        XCTAssertEqual(challenges[0][param: "type"], "1")
        XCTAssertEqual(challenges[0][param: "title"], #"Login to "apps""#)
        XCTAssertEqual(challenges[1], Challenge(scheme: "Basic", params: [("realm", "simple")]))
    }

    func testChallengesAcrossSeveralFieldsKeepOrder() {
        let challenges = ChallengeParser.parse(fieldValues: ["Negotiate", "NTLM", #"Basic realm="x""#])
        XCTAssertEqual(challenges.map(\.scheme), ["Negotiate", "NTLM", "Basic"])
    }

    func testToken68IsReadAsOneValue() {
        let challenges = ChallengeParser.parse(fieldValues: ["NTLM TlRMTVNTUAACAAAA==, Basic realm=\"r\""])
        XCTAssertEqual(challenges.count, 2)
        XCTAssertEqual(challenges[0].token68, "TlRMTVNTUAACAAAA==")
        XCTAssertTrue(challenges[0].params.isEmpty)
        XCTAssertEqual(challenges[1].realm, "r")
    }

    func testSchemeAndParameterNamesAreCaseInsensitive() {
        let challenge = ChallengeParser.parse(fieldValue: #"dIgEsT REALM="R", Nonce=abc"#)[0]
        XCTAssertTrue(challenge.hasScheme("Digest"))
        XCTAssertEqual(challenge.scheme, "dIgEsT", "the scheme is kept as sent")
        XCTAssertEqual(challenge.realm, "R")
        XCTAssertEqual(challenge[param: "NONCE"], "abc")
    }

    func testWhitespaceAroundEqualsAndEmptyListElements() {
        let challenges = ChallengeParser.parse(fieldValue: #" , ,Basic realm = "a b" ,, , charset= UTF-8 ,  , Bearer ,"#)
        XCTAssertEqual(challenges.count, 2)
        XCTAssertEqual(challenges[0].realm, "a b")
        XCTAssertEqual(challenges[0][param: "charset"], "UTF-8")
        XCTAssertEqual(challenges[1], Challenge(scheme: "Bearer"))
    }

    func testQuotedStringsKeepCommasAndEscapes() {
        let challenge = ChallengeParser.parse(fieldValue: #"Digest realm="a, b=c", nonce="x\\y\"z", qop="auth,auth-int""#)[0]
        XCTAssertEqual(challenge.realm, "a, b=c")
        XCTAssertEqual(challenge[param: "nonce"], #"x\y"z"#)
        XCTAssertEqual(challenge[param: "qop"], "auth,auth-int")
    }

    func testMalformedChallengeIsSkippedAndParsingResumes() {
        let challenges = ChallengeParser.parse(fieldValue: #"Digest realm="x", nonce=@bad, qop=auth, Basic realm="ok""#)
        // The Digest challenge is dropped whole; its remaining parameters are not mistaken for schemes.
        XCTAssertEqual(challenges.map(\.scheme), ["Basic"])
        XCTAssertEqual(challenges.last?.realm, "ok")
    }

    func testUnterminatedQuoteDropsOnlyTheLastChallenge() {
        let challenges = ChallengeParser.parse(fieldValue: #"Basic realm="ok", Digest realm="open, nonce=1"#)
        XCTAssertEqual(challenges.map(\.scheme), ["Basic"])
    }

    func testNameEqualsAloneIsAToken68() {
        // `realm=` matches token68 (RFC 9110 §11.2), so it is not a parameter with an empty value.
        XCTAssertEqual(ChallengeParser.parse(fieldValue: "Basic realm="), [Challenge(scheme: "Basic", token68: "realm=")])
    }

    func testMissingCommaBetweenParametersDropsOnlyThatChallenge() {
        let challenges = ChallengeParser.parse(fieldValue: #"Digest realm="a" nonce="b", Basic realm="c""#)
        XCTAssertEqual(challenges.map(\.scheme), ["Basic"])
    }

    func testDuplicateParameterMakesTheChallengeAmbiguous() {
        let challenges = ChallengeParser.parse(fieldValue: #"Basic realm="a", REALM="b", Bearer realm="c""#)
        XCTAssertEqual(challenges.map(\.scheme), ["Bearer"])
    }

    /// Many parameters (past the few compared in place): a repeat in another case is still caught,
    /// and in Authentication-Info the first of a repeated name still counts.
    func testDuplicateParameterAmongManyIsStillCaught() {
        let many = (0..<20).map { "p\($0)=\($0)" }.joined(separator: ", ")
        XCTAssertEqual(ChallengeParser.parse(fieldValue: "Basic \(many), realm=\"a\", Bearer").map(\.scheme), ["Basic", "Bearer"])
        XCTAssertEqual(ChallengeParser.parse(fieldValue: "Basic \(many), P7=\"b\", Bearer").map(\.scheme), ["Bearer"])
        XCTAssertEqual(ChallengeParser.parse(fieldValue: #"Basic realm="a", x="\"q\"", REALM="b", Bearer"#).map(\.scheme), ["Bearer"])
        let info = AuthenticationInfo.parse(fieldValues: ["\(many), nextnonce=\"first\", \(many), NEXTNONCE=\"second\""])
        XCTAssertEqual(info?.nextnonce, "first")
    }

    func testGarbageYieldsNothing() {
        for value in ["", ",,,", "=", "\"", "\\", "Basic =", "@@@ realm=x", "Basic realm=\"\u{1}\"", "Basic realm=\"x\\"] {
            XCTAssertEqual(ChallengeParser.parse(fieldValue: value), [], value)
        }
        XCTAssertEqual(ChallengeParser.parse(fieldValue: "=, Basic").map(\.scheme), ["Basic"])
    }

    func testSchemeGluedToEqualsIsNotAChallenge() {
        XCTAssertEqual(ChallengeParser.parse(fieldValue: "Basic=realm, Bearer").map(\.scheme), ["Bearer"])
    }

    func testManyFieldsManyChallenges() {
        let fields = (0..<200).map { #"Custom\#($0) realm="r\#($0)", a=1"# }
        let challenges = ChallengeParser.parse(fieldValues: fields)
        XCTAssertEqual(challenges.count, 200)
        XCTAssertEqual(challenges[199].realm, "r199")
    }

    func testAuthenticationInfo() {
        let info = AuthenticationInfo.parse(fieldValues: [#"nextnonce="abc", qop=auth, rspauth="d3adb33f""#, "cnonce=\"c\", nc=00000001"])
        XCTAssertEqual(info, AuthenticationInfo(nextnonce: "abc", rspauth: "d3adb33f", qop: "auth", nc: "00000001", cnonce: "c"))
        XCTAssertNil(AuthenticationInfo.parse(fieldValues: ["", " , "]))
        XCTAssertEqual(AuthenticationInfo.parse(fieldValues: ["junk, nextnonce=\"n\""])?.nextnonce, "n")
    }

    /// qdtext (RFC 9110 §5.6.4) over all 256 bytes: HTAB, SP, 0x21, 0x23-0x5B, 0x5D-0x7E, obs-text.
    func testQuotedTextIsExactlyQdtext() {
        for value in 0...255 {
            let byte = UInt8(value)
            let qdtext = byte == 0x09 || byte == 0x20 || byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte) || byte >= 0x80
            XCTAssertEqual(TokenSyntax.isQuotedText(byte), qdtext, "byte 0x\(String(value, radix: 16))")
        }
    }

    /// The response's fields are read from their bytes (no string per parameter): what they
    /// yield is what reading the same values as strings yields, escapes, case, ISO-8859-1 text,
    /// repeated names across fields and malformed elements included.
    func testAuthenticationInfoFromFieldBytesReadsAsTheStringsDo() {
        let cases: [[String]] = [
            [#"rspauth="6629fae49393a05397450978507c4ef1", cnonce="0a4f113b", nc=00000001, qop=auth"#],
            [#"NextNonce="a\"b\\c", RSPAUTH=d3adb33f"#, #"nextnonce="second", nc=00000002"#],
            ["junk, nextnonce=\"caf\u{E9}\", =x, qop=\"auth\"", "cnonce=\"\u{1}\", nc=1 2, rspauth=\"ok\""],
            ["", " , ", "rspauth=\"unterminated"],
        ]
        for values in cases {
            let headers = HeaderFields(values.map { HeaderField("Authentication-Info", $0) } + [HeaderField("X-Other", "rspauth=\"no\"")])
            XCTAssertEqual(AuthenticationInfo.parse(headers, field: .authenticationInfo), AuthenticationInfo.parse(fieldValues: values), "\(values)")
        }
        let read = AuthenticationInfo.parse(HeaderFields([HeaderField("Authentication-Info", "nextnonce=\"caf\u{E9}\", rspauth=\"a\\\"b\"")]), field: .authenticationInfo)
        XCTAssertEqual(read?.nextnonce, "caf\u{E9}")
        XCTAssertEqual(read?.rspauth, "a\"b")
    }

    /// What the list grammar of `FieldScanner` (the challenge parser's) reads from
    /// `Authentication-Info` fields: the first of each known name, nil when no parameter is there.
    private func authenticationInfoByTheGrammar(_ fields: [String]) -> AuthenticationInfo? {
        var info = AuthenticationInfo(), seen: Set<String> = [], any = false
        for field in fields {
            var scanner = FieldScanner(field)
            while true {
                scanner.skipListSeparators()
                if scanner.atEnd { break }
                if let param = scanner.readParam() {
                    scanner.skipWhitespace()
                    if scanner.atEnd || scanner.next == TokenSyntax.comma {
                        any = true
                        let name = TokenSyntax.lowercased(param.name)
                        guard seen.insert(name).inserted else { continue }
                        switch name {
                        case "nextnonce": info.nextnonce = param.value
                        case "rspauth": info.rspauth = param.value
                        case "cnonce": info.cnonce = param.value
                        case "nc": info.nc = param.value
                        case "qop": info.qop = param.value
                        default: break
                        }
                        continue
                    }
                }
                scanner.skipElement()
            }
        }
        return any ? info : nil
    }

    /// `Authentication-Info` is read over the field's bytes by a reader of its own: on random
    /// lists of parameters (names in any case, tokens, quoted-strings with escapes, control
    /// bytes, obs-text, stray quotes and equals signs) it yields what the list grammar of
    /// `FieldScanner` (the challenge parser's) yields, the first of each known name kept.
    func testAuthenticationInfoReaderAgreesWithTheListGrammar() {
        var generator = SplitMix64(seed: 0xa17f0)
        let pieces = ["nextnonce", "RspAuth", "cnonce", "NC", "qop", "x", "=", "=", ", ", ",", " ", "\t", "\"", "\"ab\"", "\\",
                      "\"a\\\"b\"", "00000001", "d3adb33f", "\u{1}", "\u{7f}", "caf\u{E9}", "@", "==", "auth-int"]
        for _ in 0..<4000 {
            let fields = (0..<Int(generator.next() % 3 + 1)).map { _ in
                (0..<Int(generator.next() % 12)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            }
            XCTAssertEqual(AuthenticationInfo.parse(fieldValues: fields), authenticationInfoByTheGrammar(fields), "\(fields)")
            let headers = HeaderFields(fields.map { HeaderField("Authentication-Info", $0) })
            if !fields.joined().unicodeScalars.contains(where: { $0.value >= 0x80 }) {
                XCTAssertEqual(AuthenticationInfo.parse(headers, field: .authenticationInfo), authenticationInfoByTheGrammar(fields), "\(fields)")
            }
        }
    }

    /// Long values are read eight bytes at a time while they are plain, and names compared as
    /// words: every byte value at every place of a quoted value or a name, near the end of the
    /// field and far from it, is judged as the list grammar judges it.
    func testAuthenticationInfoLongValuesAndNamesAgreeWithTheGrammar() {
        for value in 0...255 {
            let byte = Character(Unicode.Scalar(UInt8(value)))
            for place in 0..<17 {
                var inside = Array(repeating: Character("a"), count: 17)
                inside[place] = byte
                var name = Array("rspauth")
                name[place % name.count] = byte
                for field in ["rspauth=\"\(String(inside))\", nc=1", "nc=1, rspauth=\"\(String(inside))\"",
                              "\(String(name))=\"x\", nc=00000001", "nc=2, \(String(name))=\"y\""] {
                    let info = AuthenticationInfo.parse(fieldValues: [field])
                    XCTAssertEqual(info, authenticationInfoByTheGrammar([field]), field.debugDescription)
                    if value < 0x80 {
                        let read = AuthenticationInfo.parse(HeaderFields([HeaderField("Authentication-Info", field)]), field: .authenticationInfo)
                        XCTAssertEqual(read, info, field.debugDescription)
                    }
                }
            }
        }
    }

    /// Property-style: random bytes never crash or hang the parser, and whatever it returns has
    /// a token scheme.
    func testRandomInputNeverCrashesOrLoops() {
        var generator = SplitMix64(seed: 0x5eed)
        let alphabet = Array(#"Basic Digest NTLM realm nonce = , " \ abc 123 ="#.utf8) + [0, 9, 0x7f, 0xc3, 0xa4]
        for _ in 0..<5000 {
            let length = Int(generator.next() % 64)
            let bytes = (0..<length).map { _ -> UInt8 in
                generator.next() % 3 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            for challenge in ChallengeParser.parse(fieldValue: text) {
                XCTAssertTrue(TokenSyntax.isToken(challenge.scheme), "scheme \(challenge.scheme) from \(bytes)")
            }
            _ = AuthenticationInfo.parse(fieldValues: [text])
        }
    }
}

/// A small deterministic generator so the property test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
