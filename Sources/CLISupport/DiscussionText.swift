/// A command's discussion cut into paragraphs, the same way for `--help` and the manual.
enum DiscussionText {
    enum Paragraph: Equatable {
        /// Running text, its lines joined with spaces; the renderer wraps or fills it.
        case prose(String)
        /// Lines kept as written (an example, a table): some of them start with whitespace.
        case verbatim([String])
    }

    /// Blank-line separated paragraphs; one with a line that starts with whitespace is verbatim.
    static func paragraphs(_ text: String) -> [Paragraph] {
        var paragraphs: [[Substring]] = [[]]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                if !(paragraphs.last ?? []).isEmpty { paragraphs.append([]) }
            } else {
                paragraphs[paragraphs.count - 1].append(line)
            }
        }
        return paragraphs.filter { !$0.isEmpty }.map { lines in
            if lines.contains(where: { $0.first == " " || $0.first == "\t" }) {
                return .verbatim(lines.map(String.init))
            }
            return .prose(lines.joined(separator: " "))
        }
    }
}
