import XCTest
@testable import CountersignAuth
import CountersignSupport
import Foundation

/// MS-NLMP §4.2 vectors, plus the channel-binding vector Microsoft published for Extended Protection.
final class NTLMTests: XCTestCase {
    // §4.2.1 common values.
    let serverChallenge = Hex.decode("0123456789abcdef")!
    let clientChallenge = [UInt8](repeating: 0xaa, count: 8)
    let randomSessionKey = [UInt8](repeating: 0x55, count: 16)
    let credentials = NTLMCredentials(user: "User", domain: "Domain", password: "Password")
    /// §4.2.4.3 CHALLENGE_MESSAGE.
    let challengeMessage = Hex.decode(
        "4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef"
        + "00000000000000002400240044000000060070170000000f5300650072007600"
        + "6500720002000c0044006f006d00610069006e0001000c005300650072007600"
        + "6500720000000000")!
    /// The server's target info of §4.2.4 (domain, server, EOL).
    let specTargetInfo = Hex.decode("02000c0044006f006d00610069006e0001000c0053006500720076006500720000000000")!

    func testNTOWFv2AndNTHash() throws {
        XCTAssertEqual(Hex.encode(credentials.ntHash), "a4f49c406510bdcab6824ee7c30fd852")  // §4.2.2.1.2
        XCTAssertEqual(Hex.encode(credentials.responseKeyNT), "0c868a403bfd7a93a3001ef22ef02e3f")  // §4.2.4.1.1
        let fromHash = try NTLMCredentials(account: "Domain\\User", ntHash: Hex.decode("a4f49c406510bdcab6824ee7c30fd852")!)
        XCTAssertEqual(fromHash.responseKeyNT, credentials.responseKeyNT, "a configured NT hash answers like the password")
        XCTAssertThrowsError(try NTLMCredentials(account: "u", ntHash: [1, 2, 3]))
    }

    func testNTLMv2ResponseVectors() {
        let response = NTLMv2Response(responseKey: credentials.responseKeyNT, serverChallenge: serverChallenge,
                                      clientChallenge: clientChallenge, timestamp: 0, targetInfo: specTargetInfo)
        XCTAssertEqual(Hex.encode(response.ntProofStr), "68cd0ab851e51c96aabc927bebef6a1c")  // §4.2.4.2.2
        XCTAssertEqual(Hex.encode(response.sessionBaseKey), "8de40ccadbc14a82f15cb0ad0de95ca3")  // §4.2.4.1.2
        XCTAssertEqual(Hex.encode(response.lmChallengeResponse), "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa")  // §4.2.4.2.1
        XCTAssertEqual(Hex.encode(response.ntChallengeResponse),
                       "68cd0ab851e51c96aabc927bebef6a1c01010000000000000000000000000000aaaaaaaaaaaaaaaa00000000"
                       + Hex.encode(specTargetInfo) + "00000000")
    }

    func testParsesTheSpecChallengeMessage() throws {
        let challenge = try NTLMChallengeMessage.parse(challengeMessage)
        XCTAssertEqual(challenge.flags.rawValue, 0xe28a_8233)
        XCTAssertEqual(challenge.serverChallenge, serverChallenge)
        XCTAssertEqual(challenge.targetName, "Server")
        XCTAssertEqual(challenge.targetInfo, specTargetInfo)
        XCTAssertEqual(challenge.avPairs, [NTLMAVPair(id: 2, value: NTLMText.utf16LittleEndian("Domain")),
                                           NTLMAVPair(id: 1, value: NTLMText.utf16LittleEndian("Server"))])
        XCTAssertNil(challenge.timestamp)
    }

    /// §4.2.4.3: the whole AUTHENTICATE_MESSAGE, byte for byte.
    func testSpecAuthenticateMessageBytes() throws {
        let response = NTLMv2Response(responseKey: credentials.responseKeyNT, serverChallenge: serverChallenge,
                                      clientChallenge: clientChallenge, timestamp: 0, targetInfo: specTargetInfo)
        let message = NTLMAuthenticate(
            flags: NTLMFlags(rawValue: 0xe288_8235), lmChallengeResponse: response.lmChallengeResponse,
            ntChallengeResponse: response.ntChallengeResponse, domain: "Domain", user: "User", workstation: "COMPUTER",
            encryptedRandomSessionKey: try RC4.transform(key: response.sessionBaseKey, randomSessionKey),
            version: Hex.decode("0501280a0000000f")!)
        XCTAssertEqual(Hex.encode(message.encode()),
                       "4e544c4d5353500003000000180018006c00000054005400840000000c000c00"
                       + "480000000800080054000000100010005c00000010001000d8000000358288e2"
                       + "0501280a0000000f44006f006d00610069006e00550073006500720043004f00"
                       + "4d005000550054004500520086c35097ac9cec102554764a57cccc19aaaaaaaa"
                       + "aaaaaaaa68cd0ab851e51c96aabc927bebef6a1c010100000000000000000000"
                       + "00000000aaaaaaaaaaaaaaaa0000000002000c0044006f006d00610069006e00"
                       + "01000c005300650072007600650072000000000000000000c5dad2544fc97990"
                       + "94ce1ce90bc9d03e")
    }

    func testChannelBindingHashOfMicrosoftsExample() {
        let certificateHash = Hex.decode("ea05fefecc6b0bd571dbbc5baa3ed45386d0446835f7b74c85621b9983475f95")!
        XCTAssertEqual(Hex.encode(TLSChannelBinding.ntlmAVValue(certificateHash: certificateHash)), "6586e99d81c2fc984e47172fd4dd0310")
    }

    func testCertificateHashFollowsRFC5929() throws {
        // ECDSA with SHA-384: hashed with SHA-384 (expected value from `openssl dgst -sha384`).
        let sha384Signed = Base64.decode("MIIBtzCCATygAwIBAgIUd1KCtvZ47WKzvSnrbyHcJUAHdokwCgYIKoZIzj0EAwMwEjEQMA4GA1UEAwwHY2IudGVzdDAeFw0yNjExMjIwNzM2NTVaFw0zNjExMTkwNzM2NTVaMBIxEDAOBgNVBAMMB2NiLnRlc3QwdjAQBgcqhkjOPQIBBgUrgQQAIgNiAATzVPDrAUMdxClfryplzjaKOWLLy1+SAi8J//9F7jh59hU/2J/42jxqr7AsW+LcauxDp5Umz0BbFx9KCGq/aiIvoSzvUYNQsb+FnzqJWiEWM2BQ7RwgJe/NvZXOtdH0LY2jUzBRMB0GA1UdDgQWBBRMsZTGj/TUpPlpEN4OX71OlxnwJjAfBgNVHSMEGDAWgBRMsZTGj/TUpPlpEN4OX71OlxnwJjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMDA2kAMGYCMQCBFW+z2kfXwx5VRvd6EHmHkeC/6NmUfmIUR/9yG9gibywtuU09x0Pkt4NdodLwOcACMQD5pVHLc/5411KwL1PCr7u59glPWGxKRaWLfUDZRnJwvdqatX4BkH3SNgLzBogRhhs=")!
        XCTAssertEqual(Hex.encode(try TLSChannelBinding.certificateHash(der: sha384Signed)),
                       "7802be273b7511d30b2e6e714fcb2ee0bb5351242d1d0e8d17147022781302d4b55da119be1386be729780f09a2de180")
        // ECDSA with SHA-1: RFC 5929 replaces SHA-1 with SHA-256.
        let sha1Signed = Base64.decode("MIIBejCCASCgAwIBAgIUYYnEL06KPVp77KeBUwxm3RIgCeEwCQYHKoZIzj0EATATMREwDwYDVQQDDAhjYjEudGVzdDAeFw0yNjExMjIwNzM2NTVaFw0zNjExMTkwNzM2NTVaMBMxETAPBgNVBAMMCGNiMS50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEHpzxY1DVTg8/syYoF0pHg51a07bo9mlx/o5VQz9JAMhU9poEuv7pOk1n641ADG4Cymo5yEFPkM+TE4b8d+NyDKNTMFEwHQYDVR0OBBYEFMIUNQOcVXxFNHkd5INou9iRkk+OMB8GA1UdIwQYMBaAFMIUNQOcVXxFNHkd5INou9iRkk+OMA8GA1UdEwEB/wQFMAMBAf8wCQYHKoZIzj0EAQNJADBGAiEArn50oJ7+mEtoT7Hii1mRF+HvVFNk62RnddhP+XW5WWYCIQDdShr2hwlbPUE6hIdJgziYkpHXKPagrUAAdzw1FGScBQ==")!
        XCTAssertEqual(Hex.encode(try TLSChannelBinding.certificateHash(der: sha1Signed)),
                       "d251a91812dfe2d3d21b8a5576141f1c9bb099f5898738079437752e83c5b7d3")
        XCTAssertThrowsError(try TLSChannelBinding.certificateHash(der: [0x30, 0x03, 0x02, 0x01]))
    }

    /// The builder against the spec challenge with Extended Protection: AV pairs extended with
    /// MsvAvFlags, MsvAvChannelBindings and MsvAvTargetName (Chromium's published EPA vector),
    /// key exchange (the spec challenge asks for it), and the MIC over all three messages.
    func testBuilderExtendsTargetInfoExchangesKeyAndSignsTheMessages() throws {
        let entropy = NTLMEntropy(clientChallenge: { [UInt8](repeating: 0xaa, count: 8) },
                                  randomSessionKey: { [UInt8](repeating: 0x55, count: 16) },
                                  now: { 131_400_439_870_000_000 })
        let binding = TLSChannelBinding.ntlmAVValue(certificateHash: Hex.decode("ea05fefecc6b0bd571dbbc5baa3ed45386d0446835f7b74c85621b9983475f95")!)
        let builder = NTLMAuthenticateBuilder(credentials: credentials, workstation: "COMPUTER", channelBinding: binding,
                                              targetName: "HTTP/Server", entropy: entropy)
        let negotiate = NTLMNegotiate().encode()
        let bytes = try builder.build(negotiate: negotiate, negotiatedFlags: .clientDefault, challenge: try NTLMChallengeMessage.parse(challengeMessage))
        let message = ParsedAuthenticate(bytes)

        XCTAssertEqual(message.string(at: 36), "User")
        XCTAssertEqual(message.string(at: 28), "Domain")
        XCTAssertEqual(message.string(at: 44), "COMPUTER")
        let nt = message.buffer(at: 20)
        XCTAssertEqual(Hex.encode(nt.prefix(16)), "8c0260dbef690662af9c42d50782d2ed", "NTProofStr of Chromium's EPA vector")
        XCTAssertEqual(Hex.encode(nt[44..<(nt.count - 4)]),
                       "02000c0044006f006d00610069006e00" + "01000c00530065007200760065007200" + "0600040002000000"
                       + "0a0010006586e99d81c2fc984e47172fd4dd0310"
                       + "0900160048005400540050002f00530065007200760065007200" + "00000000")
        // Key exchange: RC4 under the session base key of this response.
        let sessionBaseKey = Hex.decode("623dbd071be7a530b6a95c2eb4982470")!
        XCTAssertEqual(message.buffer(at: 52), try RC4.transform(key: sessionBaseKey, randomSessionKey))
        // MIC at offset 72, keyed with the exported (random) session key over the zeroed message.
        var zeroed = bytes
        zeroed.replaceSubrange(72..<88, with: [UInt8](repeating: 0, count: 16))
        XCTAssertEqual(Array(bytes[72..<88]), HMACMD5.authenticate(key: randomSessionKey, message: negotiate + challengeMessage + zeroed))
        XCTAssertEqual(message.flags.contains(.keyExchange), true)
        XCTAssertEqual(message.flags.contains(.unicode), true)
    }

    func testServerTimestampIsUsedAndLMResponseIsZero() throws {
        var pairs = try NTLMAVPairs.decode(specTargetInfo)
        pairs.append(NTLMAVPair(id: NTLMAVPair.timestamp, value: [1, 2, 3, 4, 5, 6, 7, 8]))
        let info = NTLMAVPairs.encode(pairs)
        var challenge = try NTLMChallengeMessage.parse(challengeMessage)
        challenge.avPairs = pairs
        challenge.targetInfo = info
        challenge.flags.remove(.keyExchange)
        XCTAssertEqual(challenge.timestamp, 0x0807_0605_0403_0201)
        let entropy = NTLMEntropy(clientChallenge: { [UInt8](repeating: 0xaa, count: 8) }, randomSessionKey: { [] }, now: { 42 })
        let bytes = try NTLMAuthenticateBuilder(credentials: credentials, workstation: "W", entropy: entropy)
            .build(negotiate: [], negotiatedFlags: .clientDefault, challenge: challenge)
        let message = ParsedAuthenticate(bytes)
        XCTAssertEqual(message.buffer(at: 12), [UInt8](repeating: 0, count: 24))
        XCTAssertEqual(Array(message.buffer(at: 20)[24..<32]), [1, 2, 3, 4, 5, 6, 7, 8], "the server's time, not the client's")
        XCTAssertEqual(message.buffer(at: 52), [], "no key exchange unless the server negotiates it")
    }

    func testAccountForms() {
        let backslash = NTLMCredentials(account: "CORP\\svc", password: "p")
        XCTAssertEqual(backslash.user, "svc")
        XCTAssertEqual(backslash.domain, "CORP")
        let upn = NTLMCredentials(account: "svc@corp.example", password: "p")
        XCTAssertEqual(upn.user, "svc@corp.example")
        XCTAssertEqual(upn.domain, "")
        XCTAssertFalse(backslash.description.contains("p\""))
    }

    func testHandshakeLegsAndErrors() throws {
        var handshake = NTLMHandshake()
        let builder = NTLMAuthenticateBuilder(credentials: credentials, workstation: "W")
        XCTAssertThrowsError(try handshake.answer(challengeToken: Base64.encode(challengeMessage), with: builder), "a challenge before NEGOTIATE")
        let first = handshake.start()
        XCTAssertTrue(first.hasPrefix("NTLM "))
        let negotiate = Base64.decode(String(first.dropFirst(5)))!
        XCTAssertEqual(Array(negotiate.prefix(12)), NTLMText.signature + [1, 0, 0, 0])
        XCTAssertEqual(handshake.state, .negotiateSent)
        XCTAssertThrowsError(try handshake.answer(challengeToken: "!!!", with: builder))
        XCTAssertThrowsError(try handshake.answer(challengeToken: Base64.encode(Array(challengeMessage.prefix(30))), with: builder))
        let third = try handshake.answer(challengeToken: Base64.encode(challengeMessage), with: builder)
        XCTAssertTrue(third.hasPrefix("NTLM TlRMTVNTUAADAAAA"))
        XCTAssertEqual(handshake.state, .authenticateSent)
    }

    func testMalformedChallengeMessages() {
        XCTAssertThrowsError(try NTLMChallengeMessage.parse(Array("NTLMSSP".utf8) + [0, 1, 0, 0, 0]))
        var truncatedInfo = challengeMessage
        truncatedInfo.removeLast(4)  // the EOL pair
        XCTAssertThrowsError(try NTLMChallengeMessage.parse(truncatedInfo))
        var pointsOutside = challengeMessage
        pointsOutside[44] = 0xff
        XCTAssertThrowsError(try NTLMChallengeMessage.parse(pointsOutside))
    }
}

/// Reads fields back out of an AUTHENTICATE_MESSAGE for assertions.
struct ParsedAuthenticate {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func buffer(at offset: Int) -> [UInt8] { NTLMReader(bytes: bytes).securityBuffer(at: offset) ?? [] }
    func string(at offset: Int) -> String { NTLMText.decodeUTF16LittleEndian(buffer(at: offset)) }
    var flags: NTLMFlags { NTLMFlags(rawValue: NTLMReader(bytes: bytes).uint32(at: 60) ?? 0) }

    func testChallengeWithABrokenTargetNameOffsetStillParses() throws {
        // Squid's ntlm_fake_auth sends a target name whose offset is uninitialised memory.
        let token = "TlRMTVNTUAACAAAACQAJAK6qqqoXggjgt7OptWArQLAAAAAAAAA6AFdPUktHUk9VUA=="
        let bytes = try XCTUnwrap(Data(base64Encoded: token)).map { $0 }
        let message = try NTLMChallengeMessage.parse(bytes)
        XCTAssertEqual(message.serverChallenge, [0xb7, 0xb3, 0xa9, 0xb5, 0x60, 0x2b, 0x40, 0xb0])
    }
}
