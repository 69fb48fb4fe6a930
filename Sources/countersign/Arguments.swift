import CountersignConfig

/// A small, strict argument reader: every option is declared, unknown ones are usage errors.
struct Arguments {
    private(set) var positional: [String] = []
    private(set) var options: [String: String] = [:]
    private(set) var flags: Set<String> = []

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// `valued` options take the next word (or `--name=value`); `switches` take none.
    init(_ words: [String], valued: Set<String>, switches: Set<String>) throws {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("-"), word != "-" else {
                positional.append(word)
                continue
            }
            var name = word
            var inlineValue: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name] = inlineValue
                } else {
                    guard index < words.count else { throw UsageError(description: "\(name) needs a value") }
                    options[name] = words[index]
                    index += 1
                }
            } else if switches.contains(name), inlineValue == nil {
                flags.insert(name)
            } else {
                let guess = NearMiss.suggestion(for: name, among: Array(valued) + Array(switches)).map { " (did you mean \($0)?)" } ?? ""
                throw UsageError(description: "unknown option \(name)\(guess)")
            }
        }
    }

    subscript(option: String) -> String? { options[option] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}
