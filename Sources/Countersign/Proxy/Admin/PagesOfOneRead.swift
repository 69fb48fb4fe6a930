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
        if let metricsText { return metricsText }
        let text = pages.metricsText()
        metricsText = text
        return text
    }

    mutating func statusJSON() -> String {
        if let json { return json }
        let text = statusReport().json()
        json = text
        return text
    }

    mutating func statusHTML(refresh: Int?) -> String {
        let report = statusReport()
        let sections = htmlSections ?? StatusPage.sections(report)
        htmlSections = sections
        return StatusPage.summary(report, refresh: refresh) + sections
    }

    private mutating func statusReport() -> StatusReport {
        if let report { return report }
        let fresh = pages.statusReport()
        report = fresh
        return fresh
    }
}
