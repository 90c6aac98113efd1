import Foundation
import TestSupport
import Testing

/// Every fuzz target's committed seeds and every input a fuzzer ever found (Fuzz/regressions),
/// replayed through the plain (uninstrumented) herdr-fuzz: a finding fixed stays fixed in the
/// ordinary suite. `make test` also runs each target briefly under libFuzzer (scripts/fuzz.sh).
@Suite struct FuzzReplayTests {
    static let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    static var targets: [String] {
        guard let result = try? ProcessRunner.run(BuiltProgram.path("herdr-fuzz"), ["list"], timeout: 30) else {
            return []
        }
        return result.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) }
    }

    @Test func everyTargetHasASeedCorpus() throws {
        let targets = Self.targets
        #expect(targets.count >= 2, "herdr-fuzz list: \(targets)")
        for target in targets {
            let seeds = Self.fuzzRoot.appendingPathComponent("corpus/\(target)").path
            let files = (try? FileManager.default.contentsOfDirectory(atPath: seeds)) ?? []
            #expect(!files.isEmpty, "Fuzz/corpus/\(target) has no seed")
        }
    }

    @Test(arguments: targets)
    func seedsAndFindingsReplayCleanly(target: String) throws {
        let paths = ["corpus", "regressions"].map { Self.fuzzRoot.appendingPathComponent("\($0)/\(target)").path }
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-fuzz"), ["run", target] + paths,
            environment: ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 },
            timeout: 120)
        #expect(result.status == 0, "\(target): \(result.stdout) \(result.stderr.suffix(2000))")
        #expect(result.stdout.contains("\(target): ") && result.stdout.contains("no finding"), "\(result.stdout)")
    }
}
