import Foundation
import XCTest
@testable import CountersignConfig

/// The JSON Schema cannot drift from the decoder: every key the strict decoder accepts must be
/// described, and the committed `docs/countersign.schema.json` must equal what
/// `countersign schema` prints.
final class JSONSchemaTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every section of the configuration in the product contract (docs/overview.md), so that every object reader of the decoder
    /// runs. Files and secrets are missing: the errors that causes do not matter here, only
    /// which keys each reader allows.
    private static let everySection = """
    {
      listen: [
        { address: "127.0.0.1:3128" },
        { address: "0.0.0.0:3129", allow: ["10.1.0.0/16"],
          proxy_auth: { realm: "r", users: { app: { password_env: "APP_PROXY_PASSWORD" } } } },
        { address: "127.0.0.1:8080", mode: "gateway", upstream: "https://api.example.com" },
      ],
      admin: { address: "127.0.0.1:9901", allow: ["127.0.0.0/8"] },
      workers: 0,
      unlisted_hosts: "tunnel",
      interception: { ca_certificate: "certs/ca.pem", ca_key: "certs/ca.key" },
      parent_proxy: { url: "https://proxy.corp:8443",
                      auth: { credential: "corp", schemes: ["ntlm"], max_failures: 1, allow_plaintext: false },
                      trust: { anchors: ["certs/corp-ca.pem"] }, identity: "mtls" },
      state_dir: "state",
      credentials: {
        svc:    { user: "svc", password_env: "SVC_PASSWORD" },
        corp:   { user: "CORP\\\\svc", password_file: "secrets/corp", workstation: "APPHOST" },
        legacy: { user: "CORP\\\\app", nt_hash_env: "APP_NT_HASH" },
        token:  { token_file: "secrets/api-token" },
        idp:    { oauth2: { token_url: "https://idp.example.com/oauth/token", client_id: "app",
                            client_secret_env: "IDP_SECRET", scope: "read", auth: "body" } },
        krb:    { kerberos: { principal: "svc@CORP.EXAMPLE", keytab_file: "secrets/svc.keytab", krb5_conf: "krb5.conf" } },
        mtls:   { pkcs12: "certs/client.p12", passphrase_env: "P12_PASSPHRASE" },
        mtls2:  { certificate: "certs/client.pem", private_key: "certs/client.key" },
      },
      hosts: {
        "api.example.com": {
          intercept: true, upstream_tls: true,
          trust: { anchors: ["certs/internal-ca.pem"], anchors_only: true, pinning: "public-key",
                   pins: ["sha256//r8udi/Mxd6pLOS73ElSfLb5bgwSMuZx5MVIjnTYGd+I="],
                   pinned_certificates: ["certs/api.pem"], validate_domain: true,
                   allow_invalid_certificates: false, server_name: "api.example.com", min_tls_version: "1.2",
                   max_chain_depth: 8, revocation: { ocsp_stapling: "prefer" } },
          identity: "mtls",
          auth: [
            { realm: "admin", credential: "svc", schemes: ["digest"], persistence: "session",
              preemptive: true, max_failures: 1, allow_plaintext: false },
            { credential: "krb", schemes: ["negotiate"], spn: "HTTP@api.example.com" },
          ],
        },
      },
      limits: { max_connections: 10000, max_header_bytes: 65536, replay_body_bytes: 1048576,
                connect_timeout: "10s", header_timeout: "15s", idle_timeout: "60s",
                tunnel_idle_timeout: "10m", drain_timeout: "30s" },
      log: { level: "info", format: "json", access: true },
      reload: { watch: true },
    }
    """

    /// The objects the decoder read, with the keys each allows.
    private func decoderKeys() throws -> [(path: KeyPath, keys: [String])] {
        let root = try JSON5Parser.parse(JSONSchemaTests.everySection)
        let directory = NSTemporaryDirectory() + "countersign-schema-" + UUID().uuidString
        let context = DecodingContext(file: directory + "/countersign.json5", baseDirectory: directory,
                                      environment: [:], files: FileAccess())
        _ = ConfigDecoder(context: context).decode(root, sourcePath: directory + "/countersign.json5")
        return context.allowedKeys
    }

    func testEveryKeyTheDecoderAcceptsIsInTheSchema() throws {
        let schema = ConfigurationJSONSchema.document
        let read = try decoderKeys()
        // The walk must reach every kind of object, or it proves nothing about the ones it missed.
        let reached = Set(read.map { $0.path.description })
        for expected in ["(top level)", "listen[1]", "listen[1].proxy_auth", "listen[1].proxy_auth.users.app", "admin",
                         "interception", "parent_proxy", "parent_proxy.auth", "credentials.svc", "credentials.idp.oauth2",
                         "hosts.\"api.example.com\"", "hosts.\"api.example.com\".trust", "hosts.\"api.example.com\".auth[0]",
                         "limits", "log"] {
            XCTAssertTrue(reached.contains(expected), "the decoder never read \(expected); reached: \(reached.sorted())")
        }
        var missing: [String] = []
        for (path, keys) in read {
            guard let node = JSONSchemaTests.schemaNode(at: path, in: schema) else {
                missing.append("\(path) (no schema for this object)")
                continue
            }
            let properties = JSONSchemaTests.resolve(node, in: schema)["properties"]
            for key in keys where properties?[key] == nil {
                missing.append(path.appending(key).description)
            }
        }
        XCTAssertEqual(missing, [], "keys the decoder accepts but ConfigurationJSONSchema does not describe")
    }

    func testEveryPropertyHasADescriptionAndAType() {
        let schema = ConfigurationJSONSchema.document
        var undescribed: [String] = []
        func visit(_ node: SchemaJSON, _ path: String) {
            guard case .object = node else { return }
            if let properties = node["properties"], case .object(let members) = properties {
                for (key, value) in members {
                    let described = value["description"] != nil
                    let typed = value["type"] != nil || value["$ref"] != nil
                    if !described || !typed { undescribed.append(path + "." + key) }
                    visit(value, path + "." + key)
                }
            }
            for child in ["items", "additionalProperties"] { if let value = node[child] { visit(value, path + "[]") } }
            if let definitions = node["definitions"], case .object(let members) = definitions {
                for (name, value) in members { visit(value, "#" + name) }
            }
        }
        visit(schema, "")
        XCTAssertEqual(undescribed, [])
    }

    func testCommittedSchemaEqualsTheGeneratedOne() throws {
        let committed = JSONSchemaTests.repository.appendingPathComponent("docs/countersign.schema.json")
        let committedLines = try String(contentsOf: committed, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let generatedLines = ConfigurationJSONSchema.document.text().split(separator: "\n", omittingEmptySubsequences: false)
        guard committedLines != generatedLines else { return }
        let line = (0..<min(committedLines.count, generatedLines.count)).first { committedLines[$0] != generatedLines[$0] }
            ?? min(committedLines.count, generatedLines.count)
        let shown = { (lines: [Substring]) in line < lines.count ? String(lines[line]) : "(end of file)" }
        XCTFail("""
            docs/countersign.schema.json is stale from line \(line + 1): it has \(shown(committedLines)), \
            the schema is \(shown(generatedLines)). Regenerate it: countersign schema > docs/countersign.schema.json
            """)
    }

    // MARK: - Walking the schema

    private static func resolve(_ node: SchemaJSON, in root: SchemaJSON) -> SchemaJSON {
        guard case .string(let reference)? = node["$ref"], reference.hasPrefix("#/definitions/"),
              let target = root["definitions"]?[String(reference.dropFirst("#/definitions/".count))] else { return node }
        return resolve(target, in: root)
    }

    /// The schema of the value at a decoder path: named keys under `properties`, user-chosen
    /// names (hosts, credentials, users) under `additionalProperties`, array elements under `items`.
    static func schemaNode(at path: KeyPath, in root: SchemaJSON) -> SchemaJSON? {
        var node = root
        for component in path.components {
            let current = resolve(node, in: root)
            switch component {
            case .key(let key):
                if let property = current["properties"]?[key] {
                    node = property
                } else if let values = current["additionalProperties"], case .object = values {
                    node = values
                } else {
                    return nil
                }
            case .index:
                guard let items = current["items"] else { return nil }
                node = items
            }
        }
        return resolve(node, in: root)
    }
}
