import CountersignConfig
import CountersignSigning

/// Compiles each host entry's `inject` and `placeholders` into an `InjectionPlan` with the
/// secrets of this configuration (a reload compiles them anew, so rotated secrets apply).
enum InjectionPlans {
    static func compile(_ configuration: Configuration) -> [String: InjectionPlan] {
        var plans: [String: InjectionPlan] = [:]
        for host in configuration.hosts.entries where !host.inject.isEmpty || !host.placeholders.isEmpty {
            func secret(_ name: String) -> [UInt8] {
                // The decoder refused every name without an injectable secret.
                guard let secret = configuration.credentials[name]?.injectableSecret else { preconditionFailure("credential \(name) has no injectable secret") }
                return secret.bytes
            }
            var headers: [InjectionPlan.Header] = [], query: [InjectionPlan.QueryParameter] = []
            for rule in host.inject {
                switch rule.placement {
                case .header(let name, let prefix): headers.append(InjectionPlan.Header(name: name, value: Array(prefix.utf8) + secret(rule.credential)))
                case .query(let name): query.append(InjectionPlan.QueryParameter(name: name, value: secret(rule.credential)))
                }
            }
            let placeholders = Dictionary(uniqueKeysWithValues: host.placeholders.map { ($0, secret($0)) })
            plans[host.pattern] = InjectionPlan(host: host.pattern, headers: headers, query: query, placeholders: placeholders)
        }
        return plans
    }
}
