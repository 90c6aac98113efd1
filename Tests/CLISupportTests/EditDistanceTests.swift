import Testing

@testable import CLISupport

@Suite struct EditDistanceTests {
    @Test func distances() {
        #expect(EditDistance.distance("prot", "port") == 1)  // adjacent swap
        #expect(EditDistance.distance("port", "port") == 0)
        #expect(EditDistance.distance("", "abc") == 3)
        #expect(EditDistance.distance("kitten", "sitting") == 3)
        #expect(EditDistance.distance("usr", "user") == 1)
    }

    @Test func suggestions() {
        #expect(EditDistance.closest(to: "prot", among: ["user", "port"]) == "port")
        #expect(EditDistance.closest(to: "verbos", among: ["verbose", "version"]) == "verbose")
        #expect(EditDistance.closest(to: "x", among: ["y"]) == nil)  // never a 1-letter guess
        #expect(EditDistance.closest(to: "connect", among: ["add", "list"]) == nil)
    }
}
