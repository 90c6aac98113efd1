/// One parser under the fuzzer: a name (the corpus folder, `HERDR_FUZZ_TARGET`) and what to do
/// with one input. A target returns normally for any input a parser refuses; a crash, a failed
/// invariant (`FuzzCheck.expect`), a leak, a timeout or running out of memory is a finding.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let body: @Sendable ([UInt8]) -> Void

    init(_ name: String, _ summary: String, _ body: @escaping @Sendable ([UInt8]) -> Void) {
        self.name = name
        self.summary = summary
        self.body = body
    }
}

/// Invariants a target checks beyond "does not crash": a failure traps, which libFuzzer reports
/// with the input that caused it.
enum FuzzCheck {
    static func expect(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
        line: UInt = #line
    ) {
        if !condition() { fatalError("fuzz invariant failed: \(message())", file: file, line: line) }
    }
}
