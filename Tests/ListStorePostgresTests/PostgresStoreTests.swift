import Testing
@testable import ListStorePostgres
