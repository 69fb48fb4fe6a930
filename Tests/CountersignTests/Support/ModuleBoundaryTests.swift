import XCTest

/// The protocol core sees OpenSSL but not libevent: no file under Auth/, Trust/,
/// Interception/, Support/, HTTP/, Config/, Log/ or Admin/ imports a C module whose headers
/// reach libevent, and no such module depends on one in Package.swift. (SwiftPM lets a
/// file import any module already built, so only a check like this keeps the line.)
final class ModuleBoundaryTests: XCTestCase {
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private let coreAreas = ["Auth", "Trust", "Interception", "Support", "HTTP", "Config", "Log", "Admin"]

    /// The C modules of this package, by name, with the text of every header they hold.
    private func cModules() throws -> [String: String] {
        let sources = root.appendingPathComponent("Sources")
        var modules: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let include = sources.appendingPathComponent(name).appendingPathComponent("include")
            guard let headers = try? FileManager.default.contentsOfDirectory(atPath: include.path) else { continue }
            modules[name] = try headers.map { try String(contentsOf: include.appendingPathComponent($0), encoding: .utf8) }
                .joined(separator: "\n")
        }
        return modules
    }

    private func reachesLibevent(_ header: String) -> Bool {
        header.contains("<event2/") || header.contains("\"event2/")
    }

    func testCoreFilesImportNoModuleThatReachesLibevent() throws {
        let modules = try cModules()
        XCTAssertFalse(modules.isEmpty, "the C modules were found")
        XCTAssertTrue(modules.values.contains { reachesLibevent($0) }, "some module wraps libevent (for the proxy)")
        var checked = 0
        for area in coreAreas {
            let directory = root.appendingPathComponent("Sources/Countersign/\(area)")
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                checked += 1
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    let module = String(line.split(separator: " ").last ?? "")
                    if let header = modules[module] {
                        XCTAssertFalse(reachesLibevent(header), "\(area)/\(file) imports \(module), which reaches libevent")
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 100, "the core's files were read")
    }

    func testCoreTargetsDependOnNoModuleThatReachesLibevent() throws {
        let modules = try cModules()
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for area in coreAreas {
            let lines = manifest.split(separator: "\n").filter { $0.contains("name: \"Countersign\(area)\"") }
            XCTAssertEqual(lines.count, 1, "one target for \(area)")
            for (module, header) in modules where reachesLibevent(header) {
                XCTAssertFalse(lines.joined().contains("\"\(module)\""), "Countersign\(area) depends on \(module)")
            }
        }
    }

    /// The shell stays thin (issue 24): libevent's functions are called from the few files of
    /// the event loop, stream, buffer, listener and timer types, nowhere else.
    func testLibeventIsCalledFromAtMostSixFiles() throws {
        let calls = try NSRegularExpression(pattern: #"\b(event|evbuffer|bufferevent|evconnlistener|evdns|evutil)_[a-z_]+\("#)
        let directory = root.appendingPathComponent("Sources/Countersign")
        var callers: [String] = []
        for case let file as String in FileManager.default.enumerator(atPath: directory.path)! where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            if calls.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil { callers.append(file) }
        }
        XCTAssertTrue(callers.contains("Proxy/Stream.swift"), "the scan finds the stream's libevent calls")
        XCTAssertLessThanOrEqual(callers.count, 6, "files calling libevent: \(callers.sorted())")
    }
}
