import Foundation

/// `--exec CMD` as the words of a command line, split the way a shell splits words and nothing
/// more: spaces separate words, `'…'` keeps everything literal, `"…"` keeps all but `\"`, `\\`,
/// `\$` and `` \` ``, and a backslash outside quotes keeps the next character. No variable, glob,
/// pipe or redirection is expanded: the command runs without a shell. For those, CMD is a shell
/// line itself: `sh -c '…'`. Pure.
enum CommandWords {
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func split(_ line: String) throws(Problem) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Problem(description: "a ' is not closed") }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw Problem(description: "a \" is not closed") }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw Problem(description: "a \" is not closed") }
                        if !"\"\\$`".contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                inWord = true
                guard let escaped = characters.next() else { throw Problem(description: "it ends with a \\") }
                word.append(escaped)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        guard !words.isEmpty else { throw Problem(description: "it names no command") }
        return words
    }

    /// The program a command's first word names: a path as it is, else the first executable file
    /// of that name on `path` (`PATH`'s directories); nil when there is none.
    static func program(_ name: String, path: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(name)"
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }
}
