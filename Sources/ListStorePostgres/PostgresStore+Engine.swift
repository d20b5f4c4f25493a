import ListStore

extension PostgresStore: ListStoreEngine {}
