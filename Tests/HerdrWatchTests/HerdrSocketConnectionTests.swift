import Foundation
import Glibc
import HerdrAgents
import Synchronization
import TestSupport
import Testing

@testable import HerdrWatch

/// The socket client against real Unix sockets: every way a server can fail to answer is a
/// failure naming it, within the time limit, never a wait.
@Suite struct HerdrSocketConnectionTests {
    static let pong = #"{"id":"herdr-host","result":{"type":"pong","version":"0.9","protocol":20}}"#

    @Test func aServerThatAnswersIsRead() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let server = try ScriptedHerdrSocket(path: directory.file("herdr.sock").path) { request in
            request.contains("\"ping\"")
                ? .lines(#"{"event":"pane.created","data":{}}"#, Self.pong)
                : .lines(
                    #"{"id":"herdr-host","result":{"type":"agent_list","agents":[{"pane_id":"w1:p1","agent_status":"done"}]}}"#
                )
        }
        defer { server.stop() }
        #expect(try HerdrSocketConnection.request(.ping, socket: server.path, timeout: 5).get() == .pong(protocol: 20))
        #expect(
            try HerdrSocketConnection.request(.agentList, socket: server.path, timeout: 5).get()
                == .agents([HerdrAgentInfo(pane: "w1:p1", status: .done)], unread: 0))
    }

    @Test func noServerIsNotRunning() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let missing = HerdrSocketConnection.request(.ping, socket: directory.file("none.sock").path, timeout: 5)
        #expect(missing.failure?.kind == .notRunning)
        // A socket file nobody listens on (a server that died without removing it).
        let stale = directory.file("stale.sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(stale.utf8) + [0]) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        let refused = HerdrSocketConnection.request(.ping, socket: stale, timeout: 5)
        #expect(refused.failure?.kind == .notRunning)
        #expect(refused.failure?.detail == "herdr is not running (nothing listens on its socket)")
        let long = "/tmp/" + String(repeating: "x", count: 120)
        #expect(HerdrSocketConnection.request(.ping, socket: long, timeout: 5).failure?.kind == .system)
    }

    @Test func aServerThatNeverAnswersRunsOutOfTime() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let server = try ScriptedHerdrSocket(path: directory.file("herdr.sock").path) { _ in .silence }
        defer { server.stop() }
        let result = HerdrSocketConnection.request(.ping, socket: server.path, timeout: 0.3)
        #expect(result.failure?.kind == .timedOut)
        #expect(result.failure?.detail == "accepted the connection and did not answer ping in time")
        #expect(result.failure?.sessionState == .unresponsive)
    }

    @Test func garbageAndLinesPastTheBoundAreFailing() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let garbage = try ScriptedHerdrSocket(path: directory.file("garbage.sock").path) { _ in
            Reply(bytes: [0x00, 0xFF, 0xFE] + Array(" not json\n".utf8))
        }
        defer { garbage.stop() }
        let result = HerdrSocketConnection.request(.ping, socket: garbage.path, timeout: 5)
        #expect(result.failure?.detail == "answered ping with a line that is not a JSON object")
        #expect(result.failure?.sessionState == .failing)

        let huge = try ScriptedHerdrSocket(path: directory.file("huge.sock").path) { _ in
            Reply(bytes: [UInt8](repeating: 0x20, count: HerdrJSON.maximumLineBytes + 4096))
        }
        defer { huge.stop() }
        let past = HerdrSocketConnection.request(.agentList, socket: huge.path, timeout: 10)
        #expect(past.failure?.detail == "sent a line of more than 8 MiB")

        let chatty = try ScriptedHerdrSocket(path: directory.file("chatty.sock").path) { _ in
            Reply(bytes: Array(String(repeating: #"{"event":"pane.created","data":{}}"# + "\n", count: 100).utf8))
        }
        defer { chatty.stop() }
        let talk = HerdrSocketConnection.request(.ping, socket: chatty.path, timeout: 5)
        #expect(talk.failure?.detail == "sent 64 lines without answering ping")

        let closing = try ScriptedHerdrSocket(path: directory.file("closing.sock").path) { _ in Reply(bytes: []) }
        defer { closing.stop() }
        #expect(
            HerdrSocketConnection.request(.ping, socket: closing.path, timeout: 5).failure?.detail
                == "closed the connection")
    }

    @Test func aSubscriptionReportsItsStartItsEventsAndItsEnd() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let server = try ScriptedHerdrSocket(path: directory.file("herdr.sock").path) { request in
            guard request.contains("events.subscribe"), request.contains("w1:p1") else { return .silence }
            return .lines(
                #"{"id":"herdr-host-events","result":{"type":"subscription_started"}}"#,
                #"{"event":"pane.agent_status_changed","data":{"pane_id":"w1:p1","agent_status":"blocked"}}"#)
        }
        defer { server.stop() }
        let events = EventLog()
        let subscription = HerdrSubscriptionThread(socket: server.path, panes: ["w1:p1"], timeout: 5) { events.add($0) }
        #expect(events.wait(count: 3))
        #expect(
            events.all == [
                .started, .event(.statusChanged(pane: "w1:p1", status: .blocked, kind: nil, title: nil)),
                .ended(HerdrRequestFailure(.malformed, "closed the connection")),
            ])
        subscription.cancel()
    }

    @Test func aCancelledSubscriptionEndsWithoutAWord() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let server = try ScriptedHerdrSocket(path: directory.file("herdr.sock").path) { _ in
            Reply(
                bytes: Array((#"{"id":"herdr-host-events","result":{"type":"subscription_started"}}"# + "\n").utf8),
                holdOpen: true)
        }
        defer { server.stop() }
        let events = EventLog()
        let subscription = HerdrSubscriptionThread(socket: server.path, panes: [], timeout: 5) { events.add($0) }
        #expect(events.wait(count: 1))
        subscription.cancel()
        // The server sees the connection closed, and nothing was reported of it.
        #expect(waitUntil { server.clientHangUps == 1 })
        #expect(events.all == [.started])
    }

    @Test func aSubscriptionThatNeverStartsRunsOutOfTime() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-socket-")
        let server = try ScriptedHerdrSocket(path: directory.file("herdr.sock").path) { _ in .silence }
        defer { server.stop() }
        let events = EventLog()
        _ = HerdrSubscriptionThread(socket: server.path, panes: [], timeout: 0.3) { events.add($0) }
        #expect(events.wait(count: 1))
        #expect(
            events.all == [
                .ended(
                    HerdrRequestFailure(
                        .timedOut, "accepted the connection and did not answer events.subscribe in time"))
            ])
    }
}

typealias Reply = ScriptedHerdrSocket.Reply

/// What a subscription reported, waited on by count.
final class EventLog: Sendable {
    private let events = Mutex<[HerdrWatcher.SubscriptionEvent]>([])

    func add(_ event: HerdrWatcher.SubscriptionEvent) { events.withLock { $0.append(event) } }
    var all: [HerdrWatcher.SubscriptionEvent] { events.withLock { $0 } }

    /// Whether `count` events came within `timeout` seconds.
    func wait(count: Int, timeout: Double = 10) -> Bool { waitUntil(timeout: timeout) { all.count >= count } }
}

/// Whether `condition` held within `timeout` seconds (looked at every 10 ms).
func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
