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

    /// Where a request may hold a placeholder: its target, its fields, or Basic credentials.
    /// Scanned once per request, by whoever asks first: a caller that needs to know before it
    /// reads a plan hands the scan on to `apply`.
    public struct PlaceholderScan: Sendable {
        @usableFromInline let targetHasMarker: Bool
        /// A field holds the marker, or Basic credentials (which show one only decoded).
        @usableFromInline let fieldsNeedPass: Bool

        /// Inlinable: made where it is asked for, as the one check it replaces was (a call to
        /// make it cost ~80 instructions a request more).
        @inlinable
        public init(target: String, headers: HeaderFields) {
            targetHasMarker = RequestInjection.carriesMarker(target)
            fieldsNeedPass = RequestInjection.fieldsNeedPass(headers)
        }

        /// Without a possible placeholder, under a plan that injects nothing, `apply` leaves
        /// the request `.unchanged`, and a caller can say so without reading the plan.
        public var mayHoldPlaceholder: Bool { targetHasMarker || fieldsNeedPass }
    }

    /// `target` is the origin-form target that goes upstream (`/path?query`).
    public static func apply(_ plan: InjectionPlan, target: String, headers: HeaderFields) -> Outcome {
        apply(plan, target: target, headers: headers, scan: PlaceholderScan(target: target, headers: headers))
    }

    /// `apply`, with `scan` already made of this target and these fields.
    public static func apply(_ plan: InjectionPlan, target: String, headers: HeaderFields, scan: PlaceholderScan) -> Outcome {
        // Most forwarded requests: nothing to inject and nothing to resolve. Answered before
        // any copy of the target or the fields is made (this ran ~650 instructions a request).
        let targetHasMarker = scan.targetHasMarker
        let fieldsNeedPass = scan.fieldsNeedPass
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

    @usableFromInline
    static func carriesMarker(_ target: String) -> Bool {
        target.utf8.withContiguousStorageIfAvailable({ ByteSearch.contains(UnsafeRawBufferPointer($0), Placeholders.marker) })
            ?? ByteSearch.contains(target.utf8, Placeholders.marker)
    }

    /// A field holds the marker, or Basic credentials.
    @usableFromInline
    static func fieldsNeedPass(_ headers: HeaderFields) -> Bool {
        headers.storageContains(Placeholders.marker) || hasBasicAuthorization(headers)
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
