import CountersignConfig
import CountersignSigning

/// Compiles each host entry's `inject` and `placeholders` into an `InjectionPlan` with the
/// secrets of this configuration (a reload compiles them anew, so rotated secrets apply).
enum InjectionPlans {
    static func compile(_ configuration: Configuration) -> [String: InjectionPlan] {
        var plans: [String: InjectionPlan] = [:]
        for host in configuration.hosts.entries where !host.inject.isEmpty || !host.placeholders.isEmpty {
            func value(_ name: String) -> InjectionPlan.Value {
                let credential = configuration.credentials[name]
                if case .oauth2? = credential { return .accessToken(credential: name) }
                // The decoder refused every other name without an injectable secret.
                guard let secret = credential?.injectableSecret else { preconditionFailure("credential \(name) has no injectable secret") }
                return .secret(secret.bytes)
            }
            var headers: [InjectionPlan.Header] = [], query: [InjectionPlan.QueryParameter] = []
            for rule in host.inject {
                switch rule.placement {
                case .header(let name, let prefix): headers.append(InjectionPlan.Header(name: name, prefix: Array(prefix.utf8), value: value(rule.credential)))
                case .query(let name): query.append(InjectionPlan.QueryParameter(name: name, value: value(rule.credential)))
                }
            }
            let placeholders = Dictionary(uniqueKeysWithValues: host.placeholders.map { ($0, value($0)) })
            plans[host.pattern] = InjectionPlan(host: host.pattern, headers: headers, query: query, placeholders: placeholders)
        }
        return plans
    }
}
