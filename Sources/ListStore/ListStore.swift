// `import ListStore` is all an app needs for its local store: the embedded store (`Store`), every
// type of the store contract (ListStoreCore), the staged diff's types its values are made of
// (`ArraySection`, `ElementPath`, `StagedChangeset`: ListDiff), the JSON values of items' contents
// (`JSONValue`, `ExactString`: ListJSON) and the conflicts of offline writes (`Conflict`: ListMerge).
@_exported import ListDiff
@_exported import ListJSON
@_exported import ListMerge
@_exported import ListStoreCore
