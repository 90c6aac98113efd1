import Glibc
import Testing

@testable import CLISupport

extension InProcessTerminalTests {
    @Suite struct RawTerminalModeTests {
        @Test func enterSwitchesTheSlaveToRawMode() throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            #expect(original.has(lflag: ECHO) && original.has(lflag: ICANON) && original.has(lflag: ISIG))
            let raw = try RawTerminalMode.enter(fd: pty.slave)
            defer { raw.restore() }
            let now = try pty.snapshot()
            #expect(!now.has(lflag: ECHO))
            #expect(!now.has(lflag: ICANON))
            #expect(!now.has(lflag: ISIG))
            #expect(!now.has(lflag: IEXTEN))
            #expect(now.oflag & tcflag_t(OPOST) == 0)
            #expect(now.iflag & tcflag_t(ICRNL | IXON) == 0)
            #expect(now.cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
            #expect(now.cc[Int(VMIN)] == 1)
            #expect(now.cc[Int(VTIME)] == 0)
            #expect(raw.isActive)
            #expect(TermiosSnapshot(raw.savedAttributes) == original)
        }

        @Test func restoreBringsBackTheExactOriginalAndIsIdempotent() throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            let raw = try RawTerminalMode.enter(fd: pty.slave)
            raw.restore()
            #expect(try pty.snapshot() == original)
            #expect(!raw.isActive)
            // A second restore must not touch the terminal again: change it, restore, and the change stays.
            var changed = termios()
            tcgetattr(pty.slave, &changed)
            changed.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(pty.slave, TCSANOW, &changed)
            raw.restore()
            #expect(try !pty.snapshot().has(lflag: ECHO))
        }

        @Test func deinitRestores() throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            do {
                let raw = try RawTerminalMode.enter(fd: pty.slave)
                #expect(try !pty.snapshot().has(lflag: ICANON))
                _ = raw
            }
            #expect(try pty.snapshot() == original)
        }

        @Test func emergencyRestoreLeavesTheOldestStateWhenEnteredTwice() throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            let outer = try RawTerminalMode.enter(fd: pty.slave)
            let inner = try RawTerminalMode.enter(fd: pty.slave)  // saves the raw state
            // What the signal handler and the atexit hook do.
            ProcessSignalRegistry.restoreAllTerminals()
            #expect(try pty.snapshot() == original)
            inner.restore()
            outer.restore()
            #expect(try pty.snapshot() == original)
        }

        @Test func enterOnANonTerminalFailsWithENOTTY() throws {
            let pipe = try makePipe()
            defer {
                close(pipe.read)
                close(pipe.write)
            }
            #expect(throws: SystemError("tcgetattr", code: ENOTTY)) { try RawTerminalMode.enter(fd: pipe.read) }
        }

        @Test func makeRawMatchesCfmakeraw() {
            var cooked = termios()
            cooked.c_lflag = tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
            cooked.c_oflag = tcflag_t(OPOST | ONLCR)
            var expected = cooked
            cfmakeraw(&expected)
            #expect(TermiosSnapshot(RawTerminalMode.makeRaw(cooked)) == TermiosSnapshot(expected))
        }

        @Test func windowSizeAndIsTerminal() throws {
            let pty = try PseudoTerminal()
            #expect(RawTerminalMode.windowSize(fd: pty.slave) == nil)  // nobody sized it yet
            var size = winsize(ws_row: 43, ws_col: 132, ws_xpixel: 0, ws_ypixel: 0)
            #expect(ioctl(pty.master, UInt(TIOCSWINSZ), &size) == 0)
            let measured = try #require(RawTerminalMode.windowSize(fd: pty.slave))
            #expect(measured.cols == 132 && measured.rows == 43)
            let pipe = try makePipe()
            defer {
                close(pipe.read)
                close(pipe.write)
            }
            #expect(RawTerminalMode.windowSize(fd: pipe.read) == nil)
            #expect(RawTerminalMode.isTerminal(fd: pty.slave))
            #expect(!RawTerminalMode.isTerminal(fd: pipe.read))
        }
    }
}
