import Foundation
import XCTest
@testable import CountersignConfig

/// A temporary directory standing in for the configuration file's directory, with helpers
/// to write files next to the configuration and to load text as `countersign.json5` there.
final class ConfigFixture {
    let directory: String

    init() {
        directory = NSTemporaryDirectory() + "countersign-config-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    var configPath: String { directory + "/countersign.json5" }

    func write(_ relativePath: String, _ contents: String = "-----BEGIN CERTIFICATE-----\n") {
        let path = directory + "/" + relativePath
        try! FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true)
        try! contents.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func load(_ text: String, environment: [String: String] = [:]) throws -> Configuration {
        try ConfigLoader.load(text: text, sourcePath: configPath, environment: environment)
    }

    /// The errors loading reports; fails the test when loading succeeds.
    func errors(_ text: String, environment: [String: String] = [:],
                file: StaticString = #filePath, line: UInt = #line) -> [ConfigError] {
        do {
            _ = try load(text, environment: environment)
            XCTFail("expected the configuration to be refused", file: file, line: line)
            return []
        } catch let errors as ConfigErrors {
            return errors.errors
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return []
        }
    }

    /// Asserts exactly one error, at the given key path, whose message contains `fragment`.
    @discardableResult
    func expectError(_ text: String, at path: String, containing fragment: String, atLine expectedLine: Int? = nil,
                     environment: [String: String] = [:],
                     file: StaticString = #filePath, line: UInt = #line) -> ConfigError? {
        let found = errors(text, environment: environment, file: file, line: line)
        guard found.count == 1, let error = found.first else {
            XCTFail("expected one error at \(path), got:\n\(ConfigErrors(found))", file: file, line: line)
            return nil
        }
        XCTAssertEqual(error.path.description, path, file: file, line: line)
        XCTAssertTrue(error.message.contains(fragment), "message was: \(error.message)", file: file, line: line)
        if let expectedLine {
            XCTAssertEqual(error.position?.line, expectedLine, "position of \(error)", file: file, line: line)
        }
        return error
    }
}

/// The smallest valid configuration body, for tests that add one section to it.
let minimalListen = #"listen: [{ address: "127.0.0.1:3128" }],"#
let minimalInterception = #"interception: { ca_certificate: "certs/ca.pem", ca_key: "certs/ca.key" },"#
