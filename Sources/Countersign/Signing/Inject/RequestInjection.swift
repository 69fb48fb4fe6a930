import CountersignHTTP
import CountersignSupport

/// Puts a host's credentials on a request (SPEC "Injecting, signing and verifying"): every
/// placeholder the client wrote is resolved when the host lists its credential and refused
/// otherwise (before anything else, so nothing goes upstream), then `inject` sets its headers
/// and query parameters over whatever the client sent. Pure: a head in, a head out.
public enum RequestInjection {
    public enum Outcome: Sendable {
        /// Nothing to change: the head goes as it came.
        case unchanged
        /// The head to send, and the names of the placeholders resolved in it.
        case rewritten(target: String, headers: HeaderFields, resolved: [String])
        /// A placeholder for a credential this host does not list: refuse the request.
        case refused(placeholder: String)
        /// The OAuth2 credential whose access token must be fetched (into `plan.tokens`) first.
        case needsToken(credential: String)
    }

    /// Whether a request may hold a placeholder (in its target, its fields, or Basic
    /// credentials): without one, under a plan that injects nothing, `apply` leaves it
    /// `.unchanged`, and a caller can say so without reading the plan.
    public static func mayHoldPlaceholder(target: String, headers: HeaderFields) -> Bool {
        carriesMarker(target) || headers.storageContains(Placeholders.marker) || hasBasicAuthorization(headers)
    }

    /// `target` is the origin-form target that goes upstream (`/path?query`).
    public static func apply(_ plan: InjectionPlan, target: String, headers: HeaderFields) -> Outcome {
        // Most forwarded requests: nothing to inject and nothing to resolve. Answered before
        // any copy of the target or the fields is made (this ran ~650 instructions a request).
        let targetHasMarker = carriesMarker(target)
        let fieldsNeedPass = headers.storageContains(Placeholders.marker) || hasBasicAuthorization(headers)
        if !plan.injects, !targetHasMarker, !fieldsNeedPass { return .unchanged }
        var resolved: [String] = []
        var newTarget = target
        var newHeaders = headers
        var changed = false
        do {
            if targetHasMarker,
               let substituted = try Placeholders.substitute(Array(target.utf8)[...], plan: plan, encoding: .percent, resolved: &resolved) {
                newTarget = String(decoding: substituted, as: UTF8.self)
                changed = true
            }
            if fieldsNeedPass {
                try newHeaders.rewriteValues { name, value in
                    let substituted = try Placeholders.substitute(inField: name, value: value, plan: plan, resolved: &resolved)
                    if substituted != nil { changed = true }
                    return substituted
                }
            }
            if plan.injects {
                for header in plan.headers { newHeaders.replaceOrAppend(header.name, bytes: header.prefix + (try plan.bytes(of: header.value))) }
                if !plan.query.isEmpty { newTarget = try QueryInjection.apply(plan.query, of: plan, to: newTarget) }
                changed = true
            }
        } catch let refusal as PlaceholderRefusal {
            return .refused(placeholder: refusal.name)
        } catch let needed as TokenNeeded {
            return .needsToken(credential: needed.credential)
        } catch {
            preconditionFailure("placeholder substitution threw \(error)")
        }
        return changed ? .rewritten(target: newTarget, headers: newHeaders, resolved: resolved) : .unchanged
    }

    private static func carriesMarker(_ target: String) -> Bool {
        target.utf8.withContiguousStorageIfAvailable({ ByteSearch.contains(UnsafeRawBufferPointer($0), Placeholders.marker) })
            ?? ByteSearch.contains(target.utf8, Placeholders.marker)
    }

    /// Basic credentials are base64: a placeholder in them shows only once decoded.
    private static func hasBasicAuthorization(_ headers: HeaderFields) -> Bool {
        // No Authorization field (most requests) is answered without making its values.
        headers.firstIndex(.authorization) != nil
            && headers.values(.authorization).contains { ASCIICaseless.hasPrefix($0, "basic ") }
    }
}

/// A placeholder whose credential the host does not list.
struct PlaceholderRefusal: Error {
    let name: String
}

enum ASCIICaseless {
    static func hasPrefix(_ text: String, _ prefix: String) -> Bool {
        text.utf8.count >= prefix.utf8.count && zip(text.utf8, prefix.utf8).allSatisfy { $0 | 0x20 == $1 | 0x20 }
    }
}
