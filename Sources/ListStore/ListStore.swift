// `import ListStore` gives the embedded store (`Store`) with every type of the store contract.
@_exported import ListStoreCore
