import PeerGateListener

extension FuzzTargets {
    /// The request head parser (`HTTPRequestHeadParser`), fed the whole input at once and again in
    /// the chunks the first byte chooses: both give the same verdict and the same head length; a
    /// head is never longer than `maximumHeadLength`, its length ends in CRLF CRLF, the head's
    /// target starts with "/", its version is HTTP/1.0 or HTTP/1.1, an HTTP/1.1 head has exactly
    /// one Host field, and a parser answers only once.
    static let httpRequestHead = FuzzTarget("http-request-head", "PeerGateListener: HTTP/1.x request head") { data in
        guard let first = data.first else { return }
        let stream = Array(data.dropFirst())
        let chunk = Int(first % 32) + 1
        var whole = HTTPRequestHeadParser()
        whole.append(stream)
        let oneShot = whole.next()
        FuzzCheck.expect(whole.next() == nil, "answered twice")

        var pieces = HTTPRequestHeadParser()
        var chunked: HTTPRequestHeadParser.Result?
        var offset = 0
        while offset < stream.count && chunked == nil {
            let end = min(stream.count, offset + chunk)
            pieces.append(stream[offset..<end])
            chunked = pieces.next()
            offset = end
        }
        FuzzCheck.expect(
            oneShot == chunked,
            "chunking changed the verdict: \(String(describing: oneShot)) vs \(String(describing: chunked))")
        FuzzCheck.expect(whole.headLength == pieces.headLength, "chunking changed the head length")
        if oneShot == nil {
            FuzzCheck.expect(stream.count <= HTTPRequestHeadParser.maximumHeadLength, "no verdict past the limit")
        }
        if case .head(let head) = oneShot {
            let length = whole.headLength ?? -1
            FuzzCheck.expect(
                length >= 4 && length <= HTTPRequestHeadParser.maximumHeadLength, "head length out of bounds")
            FuzzCheck.expect(
                Array(stream[(length - 4)..<length]) == [13, 10, 13, 10], "head does not end in CRLF CRLF")
            FuzzCheck.expect(head.target.hasPrefix("/"), "target not in origin form")
            FuzzCheck.expect(head.version == "HTTP/1.1" || head.version == "HTTP/1.0", "odd version")
            if head.version == "HTTP/1.1" { FuzzCheck.expect(head.values(named: "host").count == 1, "not one Host") }
            for header in head.headers {
                FuzzCheck.expect(!header.name.isEmpty && !header.name.contains(":"), "bad field name")
                FuzzCheck.expect(!header.value.hasPrefix(" ") && !header.value.hasSuffix(" "), "untrimmed value")
                FuzzCheck.expect(
                    !header.value.utf8.contains(13) && !header.value.utf8.contains(10), "CR or LF in a value")
            }
            // The head, written back out, parses to the same head.
            var text = "\(head.method) \(head.target) \(head.version)\r\n"
            for header in head.headers { text += "\(header.name): \(header.value)\r\n" }
            text += "\r\n"
            var again = HTTPRequestHeadParser()
            again.append(Array(text.utf8))
            FuzzCheck.expect(again.next() == .head(head), "the head written back out parses differently")
        }
    }
}
