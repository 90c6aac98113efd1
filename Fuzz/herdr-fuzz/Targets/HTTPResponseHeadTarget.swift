import WebWire

extension FuzzTargets {
    /// The response head parser (`HTTPResponseHeadParser`), whole and in the chunks the first byte
    /// chooses: the same head or the same kind of refusal; the leftover is exactly the bytes after
    /// the blank line (the chunked leftover plus the bytes not yet appended); no head beyond
    /// `maximumHeadLength`; a status of three digits from 100; and a head written back out parses
    /// to the same head.
    static let httpResponseHead = FuzzTarget("http-response-head", "WebWire: HTTP/1.x response head") { data in
        guard let first = data.first else { return }
        let stream = Array(data.dropFirst())
        let chunk = Int(first % 32) + 1
        typealias Answer = Result<(head: HTTPResponseHead, leftover: [UInt8])?, HTTPResponseHeadError>
        var whole = HTTPResponseHeadParser()
        whole.append(stream)
        let oneShot = Answer { () throws(HTTPResponseHeadError) in try whole.next() }
        FuzzCheck.expect((try? whole.next()) == nil, "answered twice")

        var pieces = HTTPResponseHeadParser()
        var chunked: Answer = .success(nil)
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + chunk)
            pieces.append(stream[offset..<end])
            offset = end
            chunked = Answer { () throws(HTTPResponseHeadError) in try pieces.next() }
            if case .success(nil) = chunked { continue }
            break
        }
        switch (oneShot, chunked) {
        case (.success(nil), .success(nil)):
            FuzzCheck.expect(stream.count < HTTPResponseHeadParser.maximumHeadLength, "no verdict past the limit")
        case (.success(let a?), .success(let b?)):
            FuzzCheck.expect(a.head == b.head, "chunking changed the head")
            FuzzCheck.expect(a.leftover == b.leftover + stream[offset...], "chunking changed the leftover")
            let headLength = stream.count - a.leftover.count
            FuzzCheck.expect(headLength <= HTTPResponseHeadParser.maximumHeadLength, "head past the limit")
            FuzzCheck.expect(Array(stream[(headLength - 4)..<headLength]) == [13, 10, 13, 10], "no blank line")
            FuzzCheck.expect((100...999).contains(a.head.status), "status out of range")
            FuzzCheck.expect(a.head.version == "HTTP/1.1" || a.head.version == "HTTP/1.0", "odd version")
            var text = "\(a.head.version) \(a.head.status) \(a.head.reason)\r\n"
            for header in a.head.headers { text += "\(header.name): \(header.value)\r\n" }
            text += "\r\n"
            var again = HTTPResponseHeadParser()
            again.append(Array(text.utf8))
            FuzzCheck.expect((try? again.next())?.head == a.head, "the head written back out parses differently")
        case (.failure(let a), .failure(let b)):
            FuzzCheck.expect(a.kind == b.kind, "chunking changed the refusal: \(a) vs \(b)")
        default:
            FuzzCheck.expect(false, "chunking changed the verdict")
        }
    }
}
