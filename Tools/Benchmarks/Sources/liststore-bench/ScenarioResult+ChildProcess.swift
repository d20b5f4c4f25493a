import Foundation

/// Each scenario runs in a child process of its own, so that one scenario's heap (a baseline that
/// allocated gigabytes, say) does not slow down or inflate the next one: every scenario starts from
/// the same fresh process, and its peak memory is its own. The child prints its result in a small
/// line format on stdout; the parent collects the results and prints the report.
extension ScenarioResult {
    /// The argument that makes the benchmark run one scenario and print its result for the parent.
    static let childFlag = "--child-result"

    /// The result as tab-separated lines: `field<TAB>value` and `detail<TAB>key<TAB>kind<TAB>value`.
    var childEncoding: String {
        var lines = [
            "scenario\t\(scenario)", "oursMs\t\(oursMs)", "baseline\t\(baseline)", "baselineMs\t\(baselineMs)",
            "oursRuns\t\(oursRuns)", "baselineRuns\t\(baselineRuns)",
        ]
        for failure in failures { lines.append("failure\t\(failure)") }
        for (key, value) in details.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .int(let n): lines.append("detail\t\(key)\tint\t\(n)")
            case .number(let x, let decimals): lines.append("detail\t\(key)\tnumber\(decimals)\t\(x)")
            case .string(let s): lines.append("detail\t\(key)\tstring\t\(s)")
            default: break
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Decodes `childEncoding`; the target comes from the scenario registry.
    init?(childEncoding text: String) {
        var fields: [String: String] = [:]
        var details: [String: JSONValue] = [:]
        var failures: [String] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch parts.first {
            case "detail" where parts.count == 4:
                if parts[2] == "int", let n = Int(parts[3]) {
                    details[parts[1]] = .int(n)
                } else if parts[2].hasPrefix("number"), let d = Int(parts[2].dropFirst(6)), let x = Double(parts[3]) {
                    details[parts[1]] = .number(x, decimals: d)
                } else {
                    details[parts[1]] = .string(parts[3])
                }
            case "failure" where parts.count == 2:
                failures.append(parts[1])
            case let key? where parts.count == 2:
                fields[key] = parts[1]
            default:
                continue
            }
        }
        guard let name = fields["scenario"], let scenario = Scenario.named(name),
              let ours = fields["oursMs"].flatMap(Double.init), let baselineMs = fields["baselineMs"].flatMap(Double.init)
        else { return nil }
        self.init(
            scenario: name, oursMs: ours, baseline: fields["baseline"] ?? "", baselineMs: baselineMs,
            target: scenario.target, details: details, oursRuns: fields["oursRuns"] ?? "",
            baselineRuns: fields["baselineRuns"] ?? "", failures: failures)
    }

    /// This executable, for child processes.
    static var executableURL: URL {
        #if canImport(Darwin)
        Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        #else
        URL(fileURLWithPath: "/proc/self/exe")
        #endif
    }

    /// Runs `scenario` in a child process of this executable and returns its result.
    static func runInChildProcess(_ scenario: Scenario) throws(ScenarioFailure) -> ScenarioResult {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = [scenario.name, childFlag]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw ScenarioFailure(scenario: scenario.name, message: "could not start a child process: \(error)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let result = ScenarioResult(childEncoding: String(decoding: data, as: UTF8.self)) else {
            throw ScenarioFailure(scenario: scenario.name, message: "the child process ended with status \(process.terminationStatus) and no result")
        }
        return result
    }
}
