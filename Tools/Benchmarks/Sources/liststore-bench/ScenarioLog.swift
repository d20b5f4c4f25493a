/// Progress lines and failures of one running scenario, prefixed with its name.
struct ScenarioLog: Sendable {
    var scenario: String

    func progress(_ text: String) {
        StandardError.line("\(scenario): \(text)")
    }

    /// A failure of this scenario, also printed as progress.
    func failure(_ message: String) -> ScenarioFailure {
        progress(message)
        return ScenarioFailure(scenario: scenario, message: message)
    }

    /// Runs `body`; an error it throws becomes a `ScenarioFailure` saying what was being done.
    func attempt<T>(_ what: String, _ body: () throws -> T) throws(ScenarioFailure) -> T {
        do {
            return try body()
        } catch {
            throw failure("\(what) failed: \(error)")
        }
    }
}
