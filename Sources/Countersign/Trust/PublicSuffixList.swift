/// The Public Suffix List (publicsuffix.org): names under which anyone may register, so that
/// a wildcard directly under one (`*.co.uk`, `*.s3.amazonaws.com`) would cover unrelated
/// owners. Read once from Debian's `publicsuffix` package when it is installed (ICANN and
/// private sections, kept current by the system's updates); otherwise a compact built-in
/// list of the common multi-label suffixes stands in, which misses the rarer ones. Rules are
/// matched on ASCII names; the list's internationalised rules (in Unicode) never match an
/// A-label, so a wildcard under an IDN suffix is not recognised.
public final class PublicSuffixList: Sendable {
    public static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"
    /// The system list if readable, the built-in one otherwise.
    public static let shared: PublicSuffixList = {
        if let bytes = try? FileBytes.read(systemPath, what: "public suffix list") {
            return PublicSuffixList(rules: String(decoding: bytes, as: UTF8.self), source: systemPath)
        }
        return PublicSuffixList(rules: builtIn, source: "built-in list")
    }()

    /// Where the rules came from: the file path or "built-in list".
    public let source: String
    private let exact: Set<String>
    /// `*.X` rules, stored as X.
    private let wildcards: Set<String>
    /// `!X` rules, stored as X.
    private let exceptions: Set<String>

    /// Parses the list's format: one rule per line, `//` comments, `*.` and `!` prefixes.
    public init(rules text: String, source: String) {
        var exact = Set<String>(), wildcards = Set<String>(), exceptions = Set<String>()
        for line in text.split(whereSeparator: \.isNewline) {
            guard let rule = line.split(whereSeparator: \.isWhitespace).first, !rule.hasPrefix("//") else { continue }
            let lowered = rule.lowercased()
            if lowered.hasPrefix("!") {
                exceptions.insert(String(lowered.dropFirst()))
            } else if lowered.hasPrefix("*.") {
                wildcards.insert(String(lowered.dropFirst(2)))
            } else {
                exact.insert(lowered)
            }
        }
        self.exact = exact
        self.wildcards = wildcards
        self.exceptions = exceptions
        self.source = source
    }

    /// Whether `name` is itself a public suffix (the list's algorithm, with its implicit `*`
    /// rule: every single label is one).
    public func isPublicSuffix(_ name: String) -> Bool {
        var lowered = name.lowercased()
        if lowered.hasSuffix(".") { lowered.removeLast() }
        let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty, !labels.contains(where: \.isEmpty) else { return false }
        if labels.count == 1 { return true }
        if exceptions.contains(lowered) { return false }
        return exact.contains(lowered) || wildcards.contains(labels.dropFirst().joined(separator: "."))
    }

    /// Multi-label suffixes of the most used country codes and the largest shared hosting
    /// namespaces: the fallback when the system list is missing.
    static let builtIn = """
        ac.uk co.uk gov.uk ltd.uk me.uk net.uk nhs.uk org.uk plc.uk police.uk sch.uk
        com.au net.au org.au edu.au gov.au asn.au id.au
        co.nz net.nz org.nz govt.nz ac.nz school.nz geek.nz gen.nz kiwi.nz maori.nz
        co.jp ne.jp or.jp ac.jp ad.jp ed.jp go.jp gr.jp lg.jp
        co.kr ne.kr or.kr re.kr go.kr ac.kr
        com.cn net.cn org.cn gov.cn edu.cn ac.cn
        com.hk net.hk org.hk gov.hk edu.hk idv.hk
        com.tw net.tw org.tw gov.tw edu.tw idv.tw
        com.sg net.sg org.sg gov.sg edu.sg per.sg
        co.in net.in org.in firm.in gen.in ind.in ac.in edu.in gov.in res.in
        co.za net.za org.za gov.za ac.za web.za
        com.br net.br org.br gov.br edu.br art.br blog.br eco.br
        com.mx net.mx org.mx gob.mx edu.mx
        com.ar net.ar org.ar gob.ar edu.ar int.ar
        co.il org.il net.il ac.il gov.il muni.il
        com.tr net.tr org.tr gen.tr biz.tr gov.tr edu.tr
        com.ru net.ru org.ru pp.ru msk.ru spb.ru
        com.ua net.ua org.ua in.ua kiev.ua
        com.pl net.pl org.pl info.pl biz.pl waw.pl
        co.at or.at ac.at gv.at
        com.es nom.es org.es gob.es edu.es
        co.id or.id web.id ac.id go.id my.id
        com.my net.my org.my gov.my edu.my
        com.ph net.ph org.ph gov.ph edu.ph
        com.vn net.vn org.vn gov.vn edu.vn
        co.th in.th ac.th go.th or.th
        com.sa net.sa org.sa gov.sa edu.sa
        co.ke or.ke ac.ke go.ke
        com.ng org.ng gov.ng edu.ng
        com.eg org.eg gov.eg edu.eg
        com.pk net.pk org.pk gov.pk edu.pk
        com.co net.co org.co gov.co edu.co
        com.pe net.pe org.pe gob.pe edu.pe
        com.ve net.ve org.ve gob.ve
        co.uz com.uz co.ug co.tz co.zw co.zm co.bw
        *.ck !www.ck *.bd *.er *.fk *.jm *.kh *.mm *.np *.pg
        github.io gitlab.io herokuapp.com appspot.com blogspot.com cloudfront.net
        azurewebsites.net cloudapp.net s3.amazonaws.com elasticbeanstalk.com
        firebaseapp.com web.app netlify.app vercel.app pages.dev workers.dev
        """.split(whereSeparator: \.isWhitespace).joined(separator: "\n")
}
