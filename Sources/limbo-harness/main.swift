import Foundation

// x509-limbo harness (harness/README.md upstream): reads a limbo testcase suite on standard
// input, evaluates every case with Countersign's trust policy and writes a LimboResult
// document on standard output. Exit status 1 only for harness errors, never for a case.
let input = FileHandle.standardInput.readDataToEndOfFile()
let suite: LimboSuite
do {
    suite = try JSONDecoder().decode(LimboSuite.self, from: input)
} catch {
    FileHandle.standardError.write(Data("limbo-harness: standard input is not a limbo suite: \(error)\n".utf8))
    exit(1)
}
let now = Int64(Date().timeIntervalSince1970)
let results = suite.testcases.map { LimboEvaluation.evaluate($0, now: now) }
let encoder = JSONEncoder()
encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
do {
    FileHandle.standardOutput.write(try encoder.encode(LimboResults(harness: "countersign", results: results)))
    FileHandle.standardOutput.write(Data("\n".utf8))
} catch {
    FileHandle.standardError.write(Data("limbo-harness: cannot encode the results: \(error)\n".utf8))
    exit(1)
}
