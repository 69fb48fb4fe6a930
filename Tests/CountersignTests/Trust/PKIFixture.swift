import Foundation
import XCTest
@testable import CountersignTrust

/// The test PKI made by Tests/fixtures/pki/make-pki.sh, generated once per test run into a
/// temporary directory (keys never land in the repository).
final class PKIFixture: @unchecked Sendable {
    static let shared = PKIFixture()

    let directory: String

    private init() {
        directory = NSTemporaryDirectory() + "countersign-pki-\(getpid())"
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fixtures/pki/make-pki.sh").path
        let result = Shell.run("/bin/sh", [script, directory])
        precondition(result.status == 0, "make-pki.sh failed: \(result.errorOutput)")
        // The keys are throw-away, but do not leave them in the temp directory after the run.
        XCTestObservationCenter.shared.addTestObserver(RemoveWhenTestsFinish(directory))
    }

    func path(_ name: String) -> String { directory + "/" + name }

    func certificates(_ name: String) throws -> [Certificate] {
        try Certificate.loadPEMFile(path: path(name))
    }

    func certificate(_ name: String) throws -> Certificate {
        try certificates(name)[0]
    }
}

/// Deletes the generated PKI when the test bundle finishes.
final class RemoveWhenTestsFinish: NSObject, XCTestObservation {
    let directory: String

    init(_ directory: String) {
        self.directory = directory
    }

    func testBundleDidFinish(_ testBundle: Bundle) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs a command and collects its output (for openssl CLI cross-checks).
enum Shell {
    struct Result {
        let status: Int32
        let output: String
        let errorOutput: String
    }

    static func run(_ executable: String, _ arguments: [String], input: Data? = nil) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        do {
            try process.run()
        } catch {
            return Result(status: -1, output: "", errorOutput: "\(error)")
        }
        if let input { stdin.fileHandleForWriting.write(input) }
        try? stdin.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                      errorOutput: String(decoding: errorData, as: UTF8.self))
    }

    /// A pipeline through `sh -c` (only with fixed, test-controlled text).
    static func pipeline(_ command: String) -> String {
        run("/bin/sh", ["-c", command]).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
