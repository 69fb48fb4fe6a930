import Foundation
import XCTest
@testable import CountersignTrust

/// Testcases of the committed x509-limbo suite (Tests/limbo/limbo.json.xz), decompressed once
/// with `xz -dc`, evaluated the way the proxy evaluates a served chain: the trusted
/// certificates as anchors only, the peer certificate and intermediates as served, the
/// expected peer name validated, at the case's validation time.
final class LimboCases: @unchecked Sendable {
    static let shared = LimboCases()

    struct Case {
        let anchors: [Certificate]
        let served: [Certificate]
        let peerName: String?
        let time: Int64?
    }

    private let cases: [String: [String: Any]]

    private init() {
        let suite = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("limbo/limbo.json.xz").path
        let result = Shell.run("/usr/bin/xz", ["-dc", suite])
        precondition(result.status == 0, "cannot decompress \(suite): \(result.errorOutput)")
        let document = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        let testcases = document?["testcases"] as? [[String: Any]] ?? []
        cases = Dictionary(uniqueKeysWithValues: testcases.compactMap { testcase in
            (testcase["id"] as? String).map { ($0, testcase) }
        })
    }

    func testcase(_ id: String) throws -> Case {
        guard let raw = cases[id] else { throw TrustError("no limbo testcase \(id)") }
        let pems = { (key: String) in (raw[key] as? [String] ?? []) }
        let time = (raw["validation_time"] as? String).flatMap { text -> Int64? in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
            return date.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        }
        return Case(anchors: try pems("trusted_certs").map { try Certificate(pem: $0) },
                    served: try ([raw["peer_certificate"] as? String ?? ""] + pems("untrusted_intermediates"))
                        .map { try Certificate(pem: $0) },
                    peerName: (raw["expected_peer_name"] as? [String: Any])?["value"] as? String,
                    time: time)
    }

    /// The proxy's decision on testcase `id`.
    func decide(_ id: String) throws -> TrustDecision {
        let testcase = try testcase(id)
        let policy = try TrustPolicy(settings: TrustSettings(validateDomain: testcase.peerName != nil),
                                     material: TrustMaterial(anchors: testcase.anchors))
        return policy.evaluate(policy.gatherFacts(served: testcase.served, serverName: testcase.peerName ?? "",
                                                  at: testcase.time))
    }
}
