import Logging

/// The server's log handler around the one it is given: metadata set on the logger is kept here and
/// handed on only with a message written. Hummingbird tags every request's logger with an id, and
/// `StreamLogHandler` formats all its metadata each time any is set, a measurable part of a long
/// poll's cost even when nothing is logged.
struct DeferredMetadataLogHandler: LogHandler {
    private var wrapped: any LogHandler
    /// The logger's metadata: the wrapped handler's own, taken over at `init`, and what was set since.
    var metadata: Logger.Metadata

    /// Takes over `handler` and its metadata, emptied in a value handler (this wrapper's own copy);
    /// an object handler may be shared with other loggers, and is left as it is.
    init(wrapping handler: any LogHandler) {
        var handler = handler
        metadata = handler.metadata
        if !(type(of: handler) is AnyClass) { handler.metadata = [:] }
        wrapped = handler
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` through the wrapped handler, with the logger's metadata in the order swift-log's
    /// handlers give it: the logger's own, under the metadata provider's, under the event's.
    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            var all = metadata
            if let provided = metadataProvider?.get(), !provided.isEmpty {
                all.merge(provided) { _, provided in provided }
            }
            if let own = event.metadata { all.merge(own) { _, own in own } }
            event.metadata = all
        }
        wrapped.log(event: event)
    }
}

extension Logger {
    /// This logger, its handler wrapped in a `DeferredMetadataLogHandler`.
    var deferringMetadata: Logger {
        let handler = DeferredMetadataLogHandler(wrapping: handler)
        return Logger(label: label) { _ in handler }
    }
}
