import Foundation

/// The targets, by name.
enum FuzzTargets {
    static let all: [FuzzTarget] = [homeFrames, redisURL] + wire + channel + files + appAttest

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

#if FUZZING
    import CFuzzDriver

    // Built with -sanitize=fuzzer: this is the program's main (SwiftPM's name for it); it picks
    // the target from HERDR_FUZZ_TARGET and hands the arguments to libFuzzer.
    nonisolated(unsafe) private var selected: FuzzTarget?

    @_cdecl("herdr_fuzz_main")
    public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
        let name = ProcessInfo.processInfo.environment["HERDR_FUZZ_TARGET"] ?? ""
        if name == "list" {
            for target in FuzzTargets.all { print(target.name) }
            return 0
        }
        guard let target = FuzzTargets.named(name) else {
            FileHandle.standardError.write(
                Data(
                    "herdr-fuzz: set HERDR_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n"
                        .utf8))
            return 64
        }
        selected = target
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
            let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
            selected?.body(bytes)
            return 0
        }
    }
#else
    /// Built without the fuzzer: replays inputs through a target (the committed corpus and the
    /// regression inputs, in `make test`), or lists the targets.
    @main
    struct FuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            switch arguments.first {
            case "list":
                for target in FuzzTargets.all { print("\(target.name)\t\(target.summary)") }
            case "run" where arguments.count >= 2:
                guard let target = FuzzTargets.named(arguments[1]) else {
                    FileHandle.standardError.write(Data("herdr-fuzz: no target \(arguments[1])\n".utf8))
                    exit(64)
                }
                var count = 0
                for path in arguments.dropFirst(2) {
                    for file in inputs(at: path) {
                        guard let data = FileManager.default.contents(atPath: file) else { continue }
                        target.body(Array(data))
                        count += 1
                    }
                }
                print("\(target.name): \(count) inputs, no finding")
            default:
                FileHandle.standardError.write(
                    Data("usage: herdr-fuzz list | herdr-fuzz run TARGET FILE-OR-DIRECTORY...\n".utf8))
                exit(64)
            }
        }

        /// A file, or the files of a directory (sorted, not recursive).
        static func inputs(at path: String) -> [String] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
            guard isDirectory.boolValue else { return [path] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.sorted().filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
        }
    }
#endif
