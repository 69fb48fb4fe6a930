import CountersignConfig
import CountersignProxy
import Foundation
import XCTest

/// Countersign running in this process on an ephemeral port, on its own thread.
final class RunningProxy {
    let server: ProxyServer
    let port: UInt16
    private let directory: URL
    private let finished = DispatchSemaphore(value: 0)

    init(config extra: String = "") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-proxytests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("countersign.json5").path
        let text = """
        { listen: [{ address: "127.0.0.1:0" }], workers: 1, log: { level: "error", access: false },
          limits: { header_timeout: "2s", drain_quiet_period: "10ms" }, \(extra) }
        """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try ConfigLoader.load(path: path, environment: [:])
        server = try ProxyServer(configPath: path, environment: [:], configuration: configuration)
        try server.start()
        port = server.boundPorts[0]
        let server = self.server
        let finished = self.finished
        Thread.detachNewThread {
            server.runMainLoop()
            finished.signal()
        }
    }

    func stop() {
        server.requestStop()
        _ = finished.wait(timeout: .now() + 10)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A test case with Countersign in-process between raw-socket clients and a recording upstream,
/// both fresh for each test.
class ProxyWithUpstreamTestCase: XCTestCase {
    var proxy: RunningProxy!
    var upstream: RecordingUpstream!

    override func setUpWithError() throws {
        upstream = try RecordingUpstream()
        proxy = try RunningProxy()
    }

    override func tearDown() {
        proxy.stop()
    }
}
