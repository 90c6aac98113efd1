import Foundation

/// What `herdr-bench web` runs inside the web client's page (through Playwright's evaluate, which
/// the page's CSP allows as it allows no inline script): observers of the terminal's screen that
/// time, in the page's own clock, a key's event against the screen's change it brings. "Shown" is
/// the DOM holding it (the next paint follows within a frame, 16.7 ms at 60 Hz), as the CLI's and
/// mosh's "shown" is the bytes written to their terminal.
enum WebPageProbe {
    /// Installs `globalThis.herdrProbe` on the terminal: each keydown on its keyboard waits for
    /// the screen to hold one more letter than it held before that key (a prediction counts: it
    /// is what the person sees); `results` the milliseconds, in order.
    static let installEcho = """
        () => {
          const screen = document.querySelector('#term .screen');
          const keyboard = document.querySelector('#term textarea');
          const letters = () => (screen.textContent.match(/[a-z]/g) ?? []).length;
          const probe = { base: letters(), typed: 0, pending: [], results: [] };
          keyboard.addEventListener('keydown', (event) => {
            if (event.key.length === 1) probe.pending.push({ at: event.timeStamp, want: ++probe.typed });
          }, { capture: true });
          new MutationObserver(() => {
            const count = letters() - probe.base;
            while (probe.pending.length > 0 && count >= probe.pending[0].want) {
              probe.results.push(performance.now() - probe.pending.shift().at);
            }
          }).observe(screen, { childList: true, subtree: true, characterData: true });
          globalThis.herdrProbe = probe;
          return probe.base;
        }
        """

    /// Waits (at most `seconds`) until the probe has `count` results; the last one, in ms.
    static func echoResult(_ count: Int, seconds: Double) -> String {
        """
        () => new Promise((resolve, reject) => {
          const started = performance.now();
          const check = () => {
            const probe = globalThis.herdrProbe;
            if (probe.results.length >= \(count)) return resolve(probe.results[\(count - 1)]);
            if (performance.now() - started > \(Int(seconds * 1000))) return reject(new Error('no echo of key \(count)'));
            setTimeout(check, 1);
          };
          check();
        })
        """
    }

    /// Installs `globalThis.herdrProbe` recording the page time of every change to the screen
    /// and the keydown of Ctrl-C.
    static let installChanges = """
        () => {
          const screen = document.querySelector('#term .screen');
          const keyboard = document.querySelector('#term textarea');
          const probe = { changes: [], interrupted: null, cut: null };
          keyboard.addEventListener('keydown', (event) => {
            if (event.ctrlKey && event.key === 'c') probe.interrupted = event.timeStamp;
          }, { capture: true });
          new MutationObserver(() => { probe.changes.push(performance.now()); })
            .observe(screen, { childList: true, subtree: true, characterData: true });
          globalThis.herdrProbe = probe;
          return true;
        }
        """

    /// Marks now as the instant the path was cut; returns it.
    static let markCut = "() => (globalThis.herdrProbe.cut = performance.now())"

    /// Waits (at most `seconds`) until `text` is on the screen after Ctrl-C and the screen has
    /// then been still for 2 s: `[prompt, still]`, ms after the Ctrl-C's keydown.
    static func promptAfterInterrupt(_ text: String, seconds: Double) -> String {
        """
        () => new Promise((resolve, reject) => {
          const screen = document.querySelector('#term .screen');
          const probe = globalThis.herdrProbe;
          let prompt = null;
          const check = () => {
            const now = performance.now();
            if (probe.interrupted === null) return reject(new Error('no Ctrl-C seen'));
            if (prompt === null && screen.textContent.includes(\(jsString(text)))) prompt = probe.changes.at(-1) ?? now;
            const last = probe.changes.at(-1) ?? 0;
            if (prompt !== null && now - last >= 2000) return resolve([prompt - probe.interrupted, last - probe.interrupted]);
            if (now - probe.interrupted > \(Int(seconds * 1000))) return reject(new Error('no prompt after Ctrl-C'));
            setTimeout(check, 5);
          };
          check();
        })
        """
    }

    /// Waits (at most `seconds`) for the first change of the screen `after` ms past the cut: its
    /// ms after the cut.
    static func changeAfterCut(after: Double, seconds: Double) -> String {
        """
        () => new Promise((resolve, reject) => {
          const probe = globalThis.herdrProbe;
          const check = () => {
            const next = probe.changes.find((at) => at > probe.cut + \(after));
            if (next !== undefined) return resolve(next - probe.cut);
            if (performance.now() - probe.cut > \(Int(seconds * 1000))) return reject(new Error('no screen after the cut'));
            setTimeout(check, 5);
          };
          check();
        })
        """
    }

    /// `text` as a JavaScript string literal.
    static func jsString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
