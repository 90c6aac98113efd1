import Testing

@testable import HerdrKit

/// Each of `SSHConfigLimits` at its boundary: at the limit resolves, one past it is an error
/// naming the file (and line, where there is one).
@Suite struct SSHConfigLimitsTests {
    let environment = SSHConfigEnvironment(localUser: "me", homeDirectory: "/home/me", localHostname: "box")
    let config = "/home/me/.ssh/config"

    func resolve(_ files: [String: [UInt8]], alias: String = "foo") throws(SSHConfigError) -> SSHConfigResolution {
        try SSHConfigResolver.file(
            config, environment: environment, fileSystem: InMemorySSHConfigFileSystem(bytes: files)
        )
        .resolve(alias: alias)
    }

    func failure(_ files: [String: [UInt8]], alias: String = "foo") -> SSHConfigError? {
        do {
            _ = try resolve(files, alias: alias)
            return nil
        } catch {
            return error
        }
    }

    /// `User u\n` padded with comment lines to exactly `size` bytes.
    func padded(_ size: Int) -> [UInt8] {
        var bytes = Array("User u\n".utf8)
        while bytes.count < size {
            let line = min(1000, size - bytes.count)
            bytes +=
                [UInt8(ascii: "#")] + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, line - 2))
                + (line >= 2 ? [0x0A] : [])
        }
        return Array(bytes.prefix(size))
    }

    @Test func fileSize() throws {
        let limit = SSHConfigLimits.maxFileBytes
        #expect(padded(limit).count == limit)
        #expect(try resolve([config: padded(limit)]).user == "u")
        let error = failure([config: padded(limit + 1)])
        #expect(error?.kind == .fileTooLarge)
        #expect(error?.description == "~/.ssh/config is larger than \(limit) bytes")
    }

    @Test func lineLength() throws {
        let limit = SSHConfigLimits.maxLineBytes
        let long = "User " + String(repeating: "u", count: limit - 5)
        #expect(try resolve([config: Array("\n\(long)\n".utf8)]).user.count == limit - 5)
        let error = failure([config: Array("\n\(long)u\n".utf8)])
        #expect(error?.kind == .lineTooLong)
        #expect(error?.location?.line == 2)
    }

    @Test func lineCount() throws {
        let limit = SSHConfigLimits.maxLinesPerFile
        #expect(
            try resolve([config: Array(String(repeating: "\n", count: limit - 1).utf8) + Array("User u".utf8)]).user
                == "u")
        let error = failure([config: Array(String(repeating: "\n", count: limit).utf8) + Array("User u".utf8)])
        #expect(error?.kind == .tooManyLines)
        #expect(error?.location?.line == limit + 1)
    }

    func included(_ count: Int, prefix: String = "f") -> [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("/home/me/.ssh/d/\(prefix)\($0)", Array("Port 2\n".utf8)) })
    }

    @Test func filesOneIncludeMatches() throws {
        let limit = SSHConfigLimits.maxIncludeMatches
        #expect(try resolve(included(limit).merging([config: Array("Include d/*\n".utf8)]) { $1 }).port == 2)
        let error = failure(included(limit + 1).merging([config: Array("Include d/*\n".utf8)]) { $1 })
        #expect(error?.kind == .tooManyIncludeMatches)
        #expect(error?.location?.line == 1)
    }

    @Test func filesRead() throws {
        // The config itself, then 255 + 256 included files: 512 reads.
        let limit = SSHConfigLimits.maxFilesRead
        var files = included(255, prefix: "a").merging(included(256, prefix: "b")) { $1 }
        files[config] = Array("Include d/a*\nInclude d/b*\n".utf8)
        #expect(try resolve(files).port == 2)
        files["/home/me/.ssh/d/a255"] = Array("\n".utf8)
        let error = failure(files)
        #expect(error?.kind == .tooManyFiles)
        #expect(error?.location?.line == 2)
        #expect(limit == 512)
    }

    @Test func bytesRead() throws {
        let limit = SSHConfigLimits.maxTotalBytes
        let size = SSHConfigLimits.maxFileBytes
        let count = limit / size
        var files: [String: [UInt8]] = [:]
        for index in 0..<count - 1 { files["/home/me/.ssh/d/\(index)"] = padded(size) }
        files[config] = Array("Include d/*\n".utf8) + padded(size - 12)
        #expect(try resolve(files).user == "u")
        files["/home/me/.ssh/d/x"] = [0x0A]
        #expect(failure(files)?.kind == .tooManyBytes)
    }

    @Test func includeDepthInMemory() throws {
        var files: [String: [UInt8]] = [config: Array("Include /i/1\n".utf8)]
        for level in 1...SSHConfigLimits.maxIncludeDepth {
            files["/i/\(level)"] = Array("Include /i/\(level + 1)\n".utf8)
        }
        #expect(try resolve(files).user == "me")
        files["/i/\(SSHConfigLimits.maxIncludeDepth + 1)"] = Array("User deep\n".utf8)
        let error = failure(files)
        #expect(error?.kind == .includeDepth)
        #expect(error?.location?.path == "/i/\(SSHConfigLimits.maxIncludeDepth)")
    }

    @Test func aFileIncludingItselfTwiceALineStopsAtTheDepthLimit() {
        #expect(failure([config: Array("Include config config\nInclude ~/.ssh/*\n".utf8)])?.kind == .includeDepth)
    }

    @Test func hostNameOnceExpanded() throws {
        let limit = SSHConfigLimits.maxHostNameBytes
        let alias = String(repeating: "a", count: 32)
        let exact = "HostName " + String(repeating: "%h", count: limit / 32) + "\n"
        #expect(try resolve([config: Array(exact.utf8)], alias: alias).hostname.count == limit)
        let over = "HostName " + String(repeating: "%h", count: limit / 32) + "x\n"
        let error = failure([config: Array(over.utf8)], alias: alias)
        #expect(error?.kind == .valueTooLong)
        #expect(error?.location?.line == 1)
    }

    @Test func identityFilePathOnceExpanded() throws {
        let limit = SSHConfigLimits.maxPathBytes
        let prefix = "/home/me/"
        let exact = "IdentityFile ~/" + String(repeating: "k", count: limit - prefix.count) + "\n"
        #expect(try resolve([config: Array(exact.utf8)]).identityFiles.first?.count == limit)
        let over = "IdentityFile ~/" + String(repeating: "k", count: limit - prefix.count + 1) + "\n"
        #expect(failure([config: Array(over.utf8)])?.kind == .valueTooLong)
    }

    @Test func identityFilesAreTheDifferentialSuitesToo() {
        #expect(SSHConfigLimits.maxIdentityFiles == 100)
        let many = (0...100).map { "IdentityFile /k\($0)\n" }.joined()
        let error = failure([config: Array(many.utf8)])
        #expect(error?.kind == .tooManyIdentityFiles)
        #expect(error?.location?.line == 101)
    }
}
