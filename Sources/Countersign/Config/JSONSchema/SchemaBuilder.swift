/// Short constructors for the JSON Schema (draft-07) pieces the configuration uses. Every
/// object is closed (`additionalProperties: false`), as the decoder is strict.
enum SchemaBuilder {
    typealias Members = [(String, SchemaJSON)]

    static func text(_ description: String, default value: String? = nil, choices: [String]? = nil,
                     pattern: String? = nil, format: String? = nil) -> SchemaJSON {
        var members: Members = [("type", .string("string")), ("description", .string(description))]
        if let choices { members.append(("enum", .array(choices.map(SchemaJSON.string)))) }
        if let pattern { members.append(("pattern", .string(pattern))) }
        if let format { members.append(("format", .string(format))) }
        if let value { members.append(("default", .string(value))) }
        return .object(members)
    }

    static func boolean(_ description: String, default value: Bool? = nil) -> SchemaJSON {
        var members: Members = [("type", .string("boolean")), ("description", .string(description))]
        if let value { members.append(("default", .bool(value))) }
        return .object(members)
    }

    static func integer(_ description: String, minimum: Int, default value: Int? = nil) -> SchemaJSON {
        var members: Members = [("type", .string("integer")), ("description", .string(description)),
                                ("minimum", .integer(minimum))]
        if let value { members.append(("default", .integer(value))) }
        return .object(members)
    }

    /// "500ms", "10s", "10m", "1h" (decimals allowed) or a number of seconds, above zero.
    static func duration(_ description: String, default value: String) -> SchemaJSON {
        .object([("type", .array([.string("string"), .string("number")])),
                 ("description", .string(description + " A duration: \"500ms\", \"10s\", \"10m\", \"1h\" or a number of seconds.")),
                 ("pattern", .string(#"^[0-9]+(\.[0-9]+)?(ms|s|m|h)$"#)),
                 ("exclusiveMinimum", .integer(0)),
                 ("default", .string(value))])
    }

    static func list(_ description: String, of item: SchemaJSON, minItems: Int? = nil,
                     default value: SchemaJSON? = nil) -> SchemaJSON {
        var members: Members = [("type", .string("array")), ("description", .string(description)), ("items", item)]
        if let minItems { members.append(("minItems", .integer(minItems))) }
        if let value { members.append(("default", value)) }
        return .object(members)
    }

    static func object(_ description: String, _ properties: Members, required: [String] = []) -> SchemaJSON {
        var members: Members = [("type", .string("object")), ("description", .string(description)),
                                ("properties", .object(properties))]
        if !required.isEmpty { members.append(("required", .array(required.map(SchemaJSON.string)))) }
        members.append(("additionalProperties", .bool(false)))
        return .object(members)
    }

    /// An object whose keys the user names (credentials, hosts, users), each value `value`.
    static func map(_ description: String, of value: SchemaJSON) -> SchemaJSON {
        .object([("type", .string("object")), ("description", .string(description)), ("additionalProperties", value)])
    }

    static func reference(_ definition: String, _ description: String) -> SchemaJSON {
        .object([("$ref", .string("#/definitions/" + definition)), ("description", .string(description))])
    }

    /// The `<name>_env` / `<name>_file` pair every secret is given by (exactly one of them).
    static func secret(_ name: String, _ what: String) -> Members {
        [(name + "_env", text("Name of the environment variable holding \(what). Give \(name)_env or \(name)_file, not both.")),
         (name + "_file", text("File whose contents (trailing line breaks removed) are \(what). Give \(name)_env or \(name)_file, not both."))]
    }
}
