/// The two outputs: an aligned table for people, or one JSON document (`--json`).
enum Report {
    static func json(_ results: [ScenarioResult]) -> String {
        JSONValue.object([
            "schemaVersion": .int(1),
            "results": .array(results.map(\.json)),
        ]).text
    }

    static func table(_ results: [ScenarioResult]) -> String {
        let header = [
            "scenario", "ours (ms)", "baseline", "baseline (ms)", "ratio", "target", "moves", "minimal",
            "stages", "rows written", "rows read", "peak MB", "p50 / p99 ms", "fingerprint",
        ]
        let rightAligned: Set<Int> = [1, 3, 4, 6, 7, 8, 9, 10, 11, 12]
        var rows = [header]
        for r in results {
            func detail(_ key: String) -> String {
                switch r.details[key] {
                case .int(let value)?: return String(value)
                case .number(let value, let decimals)?: return Format.fixed(value, decimals: decimals)
                case .string(let value)?: return value
                default: return "–"
                }
            }
            rows.append([
                r.scenario,
                Format.fixed(r.oursMs, decimals: 3) + " (\(r.oursRuns))",
                r.baseline,
                Format.fixed(r.baselineMs, decimals: 1) + " (\(r.baselineRuns))",
                Format.ratio(r.ratio),
                r.targetAssessment,
                detail("moves"),
                detail("minimalMoves"),
                detail("stages"),
                detail("rowsWritten"),
                detail("rows"),
                detail("peakMemoryMB"),
                r.details["p50Ms"] == nil ? "–" : detail("p50Ms") + " / " + detail("p99Ms"),
                detail("fingerprint"),
            ])
        }
        var widths = [Int](repeating: 0, count: header.count)
        for row in rows { for (c, cell) in row.enumerated() { widths[c] = max(widths[c], cell.count) } }
        func line(_ row: [String]) -> String {
            row.enumerated().map { c, cell in
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                return rightAligned.contains(c) ? pad + cell : cell + pad
            }.joined(separator: " | ")
        }
        var out = [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")]
        out += rows.dropFirst().map(line)
        out.append("(ours and baseline: medians of the runs, warm-up + timed, unless a percentile is named; ratio = baseline / ours;"
            + " peak MB is the process peak while ours ran, inputs included; rows written / read and p50 / p99 latency by ours)")
        return out.joined(separator: "\n")
    }
}
