/// The parts of an x509-limbo testcase (limbo-schema.json, `Testcase`) the harness reads.
/// The expected result is deliberately not decoded: the harness only reports what the
/// policy decides, and the runner script compares.
struct LimboSuite: Decodable {
    var version: Int
    var testcases: [LimboTestcase]
}

struct LimboTestcase: Decodable {
    struct PeerName: Decodable {
        /// "DNS", "IP" or "RFC822".
        var kind: String
        var value: String
    }

    var id: String
    /// "SERVER" or "CLIENT".
    var validation_kind: String
    var features: [String]?
    var trusted_certs: [String]
    var untrusted_intermediates: [String]
    var peer_certificate: String
    /// RFC 3339; absent means now.
    var validation_time: String?
    var signature_algorithms: [String]?
    var key_usage: [String]?
    var extended_key_usage: [String]?
    var expected_peer_name: PeerName?
    var expected_peer_names: [PeerName]?
    var max_chain_depth: Int?
    var crls: [String]?
}

/// One line of limbo's `LimboResult.results`.
struct LimboResult: Encodable {
    enum Outcome: String, Encodable {
        case success = "SUCCESS"
        case failure = "FAILURE"
        case skipped = "SKIPPED"
    }

    var id: String
    var actual_result: Outcome
    /// The refusal or the reason for skipping; null on success.
    var context: String?

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(actual_result, forKey: .actual_result)
        // The schema requires the key even when there is nothing to say.
        try container.encode(context, forKey: .context)
    }

    private enum CodingKeys: String, CodingKey { case id, actual_result, context }
}

/// limbo's `LimboResult` document.
struct LimboResults: Encodable {
    var version = 1
    var harness: String
    var results: [LimboResult]
}
