/// The admin pages as rendered for the requests of one read of a connection. Pipelined requests
/// read together all arrived before any of their answers left, so one rendering answers them
/// all. Rendered per request, a client pipelining pages without reading kept the main loop
/// rendering thousands a second, and `/healthz` waited seconds behind it. A later request on any
/// connection is another read and renders afresh, so nobody sees counts older than their last look.
struct PagesOfOneRead {
    private let pages: AdminPages
    private var metricsText: String?
    private var report: StatusReport?
    private var json: String?
    /// The HTML page below its summary line. Only the summary depends on the request
    /// (`refresh=N`), so varying the query in each request does not force a full render.
    private var htmlSections: String?

    init(_ pages: AdminPages) {
        self.pages = pages
    }

    mutating func metrics() -> String {
        Self.kept(&metricsText) { pages.metricsText() }
    }

    mutating func statusJSON() -> String {
        let report = statusReport()
        return Self.kept(&json) { report.json() }
    }

    mutating func statusHTML(refresh: Int?) -> String {
        let report = statusReport()
        return StatusPage.summary(report, refresh: refresh) + Self.kept(&htmlSections) { StatusPage.sections(report) }
    }

    private mutating func statusReport() -> StatusReport {
        Self.kept(&report) { pages.statusReport() }
    }

    /// What `slot` holds, made by `make` and kept there the first time.
    private static func kept<Value>(_ slot: inout Value?, _ make: () -> Value) -> Value {
        if let value = slot { return value }
        let made = make()
        slot = made
        return made
    }
}
