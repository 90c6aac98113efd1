import ScreenModel
import Testing

@testable import CompanionDevice
@testable import SessionProtocol

/// `connect --screen` on `DeviceConnectionMachine` alone with a fake clock: the attach is an
/// `open screen`, each complete screen is drawn and acknowledged, input lost with a path is sent
/// again after the resume's `screen started`, and the exit names the last screen.
@Suite struct DeviceScreenMachineTests {
    typealias Driver = DeviceMachineDriver

    static func update(_ stream: UInt32, state: UInt64, base: UInt64, text: String, input: UInt64 = 0) -> [UInt8] {
        let cells = text.map { ScreenCell(text: String($0)) }
        return SessionMessage.screen(
            ScreenUpdate(
                stream: stream, state: state, base: base, inputBytes: input, isLastPart: true, columns: 80, rows: 24,
                cursor: TerminalScreen.Cursor(row: 0, column: cells.count, visible: true), modes: ScreenModes(),
                bells: 0, scroll: 0, title: base == 0 ? "" : nil, lines: [ScreenUpdate.Row(index: 0, cells: cells)])
        ).bytes
    }

    static func drawn(_ actions: [Driver.Action]) -> [String] {
        actions.compactMap { if case .draw(let frame) = $0 { frame.screen.text(ofRow: 0) } else { nil } }
    }

    @Test func aScreenSessionIsOpenedDrawnAcknowledgedResumedAndEnded() {
        var driver = Driver { $0.screen = true }
        let id = driver.connect()
        #expect(
            Driver.sessionSent(driver.log) == [
                .openScreen(stream: 1, target: .session(name: "main"), cols: 80, rows: 24)
            ])
        let started = driver.computer(
            id, [SessionMessage.screenStarted(stream: 1, token: Driver.token, inputReceived: 0).bytes])
        #expect(Driver.events(started) == [.started])

        let first = driver.computer(id, [Self.update(1, state: 1, base: 0, text: "$ ")])
        #expect(Self.drawn(first) == ["$"])
        #expect(Driver.sessionSent(first) == [.screenAck(stream: 1, state: 1)], "acknowledged as soon as complete")

        // Typed, and the path dies before the computer says it got it all.
        driver.advance(1)
        let typed = driver.handle(.keys(Array("ls".utf8)))
        #expect(Driver.input(typed) == Array("ls".utf8))
        driver.computer(id, Driver.pings(typed).map { CompanionMessage.pong($0).bytes })
        driver.advance(3)
        let drop = driver.handle(.ended(id, .unavailable("reset")))
        let resumed = driver.arrive(drop)
        let second = driver.machine.link!.id
        #expect(
            Driver.sessionSent(resumed) == [.resumeScreen(stream: 2, token: Driver.token, cols: 80, rows: 24)])
        var sent = driver.computer(
            second, [SessionMessage.screenStarted(stream: 2, token: Driver.token, inputReceived: 1).bytes])
        #expect(Driver.events(sent) == [.resumed])
        sent += driver.advance(0.1)
        #expect(Driver.input(sent) == Array("s".utf8), "the byte the computer missed goes again")

        // The resume's first state is whole; a change of a state this side lacks breaks the session.
        #expect(Self.drawn(driver.computer(second, [Self.update(2, state: 5, base: 0, text: "$ ls")])) == ["$ ls"])
        let ended = driver.computer(
            second, [SessionMessage.exit(stream: 2, end: 5, status: 0, signal: nil).bytes])
        #expect(Driver.finish(ended) == .exited(status: 0, signal: nil))
        #expect(Driver.sessionSent(ended).contains(.close(stream: 2)))
    }

    @Test func aComputerThatServesNoScreensIsToldBeforeAnythingIsSent() {
        var driver = Driver { $0.screen = true }
        let id = Driver.attempts(in: driver.handle(.start))[0].id
        let arrived = driver.handle(
            .attemptEnded(id, .success(.init(road: Driver.relay, registeredNow: false, servesScreenSessions: false))))
        #expect(Driver.sent(arrived).isEmpty && arrived.contains(.close(id)))
        guard case .failed(let failure) = Driver.finish(arrived) else {
            Issue.record("not ended: \(arrived)")
            return
        }
        #expect(failure.kind == .sessionRefused && failure.message.contains("without --screen"))
    }

    @Test func aComputerThatBreaksTheScreensIsTold() {
        var driver = Driver { $0.screen = true }
        let id = driver.connect()
        driver.computer(id, [SessionMessage.screenStarted(stream: 1, token: Driver.token, inputReceived: 0).bytes])
        let wrongBase = driver.computer(id, [Self.update(1, state: 2, base: 1, text: "x")])
        guard case .failed(let failure) = Driver.finish(wrongBase) else {
            Issue.record("not ended: \(wrongBase)")
            return
        }
        #expect(failure.kind == .protocolViolation && failure.message.contains("state 1"), "\(failure.message)")

        var bytes = Driver { $0.screen = true }
        let other = bytes.connect()
        let output = bytes.computer(
            other,
            [
                SessionMessage.screenStarted(stream: 1, token: Driver.token, inputReceived: 0).bytes,
                SessionMessage.output(stream: 1, offset: 0, data: [0x61]).bytes,
            ])
        #expect(
            Driver.finish(output).map { if case .failed(let f) = $0 { f.kind == .protocolViolation } else { false } }
                == true)
    }
}
