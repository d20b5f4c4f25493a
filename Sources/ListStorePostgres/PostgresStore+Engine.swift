import ListStoreCore

extension PostgresStore: ListStoreEngine {}
