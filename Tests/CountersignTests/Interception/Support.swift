import Foundation
import XCTest
@testable import CountersignInterception

/// A directory under /tmp removed when the test ends.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "countersign-interception-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ text: String, to name: String) throws -> String {
        try text.write(toFile: file(name), atomically: true, encoding: .utf8)
        return file(name)
    }
}

/// The openssl command-line tool: a third-party judge of what this module writes.
enum OpenSSLTool {
    struct Outcome {
        let status: Int32
        let output: String
    }

    static func run(_ arguments: [String], input: String? = nil) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// `openssl verify -CAfile ca leaf` with extra options such as -verify_hostname.
    static func verify(leafPEM: String, caPath: String, in directory: TemporaryDirectory,
                       options: [String] = []) throws -> Outcome {
        let leafPath = try directory.write(leafPEM, to: "leaf-\(UUID().uuidString).pem")
        return try run(["verify", "-CAfile", caPath] + options + [leafPath])
    }

    static func text(ofCertificate path: String) throws -> String {
        try run(["x509", "-in", path, "-noout", "-text"]).output
    }
}

extension InterceptionCA {
    /// A fresh CA in `directory`, constrained to `hosts` (nil: unconstrained).
    static func make(in directory: TemporaryDirectory, hosts: [String]?, now: Date = Date()) throws -> InterceptionCA {
        try InterceptionCA.create(certificatePath: directory.file("ca.pem"), keyPath: directory.file("ca.key"),
                                  scope: hosts.map { try CAScope.hosts($0) } ?? .unconstrained,
                                  force: true, machineName: "testhost", now: now)
    }
}
