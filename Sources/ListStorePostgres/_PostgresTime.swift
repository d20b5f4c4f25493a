/// Times as the store writes them (ISO 8601 text in UTC with milliseconds, as `Store` does:
/// `2026-11-21T09:30:00.125Z`), taken from the server's clock.
enum _PostgresTime {
    /// An SQL expression for the current time in that form.
    static let now = #"to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#
}
